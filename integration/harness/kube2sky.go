package harness

import (
	"testing"
)

// Kube2Sky is a bin/kube2sky started by StartKube2Sky.
type Kube2Sky struct {
	Daemon
}

// StartKube2Sky runs bin/kube2sky against the API server of kubeconfig,
// writing records into etcdEndpoint, with its HTTP server on a free port on
// 127.0.0.1, and waits until /readyz answers 200 (informers synced, etcd
// reachable, and leading with the first full reconcile done, or standing
// by behind another replica). extraArgs are added after the harness's own
// flags and override them. Restarting its Process keeps the port.
func StartKube2Sky(t testing.TB, kubeconfig, etcdEndpoint string, extraArgs ...string) *Kube2Sky {
	t.Helper()
	k := NewKube2Sky(t, kubeconfig, etcdEndpoint, extraArgs...)
	k.WaitReady(DaemonReadyTimeout)
	return k
}

// NewKube2Sky is StartKube2Sky without waiting for /readyz.
func NewKube2Sky(t testing.TB, kubeconfig, etcdEndpoint string, extraArgs ...string) *Kube2Sky {
	t.Helper()
	RequireBinaries(t, "kube2sky")
	k := &Kube2Sky{}
	k.t = t
	k.HTTPAddr = HostPort(FreePort(t))
	args := append([]string{"--kubeconfig=" + kubeconfig}, daemonArgs(k.HTTPAddr, etcdEndpoint, extraArgs)...)
	k.Process = StartProcess(t, ProcessSpec{Name: "kube2sky@" + k.HTTPAddr, Path: Binary("kube2sky"), Args: args})
	return k
}

// Leading reports whether the replica's kube2sky_leader gauge is 1.
func (k *Kube2Sky) Leading() (bool, error) {
	m, err := k.Metrics()
	if err != nil {
		return false, err
	}
	return m["kube2sky_leader"] == 1, nil
}
