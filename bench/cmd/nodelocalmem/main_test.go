package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseRejects shows the one error line each bad command line gets.
func TestParseRejects(t *testing.T) {
	notExecutable := filepath.Join(t.TempDir(), "coredns")
	if err := os.WriteFile(notExecutable, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--services", "0"}, "--services 0 --endpoints 5: want at least 1 of each"},
		{[]string{"--endpoints", "251"}, "at most 250 endpoints"},
		{[]string{"--coredns", "/nonexistent/coredns"}, "--coredns /nonexistent/coredns: want an executable CoreDNS binary"},
		{[]string{"--coredns", notExecutable}, "want an executable CoreDNS binary"},
		{[]string{"--coredns", t.TempDir()}, "want an executable CoreDNS binary"},
	} {
		_, err := parse(c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("parse(%q) = %v, want one line containing %q", c.args, err, c.want)
		}
	}
	if o, err := parse([]string{"--coredns", os.Args[0], "--", "--fast-path-answers=4096"}); err != nil || o.coredns != os.Args[0] || len(o.extra) != 1 {
		t.Errorf("parse with an executable --coredns = %+v, %v", o, err)
	}
}
