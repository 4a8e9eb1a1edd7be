package skydns

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/poll"
	"github.com/kubesky/kubesky/skydns/dnssec"
)

// signedZone is a daemon signing cluster.local. and in-addr.arpa. with a
// CSK each, serving a service's A, SRV and PTR records.
type signedZone struct {
	d       *Daemon
	etcd    *etcdtest.Server
	dir     string
	anchors map[string]*dns.DNSKEY // the trust anchor of each zone
}

// startSignedZone starts a signed daemon with one key per zone (more
// keys, for a rollover, are named in extra) and waits until it answers.
func startSignedZone(t *testing.T, extra ...string) *signedZone {
	t.Helper()
	return startSignedZoneWith(t, true, extra...)
}

// startSignedZoneWith is startSignedZone with the fast path on or off.
func startSignedZoneWith(t *testing.T, fastPath bool, extra ...string) *signedZone {
	t.Helper()
	z := &signedZone{etcd: etcdtest.Start(t), dir: t.TempDir(), anchors: make(map[string]*dns.DNSKEY)}
	cfg := testConfig(z.etcd.ClientURL())
	cfg.FastPath = fastPath
	for _, zone := range []string{"cluster.local.", "in-addr.arpa."} {
		cfg.DNSSECKeys = append(cfg.DNSSECKeys, z.newKey(t, zone))
	}
	cfg.DNSSECKeys = append(cfg.DNSSECKeys, extra...)
	z.putRecords(t)
	z.d = startDaemon(t, cfg)
	z.waitFor(t, "web.default.svc.cluster.local.", dns.TypeA)
	return z
}

// newKey writes a new CSK of zone into z.dir, remembers it as the zone's
// anchor and returns its path.
func (z *signedZone) newKey(t *testing.T, zone string) string {
	t.Helper()
	path, k := newTestKey(t, z.dir, zone)
	z.anchors[zone] = k.DNSKEY
	return path
}

// newTestKey writes a new CSK of zone into dir and returns its .key file
// and the key read back.
func newTestKey(tb testing.TB, dir, zone string) (string, dnssec.Key) {
	tb.Helper()
	base, err := dnssec.NewKey(dir, zone, true)
	if err != nil {
		tb.Fatal(err)
	}
	k, err := dnssec.ReadKey(base)
	if err != nil {
		tb.Fatal(err)
	}
	return base + ".key", k
}

func (z *signedZone) putRecords(t *testing.T) {
	t.Helper()
	put := func(key, value string) { z.etcd.Put(t, key, value) }
	put(contract.Key(contract.DefaultPrefix, "web.default.svc.cluster.local.")+"/a1", `{"host":"10.96.0.1"}`)
	put(contract.Key(contract.DefaultPrefix, "_http._tcp.web.default.svc.cluster.local.")+"/s1", `{"host":"web.default.svc.cluster.local.","port":80}`)
	put(contract.Key(contract.DefaultPrefix, "1.0.96.10.in-addr.arpa."), `{"host":"web.default.svc.cluster.local."}`)
}

// waitFor polls until the daemon answers name and qtype with NOERROR.
func (z *signedZone) waitFor(t *testing.T, name string, qtype uint16) {
	t.Helper()
	err := poll.Until(t.Context(), 15*time.Second, func(context.Context) error {
		resp, err := dnstest.Send("udp", z.d.DNSAddr(), new(dns.Msg).SetQuestion(name, qtype))
		if err != nil || resp.Rcode != dns.RcodeSuccess || len(resp.Answer) == 0 {
			return fmt.Errorf("%s %s: %v %v", name, dns.TypeToString[qtype], resp, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// anchorFile writes the trust anchors of zones in BIND's syntax (delv -a)
// and returns its path.
func (z *signedZone) anchorFile(t *testing.T, keys ...*dns.DNSKEY) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("trust-anchors {\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "  %q static-key %d %d %d %q;\n", k.Hdr.Name, k.Flags, k.Protocol, k.Algorithm, k.PublicKey)
	}
	b.WriteString("};\n")
	path := filepath.Join(t.TempDir(), "anchors.conf")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// need is the path of a validator's binary. Without it the test fails in
// CI and is skipped elsewhere.
func need(t *testing.T, binary, pkg string) string {
	t.Helper()
	for _, p := range []string{binary, "/usr/sbin/" + binary, "/usr/bin/" + binary} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	why := fmt.Sprintf("%s (Debian package %s) is not installed: the tests against real DNS software need it", binary, pkg)
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
	return ""
}

// delv asks server for name and qtype with delv, validating from the
// trust anchor of zone in anchors; it returns delv's output (delv's exit
// status is 0 when validation fails too: the output says how it ended).
func delv(t *testing.T, server, anchors, zone, name, qtype string) (string, error) {
	t.Helper()
	host, port, _ := net.SplitHostPort(server)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, need(t, "delv", "bind9-dnsutils"), "@"+host, "-p", port, "-a", anchors, "+root="+zone,
		"+nocrypto", "+vtrace", name, qtype)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestDelvValidatesSignedAnswers(t *testing.T) {
	need(t, "delv", "bind9-dnsutils")
	for _, fastPath := range []bool{true, false} {
		t.Run(fmt.Sprintf("fast path %v", fastPath), func(t *testing.T) { delvValidates(t, startSignedZoneWith(t, fastPath)) })
	}
}

// delvValidates checks that delv validates an A, an SRV, a PTR, an
// NXDOMAIN and a NODATA answer of z, a question in mixed case and one with
// a "*" label.
func delvValidates(t *testing.T, z *signedZone) {
	cases := []struct {
		name, qtype, zone, want string
	}{
		{"web.default.svc.cluster.local.", "A", "cluster.local.", "; fully validated"},
		{"_http._tcp.web.default.svc.cluster.local.", "SRV", "cluster.local.", "; fully validated"},
		{"1.0.96.10.in-addr.arpa.", "PTR", "in-addr.arpa.", "; fully validated"},
		{"nosuch.default.svc.cluster.local.", "A", "cluster.local.", "; negative response, fully validated"},
		{"web.default.svc.cluster.local.", "TXT", "cluster.local.", "; negative response, fully validated"},
		{"Web.Default.svc.cluster.local.", "A", "cluster.local.", "; fully validated"},
		{"*.default.svc.cluster.local.", "A", "cluster.local.", "; fully validated"}, // SkyDNS's wildcard query
	}
	for _, c := range cases {
		t.Run(c.name+" "+c.qtype, func(t *testing.T) {
			anchors := z.anchorFile(t, z.anchors[c.zone])
			out, err := delv(t, z.d.DNSAddr(), anchors, c.zone, c.name, c.qtype)
			if err != nil || !strings.Contains(out, c.want) {
				t.Errorf("delv %s %s: %v, want %q in:\n%s", c.name, c.qtype, err, c.want, out)
			}
		})
	}
}

func TestDelvFailsATamperedAnswer(t *testing.T) {
	need(t, "delv", "bind9-dnsutils")
	z := startSignedZone(t)
	proxy := tamperingProxy(t, z.d.DNSAddr())
	anchors := z.anchorFile(t, z.anchors["cluster.local."])
	out, err := delv(t, proxy, anchors, "cluster.local.", "web.default.svc.cluster.local.", "A")
	if strings.Contains(out, "fully validated") || !strings.Contains(out, "resolution failed: RRSIG failed to verify") {
		t.Errorf("delv accepted an answer whose A record was changed after signing (%v):\n%s", err, out)
	}
}

func TestDelvFailsAnswersSignedByAKeyThatIsNotTheAnchor(t *testing.T) {
	need(t, "delv", "bind9-dnsutils")
	z := startSignedZone(t)
	_, k := newTestKey(t, t.TempDir(), "cluster.local.")
	out, err := delv(t, z.d.DNSAddr(), z.anchorFile(t, k.DNSKEY), "cluster.local.", "web.default.svc.cluster.local.", "A")
	if strings.Contains(out, "fully validated") || !strings.Contains(out, "resolution failed: broken trust chain") {
		t.Errorf("delv validated an answer from a key other than its trust anchor (%v):\n%s", err, out)
	}
}

// tamperingProxy forwards queries to server and changes every A record of
// the answers it returns to 10.96.0.99, leaving the signatures as they
// were; it returns its address.
func tamperingProxy(t *testing.T, server string) string {
	t.Helper()
	return dnstest.StartServer(t, dnstest.Reply(func(req *dns.Msg) *dns.Msg {
		resp, err := dnstest.Send("tcp", server, req)
		if err != nil {
			return nil
		}
		for _, rr := range resp.Answer {
			if a, ok := rr.(*dns.A); ok {
				a.A = net.IPv4(10, 96, 0, 99)
			}
		}
		return resp
	}))
}

func TestUnboundValidatesThroughSkydns(t *testing.T) {
	z := startSignedZone(t)
	addr := startUnbound(t, z.d.DNSAddr(), z.anchors["cluster.local."], z.anchors["in-addr.arpa."])
	cases := []struct {
		name  string
		qtype uint16
		rcode int
	}{
		{"web.default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess},
		{"_http._tcp.web.default.svc.cluster.local.", dns.TypeSRV, dns.RcodeSuccess},
		{"1.0.96.10.in-addr.arpa.", dns.TypePTR, dns.RcodeSuccess},
		{"nosuch.default.svc.cluster.local.", dns.TypeA, dns.RcodeNameError},
		{"web.default.svc.cluster.local.", dns.TypeTXT, dns.RcodeSuccess},
	}
	for _, c := range cases {
		resp := askDO(t, addr, c.name, c.qtype)
		if resp.Rcode != c.rcode || !resp.AuthenticatedData {
			t.Errorf("Unbound answered %s %s with %s, AD %v; want %s with AD", c.name, dns.TypeToString[c.qtype],
				dns.RcodeToString[resp.Rcode], resp.AuthenticatedData, dns.RcodeToString[c.rcode])
		}
	}
}

func TestUnboundFailsATamperedAnswer(t *testing.T) {
	z := startSignedZone(t)
	addr := startUnbound(t, tamperingProxy(t, z.d.DNSAddr()), z.anchors["cluster.local."])
	if resp := askDO(t, addr, "web.default.svc.cluster.local.", dns.TypeA); resp.Rcode != dns.RcodeServerFailure {
		t.Errorf("Unbound answered a tampered A record with %s, want SERVFAIL:\n%v", dns.RcodeToString[resp.Rcode], resp)
	}
}

// askDO asks addr for name and qtype with the DO bit and RD.
func askDO(t *testing.T, addr, name string, qtype uint16) *dns.Msg {
	t.Helper()
	req := new(dns.Msg).SetQuestion(name, qtype)
	req.SetEdns0(1232, true)
	return dnstest.Exchange(t, "udp", addr, req)
}

// startUnbound runs Unbound as a validating resolver on 127.0.0.1 whose
// stub for cluster.local. and in-addr.arpa. is server, with anchors as its
// trust anchors, until the test ends; it returns its address once it
// answers.
func startUnbound(t *testing.T, server string, anchors ...*dns.DNSKEY) string {
	t.Helper()
	bin := need(t, "unbound", "unbound")
	dir := t.TempDir()
	pc, l := dnstest.ListenPair(t)
	addr := pc.LocalAddr().String()
	pc.Close() // Unbound takes the port; another process could in between, and the test would fail
	l.Close()
	conf := filepath.Join(dir, "unbound.conf")
	if err := os.WriteFile(conf, []byte(unboundConf(dir, addr, server, anchors)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-d", "-c", conf)
	var log logBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	err := poll.Until(t.Context(), 15*time.Second, func(context.Context) error {
		_, err := dnstest.Send("udp", addr, new(dns.Msg).SetQuestion("version.bind.", dns.TypeTXT))
		return err
	})
	if err != nil {
		t.Fatalf("Unbound does not answer on %s: %v\n%s", addr, err, log.String())
	}
	return addr
}

// unboundConf is a validating Unbound on addr with every zone of anchors
// stubbed to server.
func unboundConf(dir, addr, server string, anchors []*dns.DNSKEY) string {
	host, port, _ := net.SplitHostPort(addr)
	sHost, sPort, _ := net.SplitHostPort(server)
	var b strings.Builder
	fmt.Fprintf(&b, `server:
  interface: %s
  port: %s
  do-ip6: no
  chroot: ""
  username: ""
  directory: %q
  pidfile: %q
  use-syslog: no
  logfile: ""
  verbosity: 1
  val-log-level: 2
  do-not-query-localhost: no
  qname-minimisation: no
  module-config: "validator iterator"
  unblock-lan-zones: yes
`, host, port, dir, filepath.Join(dir, "unbound.pid"))
	for _, k := range anchors {
		fmt.Fprintf(&b, "  trust-anchor: \"%s DNSKEY %d %d %d %s\"\n", k.Hdr.Name, k.Flags, k.Protocol, k.Algorithm, k.PublicKey)
	}
	for _, k := range anchors {
		fmt.Fprintf(&b, "stub-zone:\n  name: %q\n  stub-addr: %s@%s\n", k.Hdr.Name, sHost, sPort)
	}
	b.WriteString("remote-control:\n  control-enable: no\n")
	return b.String()
}

func TestDelvValidatesWithEitherKeyDuringARollover(t *testing.T) {
	need(t, "delv", "bind9-dnsutils")
	newKey, incoming := newTestKey(t, t.TempDir(), "cluster.local.")
	z := startSignedZone(t, newKey)
	for _, anchor := range []*dns.DNSKEY{z.anchors["cluster.local."], incoming.DNSKEY} {
		for _, q := range [][2]string{{"web.default.svc.cluster.local.", "A"}, {"nosuch.default.svc.cluster.local.", "A"}} {
			out, _ := delv(t, z.d.DNSAddr(), z.anchorFile(t, anchor), "cluster.local.", q[0], q[1])
			if !strings.Contains(out, "fully validated") {
				t.Errorf("with the anchor of key %d, delv did not validate %s %s:\n%s", anchor.KeyTag(), q[0], q[1], out)
			}
		}
	}
}

func TestDelvValidatesAZoneSignedByAKSKAndAZSK(t *testing.T) {
	need(t, "delv", "bind9-dnsutils")
	zsk, err := dnssec.NewKey(t.TempDir(), "cluster.local.", false)
	if err != nil {
		t.Fatal(err)
	}
	z := startSignedZone(t, zsk+".key") // the zone's CSK becomes its KSK: a ZSK signs the data
	zskKey, _ := dnssec.ReadKey(zsk)
	resp := askDO(t, z.d.DNSAddr(), "web.default.svc.cluster.local.", dns.TypeA)
	if sig, ok := resp.Answer[len(resp.Answer)-1].(*dns.RRSIG); !ok || sig.KeyTag != zskKey.DNSKEY.KeyTag() {
		t.Fatalf("want the A RRset signed by the ZSK %d, got:\n%v", zskKey.DNSKEY.KeyTag(), resp)
	}
	anchors := z.anchorFile(t, z.anchors["cluster.local."])
	for _, q := range [][2]string{{"web.default.svc.cluster.local.", "A"}, {"nosuch.default.svc.cluster.local.", "A"}} {
		if out, _ := delv(t, z.d.DNSAddr(), anchors, "cluster.local.", q[0], q[1]); !strings.Contains(out, "fully validated") {
			t.Errorf("delv did not validate %s %s from the KSK:\n%s", q[0], q[1], out)
		}
	}
}
