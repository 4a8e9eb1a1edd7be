package relay_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/skydns/relay"
)

// TestACredentialThatCannotWorkStopsTheStart: the relay does not start
// with a credential missing, expired or from a CA the other side does not
// trust, and its error is one line naming the credential.
func TestACredentialThatCannotWorkStopsTheStart(t *testing.T) {
	s := newSetup(t)
	valid := func() relay.Config {
		cfg := relay.DefaultConfig()
		cfg.ListenAddr, cfg.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0"
		server := s.pki.Server()
		cfg.CertFile, cfg.KeyFile, cfg.TrustedCAFile = server.CertFile, server.KeyFile, s.pki.CAFile
		cfg.AllowedCNs = []string{"reader"}
		cfg.Etcd = s.pki.Options(s.etcd.ClientURL(), s.pki.Client(t, "relay"))
		return cfg
	}
	tmpl := etcdtest.ClientTemplate("relay", time.Hour)
	tmpl.NotAfter = time.Now().Add(-time.Minute)
	expired := s.pki.Issue(t, "expired", tmpl)
	otherCA := etcdtest.NewPKI(t)
	cases := []struct {
		name, want string
		change     func(*relay.Config)
	}{
		{"a missing serving key", "--key-file /nonexistent/relay.key", func(c *relay.Config) { c.KeyFile = "/nonexistent/relay.key" }},
		{"a missing readers' CA", "--trusted-ca-file: open /nonexistent/ca.crt", func(c *relay.Config) { c.TrustedCAFile = "/nonexistent/ca.crt" }},
		{"an expired serving certificate", `--cert-file ` + expired.CertFile + `: certificate "relay" expired at`, func(c *relay.Config) { c.CertFile, c.KeyFile = expired.CertFile, expired.KeyFile }},
		{"a missing etcd client key", "--etcd-keyfile: open /nonexistent/client.key", func(c *relay.Config) { c.Etcd.KeyFile = "/nonexistent/client.key" }},
		{"an expired etcd client certificate", `--etcd-certfile ` + expired.CertFile + `: certificate "relay" expired at`, func(c *relay.Config) { c.Etcd.CertFile, c.Etcd.KeyFile = expired.CertFile, expired.KeyFile }},
		{"an etcd client certificate of another CA", "refused the TLS handshake", func(c *relay.Config) {
			other := otherCA.Client(t, "relay")
			c.Etcd.CertFile, c.Etcd.KeyFile = other.CertFile, other.KeyFile
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := valid()
			tc.change(&cfg)
			err := cfg.Validate()
			if err == nil {
				// A start that got through serves until this deadline.
				ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
				defer cancel()
				err = relay.Run(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %v, want one line with %q", err, tc.want)
			}
		})
	}
}
