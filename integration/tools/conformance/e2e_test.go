package conformance

import (
	"flag"
	"testing"

	"k8s.io/kubernetes/test/e2e"
	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/kubernetes/test/e2e/framework/config"

	// The tests: sig-network holds the DNS conformance tests.
	_ "k8s.io/kubernetes/test/e2e/network"

	// The framework's own set-up, as the upstream e2e binary has it.
	_ "k8s.io/kubernetes/test/e2e/framework/debug/init"
	_ "k8s.io/kubernetes/test/e2e/framework/node/init"
	_ "k8s.io/kubernetes/test/utils/format"
)

// TestMain registers the framework's flags (--kubeconfig, --ginkgo.focus,
// ...) and reads them, as the upstream e2e binary does.
func TestMain(m *testing.M) {
	config.CopyFlags(config.Flags, flag.CommandLine)
	framework.RegisterCommonFlags(flag.CommandLine)
	framework.RegisterClusterFlags(flag.CommandLine)
	flag.Parse()
	framework.AfterReadingAllFlags(&framework.TestContext)
	m.Run()
}

// TestE2E runs the selected specs through the upstream suite's runner.
func TestE2E(t *testing.T) {
	e2e.RunE2ETests(t)
}
