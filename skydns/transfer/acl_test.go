package transfer_test

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/kubesky/kubesky/skydns/transfer"
)

func TestTheACLAllowsItsNetworksOnly(t *testing.T) {
	acl, err := transfer.ParseACL([]string{"10.0.0.0/8", "192.0.2.7", " fd00::/64", "10.1.2.3/8"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		client string
		want   bool
	}{
		{"10.200.0.1", true},
		{"192.0.2.7", true},
		{"192.0.2.8", false},
		{"::ffff:192.0.2.7", true}, // an IPv4-mapped client is its IPv4 address
		{"fd00::1", true},
		{"fd00:0:0:1::1", false},
		{"127.0.0.1", false},
	}
	for _, tc := range tests {
		if got := acl.Allows(netip.MustParseAddr(tc.client)); got != tc.want {
			t.Errorf("Allows(%s) = %v, want %v", tc.client, got, tc.want)
		}
	}
	if (transfer.ACL{}).Allows(netip.MustParseAddr("127.0.0.1")) {
		t.Error("an empty ACL allows 127.0.0.1")
	}
}

func TestBadACLEntriesAreNamed(t *testing.T) {
	for _, entry := range []string{"", "10.0.0.0/33", "example.com", "10.0.0.0/", "fe80::1%eth0", "10.0.0.1:53"} {
		_, err := transfer.ParseACL([]string{"10.0.0.0/8", entry})
		if err == nil || !strings.Contains(err.Error(), `"`+entry+`"`) {
			t.Errorf("ParseACL(%q): %v, want an error naming it", entry, err)
		}
	}
}

func TestNotifyTargetsGetPort53UnlessGivenOne(t *testing.T) {
	got, err := transfer.ParseTargets([]string{"192.0.2.7", "192.0.2.8:5353", "[fd00::7]:53", "fd00::8", "::ffff:192.0.2.9"})
	want := []string{"192.0.2.7:53", "192.0.2.8:5353", "[fd00::7]:53", "[fd00::8]:53", "192.0.2.9:53"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("ParseTargets: %v, %v; want %v", got, err, want)
	}
}

func TestBadNotifyTargetsAreNamed(t *testing.T) {
	for _, entry := range []string{"", "ns1.example.com", "ns1.example.com:53", "192.0.2.7:0", "192.0.2.7:70000", "192.0.2.7:dns", "10.0.0.0/8"} {
		_, err := transfer.ParseTargets([]string{entry})
		if err == nil || !strings.Contains(err.Error(), `"`+entry+`"`) {
			t.Errorf("ParseTargets(%q): %v, want an error naming it", entry, err)
		}
	}
}
