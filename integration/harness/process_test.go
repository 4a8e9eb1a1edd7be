package harness

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// shell starts a /bin/sh script as a Process.
func shell(t *testing.T, script string, stopTimeout time.Duration) *Process {
	t.Helper()
	return StartProcess(t, ProcessSpec{Name: "sh", Path: "/bin/sh", Args: []string{"-c", script}, StopTimeout: stopTimeout})
}

func TestStopEscalatesToSIGKILL(t *testing.T) {
	p := shell(t, "trap '' TERM; echo READY; while :; do sleep 0.05; done", 200*time.Millisecond)
	p.WaitForLog("READY", 5*time.Second)

	p.Stop()

	exited, err := p.Exited()
	if !exited || err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("after Stop: exited=%v err=%v, want killed", exited, err)
	}
}

func TestStartAgainAppendsToLog(t *testing.T) {
	p := shell(t, "echo RUN-$$; exec sleep 60", 0)
	p.WaitForLog("RUN-", 5*time.Second)
	p.Kill()
	p.Start()

	Eventually(t, 5*time.Second, func() error {
		if n := strings.Count(p.tail(), "\nRUN-"); n != 2 {
			return errors.New("want two runs in the log")
		}
		return nil
	})
}

func TestPIDAndLogLineNameTheCurrentRun(t *testing.T) {
	p := shell(t, "echo PID-$$ first; echo PID-$$ second; exec sleep 60", 0)
	p.WaitForLog("second", 5*time.Second)

	line, ok := p.LogLine("PID-")
	if want := fmt.Sprintf("PID-%d first", p.PID()); !ok || line != want {
		t.Fatalf("LogLine(PID-) = %q, %v; want %q", line, ok, want)
	}
	if line, ok := p.LogLine("no such text"); ok {
		t.Fatalf("LogLine(no such text) = %q, want none", line)
	}
}

func TestPollStopsOnPermanent(t *testing.T) {
	calls := 0
	err := Poll(time.Minute, func() error {
		calls++
		return Permanent(errors.New("gone"))
	})
	if err == nil || err.Error() != "gone" || calls != 1 {
		t.Fatalf("Poll = %v after %d calls, want gone after 1", err, calls)
	}
}
