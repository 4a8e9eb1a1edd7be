package skydns

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/kubeproc"
	"github.com/kubesky/kubesky/internal/polltest"
)

// dotName is the name the tests' DNS over TLS certificates are for.
const dotName = "dns.kubesky.test"

// issueServing writes dir/name.crt and dir/name.key: a serving
// certificate of ca for dotName and 127.0.0.1. It returns the
// certificate's serial number too.
func issueServing(t *testing.T, ca *kubeproc.CA, name string) (certFile, keyFile, serial string) {
	t.Helper()
	tmpl := kubeproc.CertTemplate(name, time.Hour)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	tmpl.DNSNames, tmpl.IPAddresses = []string{dotName}, []net.IP{net.IPv4(127, 0, 0, 1)}
	certFile, keyFile, err := ca.Issue(name, tmpl)
	if err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, tmpl.SerialNumber.String()
}

// newTestCA is a throwaway CA writing into a directory of the test.
func newTestCA(t *testing.T) *kubeproc.CA {
	t.Helper()
	ca, err := kubeproc.NewCA(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// startDoT starts a daemon serving DNS over TLS with ca's certificate
// and web's record, and waits until web is answered over TLS.
func startDoT(t *testing.T, ca *kubeproc.CA) (*Daemon, string) {
	t.Helper()
	etcd := etcdtest.Start(t)
	cfg := testConfig(etcd.ClientURL())
	certFile, keyFile, serial := issueServing(t, ca, "dot")
	cfg.TLS = TLSConfig{Addr: "127.0.0.1:0", CertFile: certFile, KeyFile: keyFile}
	d := startDaemon(t, cfg)
	put(t, etcd, web, "a1", `{"host":"10.96.0.10"}`)
	polltest.NoComplaint(t, "web over TCP", func() string {
		return answerIs(dnstest.Ask(t, "tcp", d.DNSAddr(), web, dns.TypeA), dns.RcodeSuccess, "10.96.0.10")
	})
	return d, serial
}

func TestRealClientsGetAnswersOverTLS(t *testing.T) {
	ca := newTestCA(t)
	d, _ := startDoT(t, ca)
	host, port, _ := net.SplitHostPort(d.TLSAddr())
	clients := []struct {
		name, pkg string
		args      []string
	}{
		{"kdig", "knot-dnsutils", []string{"@" + host, "-p", port, "+tls", "+tls-ca=" + ca.CertFile, "+tls-hostname=" + dotName, "+short", web, "A"}},
		{"dig", "bind9-dnsutils", []string{"@" + host, "-p", port, "+tls", "+tls-ca=" + ca.CertFile, "+tls-hostname=" + dotName, "+short", web, "A"}},
	}
	for _, c := range clients {
		t.Run(c.name+" gets web's address", func(t *testing.T) {
			out, err := exec.Command(need(t, c.name, c.pkg), c.args...).CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "10.96.0.10" {
				t.Fatalf("%s %s: %v\n%s", c.name, strings.Join(c.args, " "), err, out)
			}
		})
	}
}

// servedSerial is the serial number of the certificate served at addr,
// verified with cfg.
func servedSerial(cfg *tls.Config, addr string) (string, error) {
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber.String(), nil
}

func TestACertificateRotatedOnDiskIsServedOnTheNextConnection(t *testing.T) {
	ca := newTestCA(t)
	d, first := startDoT(t, ca)
	client := dotClientConfig(t, ca)
	if got, err := servedSerial(client, d.TLSAddr()); err != nil || got != first {
		t.Fatalf("serial %s, %v; want the first certificate's %s", got, err, first)
	}
	_, _, second := issueServing(t, ca, "dot") // over the same files
	got, err := servedSerial(client, d.TLSAddr())
	if err != nil || got != second {
		t.Fatalf("serial %s, %v; want the rotated certificate's %s", got, err, second)
	}
	t.Run("and it answers", func(t *testing.T) {
		resp, _, err := (&dns.Client{Net: "tcp-tls", TLSConfig: client}).Exchange(new(dns.Msg).SetQuestion(web, dns.TypeA), d.TLSAddr())
		if err != nil {
			t.Fatal(err)
		}
		if msg := answerIs(resp, dns.RcodeSuccess, "10.96.0.10"); msg != "" {
			t.Fatal(msg)
		}
	})
}

// dotClientConfig trusts ca and expects dotName.
func dotClientConfig(t testing.TB, ca *kubeproc.CA) *tls.Config {
	t.Helper()
	pem, err := os.ReadFile(ca.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		t.Fatalf("no certificate in %s", ca.CertFile)
	}
	return &tls.Config{RootCAs: roots, ServerName: dotName}
}
