package contract

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPurePackagesLinkNoEtcdClient keeps the contract and the packages that
// compute records and answers free of I/O dependencies: none of them may
// link an etcd client, gRPC or pflag.
func TestPurePackagesLinkNoEtcdClient(t *testing.T) {
	pure := []string{".", "./clusterset", "../kube2sky/records", "../skydns/resolver", "../skydns/snapshot"}
	out, err := exec.Command("go", append([]string{"list", "-deps"}, pure...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"go.etcd.io/", "google.golang.org/grpc", "github.com/spf13/pflag"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("a pure package links %s", dep)
			}
		}
	}
}
