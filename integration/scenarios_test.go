package integration

import (
	"fmt"
	"testing"

	"github.com/kubesky/kubesky/integration/harness"
)

// scenarioPath is the data-driven end-to-end suite; its schema is at the
// top of the file.
const scenarioPath = "testdata/scenarios.yaml"

// TestScenarios runs every scenario of testdata/scenarios.yaml against one
// pipeline — kube-apiserver, the EndpointSlice and namespace controllers,
// kube2sky, etcd, skydns — each scenario in its own namespace, in parallel.
func TestScenarios(t *testing.T) {
	scenarios, err := loadScenarios(scenarioPath)
	if err != nil {
		t.Fatal(err)
	}
	harness.RequireDig(t)
	s := startStack(t, stackOptions{})
	a, err := newApplier(s.api.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			r := &scenarioRun{t: t, stack: s, applier: a, sc: sc}
			r.run()
		})
	}
}

// scenarioRun runs the steps of one scenario.
type scenarioRun struct {
	t       *testing.T
	stack   *stack
	applier *applier
	sc      scenario
}

func (r *scenarioRun) run() {
	if r.sc.Namespace != "" {
		r.createNamespace()
	}
	for i, st := range r.sc.Steps {
		if err := r.step(st); err != nil {
			r.t.Fatalf("step %d: %v", i+1, err)
		}
	}
}

func (r *scenarioRun) createNamespace() {
	ns := fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", r.sc.Namespace)
	if err := r.applier.applyYAML(r.t.Context(), ns, ""); err != nil {
		r.t.Fatal(err)
	}
}

func (r *scenarioRun) step(st step) error {
	ctx := r.t.Context()
	switch {
	case st.Apply != "":
		return r.applier.applyYAML(ctx, st.Apply, r.sc.Namespace)
	case st.Delete != nil:
		return r.applier.delete(ctx, *st.Delete, r.sc.Namespace)
	case st.PodStatus != nil:
		p := st.PodStatus
		harness.SetPodStatus(r.t, r.stack.kube, r.sc.Namespace, p.Name, p.Ready, p.IPs...)
		return nil
	}
	for _, e := range st.Expect {
		r.expect(e)
	}
	return nil
}

// expect polls an expectation over each of its transports until it holds.
func (r *scenarioRun) expect(e expectation) {
	r.t.Helper()
	for _, transport := range e.transports() {
		harness.Eventually(r.t, expectTimeout, func() error {
			return check(r.t.Context(), r.stack.skydns.DNSAddr, e, transport)
		})
	}
}
