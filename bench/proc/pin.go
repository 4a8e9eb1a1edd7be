package proc

import "strconv"

// Pin returns argv run by taskset on cpu, or argv itself when cpu is
// negative. taskset execs the command, so the process id is the
// command's own.
func Pin(cpu int, argv []string) []string {
	if cpu < 0 {
		return argv
	}
	return append([]string{"taskset", "-c", strconv.Itoa(cpu)}, argv...)
}
