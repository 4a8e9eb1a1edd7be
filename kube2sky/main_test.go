package kube2sky

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind:
// controllers, informers, sessions and workers must all stop with Run.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
