package skydns

import (
	"strings"
	"testing"
)

func TestRRLConfig(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*RRLConfig)
		wantErr string // "" for none
	}{
		{"the default is off", func(*RRLConfig) {}, ""},
		{"a rate turns it on", func(c *RRLConfig) { c.ResponsesPerSecond = 5 }, ""},
		{"a negative rate is refused", func(c *RRLConfig) { c.ResponsesPerSecond = -1 }, "--rrl-responses-per-second"},
		{"a negative slip is refused", func(c *RRLConfig) { c.Slip = -1 }, "--rrl-slip"},
		{"an IPv4 prefix length over 32 is refused", func(c *RRLConfig) { c.IPv4PrefixLen = 33 }, "--rrl-ipv4-prefix-length"},
		{"an IPv6 prefix length over 128 is refused", func(c *RRLConfig) { c.IPv6PrefixLen = 129 }, "--rrl-ipv6-prefix-length"},
		{"an exempt entry that is not a CIDR is refused", func(c *RRLConfig) { c.Exempt = []string{"10.0.0.0/33"} }, `--rrl-exempt "10.0.0.0/33"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultRRLConfig()
			tt.edit(&c)
			l, err := c.Limiter()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one naming %s", err, tt.wantErr)
			case err == nil && (l != nil) != (c.ResponsesPerSecond > 0):
				t.Fatalf("limiter %v for rate %d", l, c.ResponsesPerSecond)
			}
		})
	}
}
