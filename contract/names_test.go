package contract

import "testing"

func TestValidLabelAndDomain(t *testing.T) {
	for _, c := range []struct {
		s      string
		label  bool
		domain bool
	}{
		{"web", true, true},
		{"80-8080", true, true},
		{"a-b", true, true},
		{"-a", false, false},
		{"a-", false, false},
		{"", false, false},
		{"Web", false, false},
		{"a_b", false, false},
		{"cluster.local", false, true},
		{"cluster.local.", false, true},
		{"a..b", false, false},
		{string(make([]byte, 64)), false, false},
	} {
		if got := ValidLabel(c.s); got != c.label {
			t.Errorf("ValidLabel(%q) = %v, want %v", c.s, got, c.label)
		}
		if got := ValidDomain(c.s); got != c.domain {
			t.Errorf("ValidDomain(%q) = %v, want %v", c.s, got, c.domain)
		}
	}
}
