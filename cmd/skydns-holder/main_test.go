package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestBadCommandLinesAreRefusedWithAReason(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "want --dir DIR and --upstream IP:PORT"},
		{[]string{"--dir=/tmp"}, "want --dir DIR and --upstream IP:PORT"},
		{[]string{"--dir=/tmp", "--upstream=10.96.0.10"}, `--upstream "10.96.0.10"`},
		{[]string{"--dir=/tmp", "--upstream=10.96.0.10:53", "extra"}, "no arguments"},
		{[]string{"--no-such-flag"}, "unknown flag"},
	} {
		var stderr bytes.Buffer
		if code := run(tc.args, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

func TestHelpListsTheFlags(t *testing.T) {
	var stderr bytes.Buffer
	if code := run([]string{"--help"}, &stderr); code != 0 || !strings.Contains(stderr.String(), "--upstream") {
		t.Fatalf("--help: exit %d, %q", code, stderr.String())
	}
}

func TestAnUnusableDirectoryIsAnError(t *testing.T) {
	var stderr bytes.Buffer
	if code := run([]string{"--dir=/nonexistent/peers", "--upstream=127.0.0.1:53"}, &stderr); code != 1 || !strings.Contains(stderr.String(), "not holding sockets") {
		t.Fatalf("exit %d, stderr %q; want 1 and the reason", code, stderr.String())
	}
}
