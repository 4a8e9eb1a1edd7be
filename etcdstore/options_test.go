package etcdstore

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/internal/flagenv"
	"github.com/kubesky/kubesky/internal/kubeproc"
)

func TestValidateNamesTheFlagAtFault(t *testing.T) {
	cases := map[string]struct {
		edit func(*ClientOptions)
		flag string // after "etcd-"
	}{
		"an endpoint without a scheme": {func(o *ClientOptions) { o.Endpoints = []string{"127.0.0.1:2379"} }, "endpoints"},
		"a zero dial timeout":          {func(o *ClientOptions) { o.DialTimeout = 0 }, "dial-timeout"},
		"a negative request timeout":   {func(o *ClientOptions) { o.RequestTimeout = -time.Second }, "request-timeout"},
		"a cert without a key":         {func(o *ClientOptions) { o.CertFile = "/nonexistent" }, "keyfile"},
		"a key without a cert":         {func(o *ClientOptions) { o.KeyFile = "/nonexistent" }, "certfile"},
		"a missing CA file":            {func(o *ClientOptions) { o.CAFile = "/nonexistent/ca.pem" }, "cafile"},
		"a password without a user":    {func(o *ClientOptions) { o.Password = "x" }, "password"},
	}
	for _, prefix := range []string{"", "clusterset-"} {
		for name, c := range cases {
			t.Run(fmt.Sprintf("%s (--%setcd-*)", name, prefix), func(t *testing.T) {
				o := DefaultClientOptions().Prefixed(prefix, "the test's etcd")
				c.edit(&o)
				err := o.Validate()
				want := "--" + prefix + "etcd-" + c.flag
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("Validate() = %v, want an error naming %s", err, want)
				}
				if prefix != "" && strings.Contains(" "+err.Error(), " --etcd-") {
					t.Fatalf("Validate() = %v names an unprefixed flag", err)
				}
			})
		}
	}
	if err := DefaultClientOptions().Validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
}

func TestPrefixedFlagsAreTheSameOptionsUnderAnotherName(t *testing.T) {
	records, broker := DefaultClientOptions(), DefaultClientOptions().Prefixed("clusterset-", "the clusterset's etcd")
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	records.AddFlags(fs)
	broker.AddFlags(fs)
	err := fs.Parse([]string{"--etcd-endpoints=http://127.0.0.1:1", "--clusterset-etcd-endpoints=https://127.0.0.1:2",
		"--clusterset-etcd-dial-timeout=3s", "--clusterset-etcd-request-timeout=4s", "--clusterset-etcd-cafile=ca",
		"--clusterset-etcd-certfile=c", "--clusterset-etcd-keyfile=k", "--clusterset-etcd-username=u", "--clusterset-etcd-password=p"})
	if err != nil {
		t.Fatal(err)
	}
	want := ClientOptions{Endpoints: []string{"https://127.0.0.1:2"}, DialTimeout: 3 * time.Second, RequestTimeout: 4 * time.Second,
		CAFile: "ca", CertFile: "c", KeyFile: "k", Username: "u", Password: "p"}.Prefixed("clusterset-", "the clusterset's etcd")
	if !reflect.DeepEqual(broker, want) || records.Endpoints[0] != "http://127.0.0.1:1" || records.CAFile != "" {
		t.Fatalf("broker %+v, records %+v: want each flag in its own options", broker, records)
	}
	if got := broker.Given(); len(got) != 8 || got[0] != "--clusterset-etcd-endpoints" {
		t.Fatalf("Given() = %v, want the 8 prefixed flags", got)
	}
	if got := DefaultClientOptions().Given(); len(got) != 0 {
		t.Fatalf("Given() of the defaults = %v, want none", got)
	}
}

func TestPrefixedFlagsFallBackToTheirOwnEnvironment(t *testing.T) {
	t.Setenv("ETCD_ENDPOINTS", "http://127.0.0.1:1")
	t.Setenv("ETCD_CAFILE", "records-ca")
	t.Setenv("CLUSTERSET_ETCD_ENDPOINTS", "http://127.0.0.1:2")
	t.Setenv("KUBE2SKY_CLUSTERSET_ETCD_USERNAME", "kube2sky-east")
	records, broker := DefaultClientOptions(), DefaultClientOptions().Prefixed("clusterset-", "the clusterset's etcd")
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	records.AddFlags(fs)
	broker.AddFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if err := flagenv.Apply(fs, "KUBE2SKY"); err != nil {
		t.Fatal(err)
	}
	if records.Endpoints[0] != "http://127.0.0.1:1" || broker.Endpoints[0] != "http://127.0.0.1:2" {
		t.Fatalf("endpoints: records %v, broker %v", records.Endpoints, broker.Endpoints)
	}
	if broker.Username != "kube2sky-east" || broker.CAFile != "" || records.Username != "" {
		t.Fatalf("broker %+v: want the user from $KUBE2SKY_CLUSTERSET_ETCD_USERNAME and no CA from $ETCD_CAFILE", broker)
	}
}

func TestFlagsFallBackToTheEnvironment(t *testing.T) {
	t.Setenv("ETCD_ENDPOINTS", "http://127.0.0.1:1,http://127.0.0.1:2")
	t.Setenv("SKYDNS_ETCD_DIAL_TIMEOUT", "7s")
	t.Setenv("ETCD_REQUEST_TIMEOUT", "9s")
	o := DefaultClientOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--etcd-request-timeout=3s"}); err != nil {
		t.Fatal(err)
	}
	if err := flagenv.Apply(fs, "SKYDNS"); err != nil {
		t.Fatal(err)
	}
	if len(o.Endpoints) != 2 || o.DialTimeout != 7*time.Second || o.RequestTimeout != 3*time.Second {
		t.Fatalf("got %+v: want two endpoints from env, 7s from the prefixed env, 3s from the command line", o)
	}
}

func TestABadEnvironmentValueNamesFlagAndVariable(t *testing.T) {
	t.Setenv("SKYDNS_ETCD_DIAL_TIMEOUT", "soon")
	o := DefaultClientOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	_ = fs.Parse(nil)
	err := flagenv.Apply(fs, "SKYDNS")
	if err == nil || !strings.Contains(err.Error(), "--etcd-dial-timeout") || !strings.Contains(err.Error(), "$SKYDNS_ETCD_DIAL_TIMEOUT") {
		t.Fatalf("Apply() = %v", err)
	}
}

func TestTLSConfigLoadsTheCAOrFailsClearly(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(bad, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := DefaultClientOptions()
	o.Endpoints = []string{"https://127.0.0.1:2379"}
	o.CAFile = bad
	if _, err := o.Config(nil); err == nil || !strings.Contains(err.Error(), "etcd TLS") {
		t.Fatalf("Config() with a bad CA = %v, want an etcd TLS error", err)
	}
	o.CAFile = ""
	cfg, err := o.Config(nil)
	if err != nil || cfg.TLS == nil {
		t.Fatalf("https endpoint without files: TLS config %v, %v", cfg.TLS, err)
	}
}

func TestCheckHandshake(t *testing.T) {
	untrusted := httptest.NewTLSServer(http.NotFoundHandler()) // a certificate no CA given here signed
	t.Cleanup(untrusted.Close)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	tests := []struct {
		name     string
		endpoint string
		wantErr  string
	}{
		{"a server certificate the CA does not verify is an error naming the TLS flags", untrusted.URL, "refused the TLS handshake; check --etcd-cafile"},
		{"an etcd that does not answer is not an error: the daemon waits for it", "https://" + closedAddr, ""},
		{"a plain http endpoint is not checked", "http://" + closedAddr, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultClientOptions()
			o.Endpoints = []string{tt.endpoint}
			o.DialTimeout = time.Second
			err := o.checkHandshake(&tls.Config{RootCAs: x509.NewCertPool()})
			if tt.wantErr == "" && err != nil {
				t.Fatalf("got %v, want no error", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("got %v, want an error saying %q", err, tt.wantErr)
			}
		})
	}
}

func TestValidateRejectsMalformedTLSFiles(t *testing.T) {
	dir := t.TempDir()
	ca, err := kubeproc.NewCA(dir, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := kubeproc.CertTemplate("skydns", time.Hour)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	certFile, keyFile, err := ca.Issue("skydns", tmpl)
	if err != nil {
		t.Fatal(err)
	}
	_, otherKey, err := ca.Issue("other", kubeproc.CertTemplate("other", time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not PEM\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name                      string
		caFile, certFile, keyFile string
		want                      string
	}{
		{"a CA file that holds no certificate", garbage, certFile, keyFile, "--etcd-cafile: " + garbage + " holds no PEM certificate"},
		{"a certificate file that is not PEM", ca.CertFile, garbage, keyFile, "--etcd-certfile " + garbage},
		{"a key file that is not PEM", ca.CertFile, certFile, garbage, "--etcd-keyfile " + garbage},
		{"a key that does not match the certificate", ca.CertFile, certFile, otherKey, "private key does not match"},
		{"a key given as the certificate", ca.CertFile, keyFile, keyFile, "--etcd-certfile " + keyFile},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := DefaultClientOptions()
			o.CAFile, o.CertFile, o.KeyFile = c.caFile, c.certFile, c.keyFile
			err := o.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate() = %v, want an error saying %q", err, c.want)
			}
		})
	}
	t.Run("a matching pair under a PEM CA is valid", func(t *testing.T) {
		o := DefaultClientOptions()
		o.CAFile, o.CertFile, o.KeyFile = ca.CertFile, certFile, keyFile
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
	})
}
