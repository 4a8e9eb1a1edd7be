package skydns

import (
	"strings"
	"testing"
)

func TestNodeLocalModeWantsALiteralUnicastIP(t *testing.T) {
	tests := []struct {
		name string
		args []string
		flag string // "" when accepted
	}{
		{"an IPv4 link-local address", []string{"--dns-addr", "169.254.20.10:53"}, ""},
		{"an IPv6 address", []string{"--dns-addr", "[fd00::10]:53"}, ""},
		{"an IPv4-mapped IPv6 address", []string{"--dns-addr", "[::ffff:169.254.20.10]:53"}, ""},
		{"the IPv4 wildcard", []string{"--dns-addr", "0.0.0.0:53"}, "--dns-addr"},
		{"the IPv6 wildcard", []string{"--dns-addr", "[::]:53"}, "--dns-addr"},
		{"no host at all", []string{"--dns-addr", ":53"}, "--dns-addr"},
		{"a multicast address", []string{"--dns-addr", "224.0.0.251:53"}, "--dns-addr"},
		{"the broadcast address", []string{"--dns-addr", "255.255.255.255:53"}, "--dns-addr"},
		{"an address with a zone", []string{"--dns-addr", "[fe80::1%eth0]:53"}, "--dns-addr"},
		{"port 0", []string{"--dns-addr", "169.254.20.10:0"}, "--dns-addr"},
		{"an interface name too long", []string{"--dns-addr", "169.254.20.10:53", "--node-local-interface", "a-very-long-name0"}, "--node-local-interface"},
		{"an interface name with a slash", []string{"--dns-addr", "169.254.20.10:53", "--node-local-interface", "a/b"}, "--node-local-interface"},
		{"a health socket path too long", []string{"--dns-addr", "169.254.20.10:53", "--health-socket", "/" + strings.Repeat("s", 120)}, "--health-socket"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--node-local-interface", "kubesky0"}, tc.args...)
			_, err := parse(args...)
			switch {
			case tc.flag == "" && err != nil:
				t.Fatalf("%v rejected: %v", args, err)
			case tc.flag != "" && err == nil:
				t.Fatalf("%v accepted", args)
			case tc.flag != "" && !strings.Contains(err.Error(), tc.flag):
				t.Fatalf("error %q should name %s", err, tc.flag)
			}
		})
	}
}

func TestTheWildcardIsFineOutsideNodeLocalMode(t *testing.T) {
	cfg, err := parse("--dns-addr", "0.0.0.0:53")
	if err != nil || cfg.NodeLocal.Enabled() || !cfg.NodeLocal.Notrack {
		t.Fatalf("config %+v, err %v; want accepted, node-local off, notrack on by default", cfg.NodeLocal, err)
	}
}

func TestNodeLocalAddrIsUnmapped(t *testing.T) {
	ap, err := nodeLocalAddr("[::ffff:169.254.20.10]:53")
	if err != nil || ap.String() != "169.254.20.10:53" {
		t.Fatalf("got %v, %v; want 169.254.20.10:53", ap, err)
	}
}
