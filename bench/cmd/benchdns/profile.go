package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kubesky/kubesky/bench/dnsperf"
	"github.com/kubesky/kubesky/internal/debughttp"
)

// profileSkyDNS takes a CPU profile of skydns while dnsperf loads it, and
// returns the top of `go tool pprof -top`. This run is not one of the
// timed rounds: the profiler costs a little.
func (b *bench) profileSkyDNS(ctx context.Context, inst *instance) string {
	return b.profileUnder(ctx, inst, b.queries, "skydns.cpu.pprof")
}

// profileUnder is profileSkyDNS with the queries of file, the profile
// kept in the scratch directory as name.
func (b *bench) profileUnder(ctx context.Context, inst *instance, file, name string) string {
	path := filepath.Join(b.work, name)
	secs := max(1, int(b.cfg.duration.Seconds())-1)
	done := make(chan error, 1)
	go func() {
		done <- fetch(ctx, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", inst.httpAddr, secs), path)
	}()
	_, runErr := dnsperf.Run(ctx, dnsperf.Options{Addr: inst.addr, QueryFile: file, Duration: b.cfg.duration, CPU: b.cfg.loadCPU})
	if err := <-done; err != nil || runErr != nil {
		return fmt.Sprintf("no profile: %v %v", err, runErr)
	}
	top, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=25", path).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("go tool pprof failed: %v: %s", err, top)
	}
	if b.ownWork {
		b.logf("skydns CPU profile taken (pass --work DIR to keep it, with the callgrind dumps and logs)")
	} else {
		b.logf("skydns CPU profile in %s", path)
	}
	return strings.TrimSpace(string(top))
}

// fetch GETs url into path, within two minutes.
func fetch(ctx context.Context, url, path string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return debughttp.Fetch(ctx, url, path)
}
