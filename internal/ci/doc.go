// Package ci tests the rules of .ci/run that live in .ci/steps.sh: every step timed and listed
// in the table at the end, a failed step stopping the run, a background command awaited, and the
// watchdog that stops a run past its time limit and names the slowest steps. The package has no
// code of its own; the shell library is what runs in CI.
package ci
