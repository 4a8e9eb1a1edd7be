package corefile

import (
	"fmt"
	"io"
	"strings"
)

// Write prints the plan for people: one line per Corefile line that says
// something, then the daemons' flags, the host entries, and the verdict.
func (p *Plan) Write(w io.Writer) error {
	var b strings.Builder
	for _, it := range p.Items {
		fmt.Fprintf(&b, "%s:%d: %-7s %s: %s\n", p.File, it.Line, it.Verdict, it.Words, it.Text)
	}
	for _, daemon := range []string{"skydns", "kube2sky"} {
		if flags := p.Flags(daemon); len(flags) > 0 {
			fmt.Fprintf(&b, "%s flags: %s\n", daemon, strings.Join(flags, " "))
		}
	}
	if p.Hosts != "" {
		b.WriteString("hosts ConfigMap data (kube2sky --hosts-configmap):\n")
		for _, line := range strings.SplitAfter(strings.TrimSuffix(p.Hosts, "\n"), "\n") {
			b.WriteString("  " + line)
		}
		b.WriteString("\n")
	}
	if err := p.Err(); err != nil {
		fmt.Fprintf(&b, "refused: %v\n", err)
	} else {
		fmt.Fprintf(&b, "usable as is: kubesky does what %s asks, less what it ignores\n", p.File)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
