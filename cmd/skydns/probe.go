package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// probeUsage is the help of `skydns probe`.
const probeUsage = `Usage:
  skydns probe [--socket PATH] [--path /readyz]   GET PATH on a skydns's --health-socket: exit 0 on 200, 1 otherwise

`

// probeTimeout bounds the whole request.
const probeTimeout = 5 * time.Second

// runProbe runs `skydns probe ...` (a kubelet exec probe: the image has no
// other program) and returns the exit status: 0 when the path answers
// 200, 1 otherwise with the status and body on stderr, 2 for bad flags.
func runProbe(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("skydns probe", pflag.ContinueOnError)
	fs.Usage = func() {}
	socket := fs.String("socket", "", "the Unix socket of skydns --health-socket (default: $SKYDNS_HEALTH_SOCKET)")
	path := fs.String("path", "/readyz", "the path asked: /readyz or /healthz")
	err := parseFlags(fs, args)
	if *socket == "" {
		*socket = os.Getenv("SKYDNS_HEALTH_SOCKET") // the daemon's own variable, set once in a pod
	}
	if err == nil && *socket == "" {
		err = errors.New("--socket: needed (or SKYDNS_HEALTH_SOCKET)")
	}
	if err == nil && !strings.HasPrefix(*path, "/") {
		err = fmt.Errorf("--path: %q must start with /", *path)
	}
	switch {
	case errors.Is(err, pflag.ErrHelp):
		fmt.Fprint(stdout, probeUsage+fs.FlagUsages())
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "skydns probe: %v\n", err)
		return 2
	}
	return probe(*socket, *path, stdout, stderr)
}

// probe GETs path over the Unix socket.
func probe(socket, path string, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", socket)
	}}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://skydns"+path, nil)
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "skydns probe: %v\n", err)
		return 1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "skydns probe: %s: %s\n", resp.Status, strings.TrimSpace(string(body)))
		return 1
	}
	fmt.Fprintf(stdout, "%s", body)
	return 0
}
