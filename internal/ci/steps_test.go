package ci

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runSteps runs script after sourcing .ci/steps.sh with the given environment, and returns
// its combined output and exit status.
func runSteps(t *testing.T, env []string, script string) (string, int) {
	t.Helper()
	lib, err := filepath.Abs("../../.ci/steps.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", "set -euo pipefail; source "+lib+"\n"+script)
	cmd.Env = append(env, "PATH=/usr/local/bin:/usr/bin:/bin", "CI_WATCH_INTERVAL=0.1")
	out, err := cmd.CombinedOutput()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// mustContain checks out for each of wants, and that the table of steps is printed once: by the
// run itself, not by each subshell a step runs in.
func mustContain(t *testing.T, out string, wants ...string) {
	t.Helper()
	if n := strings.Count(out, "== CI steps"); n != 1 {
		t.Errorf("the table is printed %d times:\n%s", n, out)
	}
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestEveryStepIsTimedAndListedAtTheEnd(t *testing.T) {
	out, code := runSteps(t, nil, `
step "a quick step" 1 true
step "a slow step" 0 sleep 1.2
skip "a cluster" "not root"
`)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	table := out[strings.Index(out, "== CI steps"):]
	mustContain(t, table, "a quick step", "a slow step", "ok, OVER BUDGET",
		"a cluster", "skipped: not root", "total", "slowest: a slow step (0:0")
}

func TestAFailedStepStopsTheRunWithItsStatus(t *testing.T) {
	out, code := runSteps(t, nil, `
step "breaks" 1 false
step "never runs" 1 true
`)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	mustContain(t, out, "!! step failed: breaks (exit 1)", "FAILED (1)")
	if strings.Contains(out, "never runs") {
		t.Errorf("the step after a failure ran:\n%s", out)
	}
}

func TestABackgroundCommandIsAwaitedWithItsOutputAndStatus(t *testing.T) {
	out, code := runSteps(t, nil, `
background tools bash -c 'echo built the tools; exit 0'
step "in front" 1 true
await tools 1
background broken bash -c 'echo half built; exit 3'
await broken 1
`)
	if code != 3 {
		t.Errorf("exit %d, want 3 (the failed background command's):\n%s", code, out)
	}
	mustContain(t, out, "built the tools", "tools (background)", "exit 0", "half built",
		"!! step failed: broken: wait (exit 3)")
	if slowest := out[strings.LastIndex(out, "slowest:"):]; strings.Contains(slowest, "(background)") {
		t.Errorf("a background command is named among the slowest steps: %s", slowest)
	}
}

func TestTheWatchdogWarnsThenStopsARunPastItsLimit(t *testing.T) {
	out, code := runSteps(t, []string{"CI_WARN_SECONDS=1", "CI_STOP_SECONDS=2"}, `
step "quick" 1 true
step "hangs" 1 sleep 30
step "never runs" 1 true
`)
	if code == 0 {
		t.Fatalf("a run past its limit passed:\n%s", out)
	}
	mustContain(t, out, "past the 0:01 warning line (step: hangs)",
		"!! CI stopped after 0:", "in step: hangs", "!! slowest steps: hangs", "KILLED")
	if strings.Contains(out, "never runs") {
		t.Errorf("a step ran after the stop:\n%s", out)
	}
}
