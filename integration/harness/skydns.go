package harness

import (
	"testing"
)

// SkyDNS is a bin/skydns started by StartSkyDNS.
type SkyDNS struct {
	Daemon
	// DNSAddr is 127.0.0.1:<port>, served on UDP and TCP.
	DNSAddr string
}

// StartSkyDNS runs bin/skydns serving DNS and HTTP on free ports on
// 127.0.0.1, reading records from etcdEndpoint, and waits until /readyz
// answers 200 — which skydns does only once its mirror has listed the
// prefix. extraArgs are added after the harness's own flags and override
// them; those include --lameduck=0s, as no Service drains a test's skydns
// and a stop should not wait. Restarting its Process keeps the ports.
func StartSkyDNS(t testing.TB, etcdEndpoint string, extraArgs ...string) *SkyDNS {
	t.Helper()
	s := NewSkyDNS(t, etcdEndpoint, extraArgs...)
	s.WaitReady(DaemonReadyTimeout)
	return s
}

// NewSkyDNS is StartSkyDNS without waiting for /readyz, for tests that
// watch skydns become ready.
func NewSkyDNS(t testing.TB, etcdEndpoint string, extraArgs ...string) *SkyDNS {
	t.Helper()
	RequireBinaries(t, "skydns")
	s := &SkyDNS{DNSAddr: HostPort(FreePort(t))}
	s.t = t
	s.HTTPAddr = HostPort(FreePort(t))
	args := append([]string{"--dns-addr=" + s.DNSAddr, "--lameduck=0s"}, daemonArgs(s.HTTPAddr, etcdEndpoint, extraArgs)...)
	s.Process = StartProcess(t, ProcessSpec{Name: "skydns@" + s.DNSAddr, Path: Binary("skydns"), Args: args})
	return s
}
