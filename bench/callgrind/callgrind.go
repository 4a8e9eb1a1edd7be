// Package callgrind counts the instructions a running process executes, with
// valgrind's callgrind tool: start the process under Command, Zero its
// counters, do the work, then Dump them and read the total. Counting is
// repeatable to the instruction where wall-clock measurements on a shared
// machine are not.
//
// Go programs need GODEBUG=asyncpreemptoff=1 under callgrind (Env does
// that): valgrind 3.19's callgrind asserts on the SIGURG signals Go uses for
// preemption, and on SIGTERM, so a process is never stopped by a signal
// before its counters are dumped: dump with callgrind_control, then kill.
// Env also turns off Go's use of RDTSCP (cpu.rdtscp=off), an instruction
// valgrind 3.19 cannot decode: the runtime times a contended lock with it,
// and the program dies of SIGILL the first time one is.
package callgrind

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Env is the environment a Go program needs to run under callgrind.
var Env = []string{"GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off"}

// Command returns argv run under callgrind, writing its dumps to out.N.
func Command(out string, argv ...string) []string {
	return append([]string{"valgrind", "--tool=callgrind", "--callgrind-out-file=" + out}, argv...)
}

// Zero resets the counters of the callgrind process pid.
func Zero(ctx context.Context, pid int) error {
	return control(ctx, "-z", pid)
}

// Dump writes the counters of the process pid, resets them, and returns
// the instructions counted since the last Zero or Dump. out is the
// --callgrind-out-file given to Command; part counts the dumps, from 1.
func Dump(ctx context.Context, pid int, out string, part int) (uint64, error) {
	if err := control(ctx, "-d", pid); err != nil {
		return 0, err
	}
	path := out + "." + strconv.Itoa(part)
	for {
		if n, err := ReadTotal(path); err == nil {
			return n, nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("waiting for callgrind dump %s: %w", path, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func control(ctx context.Context, flag string, pid int) error {
	out, err := exec.CommandContext(ctx, "callgrind_control", flag, strconv.Itoa(pid)).CombinedOutput()
	if err == nil && strings.Contains(string(out), "Error") { // it exits 0 for a missing process
		err = errors.New("failed")
	}
	if err != nil {
		return fmt.Errorf("callgrind_control %s %d: %w: %s", flag, pid, err, out)
	}
	return nil
}

// ReadTotal reads the instruction total of a complete callgrind dump.
func ReadTotal(path string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return parseTotal(f)
}

// parseTotal finds the "totals:" line callgrind writes last, so a dump
// still being written has none, and returns its first event, the
// instructions.
func parseTotal(r io.Reader) (uint64, error) {
	var found string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "totals:") {
			found = line
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if found == "" {
		return 0, fmt.Errorf("no totals line (an incomplete dump?)")
	}
	_, value, _ := strings.Cut(found, ":")
	fields := strings.Fields(value)
	if len(fields) == 0 {
		return 0, fmt.Errorf("empty totals line")
	}
	return strconv.ParseUint(fields[0], 10, 64)
}
