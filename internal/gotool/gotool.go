// Package gotool runs the go command from tests that build a program (a daemon to start, a
// helper to run under valgrind), in the one build flavour of every non-race build of the
// project: static (CGO_ENABLED=0), as `make build` and the images build the binaries.
//
// A test of the race run inherits CGO_ENABLED=1 (the race detector needs cgo); a go build it
// started with that environment would compile every dependency once more, in a flavour no
// other step of CI uses.
package gotool

import (
	"os"
	"os/exec"
)

// Command returns `go args...` with CGO_ENABLED=0 and the rest of the test's environment
// (GOFLAGS among it, so -trimpath set by the Makefile applies too).
func Command(args ...string) *exec.Cmd {
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd
}
