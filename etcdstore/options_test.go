package etcdstore

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/internal/flagenv"
)

func TestValidateNamesTheFlagAtFault(t *testing.T) {
	cases := map[string]struct {
		edit func(*ClientOptions)
		flag string
	}{
		"an endpoint without a scheme": {func(o *ClientOptions) { o.Endpoints = []string{"127.0.0.1:2379"} }, "--etcd-endpoints"},
		"a zero dial timeout":          {func(o *ClientOptions) { o.DialTimeout = 0 }, "--etcd-dial-timeout"},
		"a negative request timeout":   {func(o *ClientOptions) { o.RequestTimeout = -time.Second }, "--etcd-request-timeout"},
		"a cert without a key":         {func(o *ClientOptions) { o.CertFile = "/nonexistent" }, "--etcd-keyfile"},
		"a missing CA file":            {func(o *ClientOptions) { o.CAFile = "/nonexistent/ca.pem" }, "--etcd-cafile"},
		"a password without a user":    {func(o *ClientOptions) { o.Password = "x" }, "--etcd-password"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			o := DefaultClientOptions()
			c.edit(&o)
			err := o.Validate()
			if err == nil || !strings.Contains(err.Error(), c.flag) {
				t.Fatalf("Validate() = %v, want an error naming %s", err, c.flag)
			}
		})
	}
	if err := DefaultClientOptions().Validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
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
