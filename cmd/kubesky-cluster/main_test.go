package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubesky/kubesky/cluster"
)

func TestBadCommandLines(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "usage: kubesky-cluster up|clean|upstream"},
		{"an unknown command", []string{"down"}, `unknown command "down"`},
		{"an unknown flag", []string{"up", "--no-such-flag"}, "unknown flag: --no-such-flag"},
		{"no nodes", []string{"up", "--nodes=0"}, "--nodes: 0 is not between 1 and 40"},
		{"a node count that is not a number", []string{"up", "--nodes=three"}, `invalid argument "three" for "--nodes"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, &stdout, &stderr); code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tc.want)
			}
		})
	}
}

func TestGuideShowsTheNetnsHelper(t *testing.T) {
	out := guide(cluster.DefaultConfig("/repo"))
	for _, want := range []string{"ip netns exec kubesky /repo/bin/kubectl --kubeconfig /repo/.cache/cluster/run/kubeconfig", "10.96.0.10", "Ctrl-C"} {
		if !strings.Contains(out, want) {
			t.Errorf("guide lacks %q:\n%s", want, out)
		}
	}
}
