package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/skydns/dnssec"
)

// writeKey writes a .key file with the record public, and a .private
// beside it, into dir; it returns the .key file's path.
func writeKey(t *testing.T, dir, base, public string) string {
	t.Helper()
	path := filepath.Join(dir, base)
	if err := os.WriteFile(path+".key", []byte(public+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".private", []byte("Private-key-format: v1.3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path + ".key"
}

func TestKeygenWritesAKeyWhoseDSIsPrinted(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runBinary(t, nil, "dnssec", "keygen", "--zone", "cluster.local", "--ksk", "--dir", dir)
	base := strings.TrimSpace(stdout)
	if code != 0 || !strings.HasPrefix(filepath.Base(base), "Kcluster.local.+013+") {
		t.Fatalf("keygen: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	k, err := dnssec.ReadKey(base)
	if err != nil || !k.SEP() {
		t.Fatalf("the key written does not read back as a KSK: %v", err)
	}
	code, stdout, stderr = runBinary(t, []string{"SKYDNS_DNSSEC_KEY=" + base + ".key"}, "dnssec", "ds")
	if code != 0 || strings.TrimSpace(stdout) != dnssec.DS(k).String() {
		t.Fatalf("ds: exit %d, stdout %q, stderr %q; want %s", code, stdout, stderr, dnssec.DS(k))
	}
}

func TestDSOfAKeyThatDoesNotLoadExits2NamingTheFlag(t *testing.T) {
	code, stdout, stderr := runBinary(t, nil, "dnssec", "ds", "--dnssec-key", filepath.Join(t.TempDir(), "Kx.+013+00001.key"))
	if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--dnssec-key") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 2 and one line naming --dnssec-key", code, stdout, stderr)
	}
}

func TestTheDaemonServesTheDNSKEYOfItsKey(t *testing.T) {
	base, err := dnssec.NewKey(t.TempDir(), "cluster.local.", true)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := dnssec.ReadKey(base)
	_, _, dnsAddr, _ := startBinary(t, skydnsBinary(t), nil, "--dnssec-key", base+".key")
	req := new(dns.Msg).SetQuestion("cluster.local.", dns.TypeDNSKEY)
	req.SetEdns0(1232, true)
	resp := dnstest.Exchange(t, "udp", dnsAddr, req)
	if len(resp.Answer) != 2 || resp.Answer[0].(*dns.DNSKEY).KeyTag() != k.DNSKEY.KeyTag() || resp.Answer[1].Header().Rrtype != dns.TypeRRSIG {
		t.Fatalf("want the DNSKEY %d and its RRSIG, got:\n%v", k.DNSKEY.KeyTag(), resp)
	}
}
