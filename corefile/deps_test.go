package corefile

import (
	"os/exec"
	"strings"
	"testing"
)

// skydns imports this package for --corefile: it must not bring the
// Kubernetes API types or client into skydns's binary.
func TestTheReaderLinksNoKubernetesPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "k8s.io/") {
			t.Errorf("package corefile links %s", dep)
		}
	}
}
