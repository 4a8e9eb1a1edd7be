package main

import (
	"strings"
	"testing"
)

func TestBadFlagsExitTwoWithAReason(t *testing.T) {
	cases := map[string][]string{
		"not an address":  {"--answer", "ten"},
		"an IPv6 answer":  {"--answer", "fd00::1"},
		"an unknown flag": {"--fast"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			var stderr strings.Builder
			if code := run(args, &stderr); code != 2 || stderr.Len() == 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr.String())
			}
		})
	}
}

func TestAnAddressInUseExitsOne(t *testing.T) {
	var stderr strings.Builder
	if code := run([]string{"--addr", "127.0.0.1:99999"}, &stderr); code != 1 || !strings.Contains(stderr.String(), "99999") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}
