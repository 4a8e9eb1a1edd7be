package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/bench/gendata"
	"github.com/kubesky/kubesky/internal/kubeproc"
)

const zone = "cluster.local"

// bench is the running benchmark: its scratch directory, the etcd every
// server reads, and the generated data.
type bench struct {
	cfg      config
	work     string
	ownWork  bool // remove work at the end
	progress io.Writer

	etcd    *kubeproc.Process
	etcdDir string
	etcdURL string
	// peerPort is the etcd peer port, kept so a restart finds its member.
	etcdPort, peerPort int
	client             *clientv3.Client

	spec    gendata.Spec
	svcs    []gendata.Service
	loaded  int   // services written to etcd so far
	rev     int64 // etcd revision after the last load
	hosts   string
	zone    string // the zone file of Knot and NSD
	key     string // skydns-do's DNSSEC key file; "": not made yet
	queries string
	probe   string // a name every server answers with an A record

	up       *upstream // the forward part's upstream, while it runs
	link     *link     // the forwarders' path to it
	upstream string    // the link's host:port, where the forwarders forward
}

func newBench(ctx context.Context, cfg config, progress io.Writer) (*bench, error) {
	b := &bench{cfg: cfg, work: cfg.work, progress: progress}
	if b.work == "" {
		dir, err := os.MkdirTemp("", "benchdns-")
		if err != nil {
			return nil, err
		}
		b.work, b.ownWork = dir, true
	}
	b.spec = gendata.Spec{Services: cfg.services}.WithDefaults()
	b.etcdDir = filepath.Join(b.work, "etcd")
	if err := b.startEtcd(ctx, nil); err != nil {
		b.close()
		return nil, err
	}
	if err := b.prepareData(ctx); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.progress, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func (b *bench) close() {
	if b.client != nil {
		b.client.Close()
	}
	if b.etcd != nil {
		b.etcd.Stop(10 * time.Second)
	}
	if b.ownWork {
		os.RemoveAll(b.work)
	}
}

// prepareData writes the services into etcd, the hosts file and the query
// file.
func (b *bench) prepareData(ctx context.Context) error {
	b.svcs = gendata.Generate(b.spec)
	if err := b.loadUpTo(ctx, b.spec.Services); err != nil {
		return err
	}
	b.hosts = filepath.Join(b.work, "hosts")
	if err := gendata.WriteFile(b.hosts, func(w io.Writer) error { return gendata.WriteHosts(w, b.spec, b.svcs) }); err != nil {
		return err
	}
	b.zone = filepath.Join(b.work, zone+".zone")
	if err := gendata.WriteFile(b.zone, func(w io.Writer) error { return gendata.WriteZone(w, b.spec, b.svcs) }); err != nil {
		return err
	}
	b.queries = filepath.Join(b.work, "queries")
	qs := gendata.Queries(b.spec, b.svcs, 100000, 1)
	b.probe = b.svcs[0].FQDN(zone)
	return gendata.WriteFile(b.queries, func(w io.Writer) error { return gendata.WriteQueries(w, qs) })
}

// loadUpTo writes the records of services [b.loaded, n) into etcd.
func (b *bench) loadUpTo(ctx context.Context, n int) error {
	if n <= b.loaded {
		return nil
	}
	spec := b.spec
	spec.Services = n
	svcs := gendata.Generate(spec)[b.loaded:]
	start := time.Now()
	rev, err := gendata.Load(ctx, b.etcdClient(), gendata.Records(spec, svcs), 0)
	if err != nil {
		return err
	}
	b.logf("loaded services %d..%d into etcd in %s (revision %d)", b.loaded, n-1, time.Since(start).Round(time.Millisecond), rev)
	b.loaded, b.rev = n, rev
	return nil
}

// firstLines writes the first n lines of the query file to a new file.
func (b *bench) firstLines(n int) (string, error) {
	spec := b.spec
	path := filepath.Join(b.work, fmt.Sprintf("queries.%d", n))
	qs := gendata.Queries(spec, b.svcs, n, 1)
	return path, gendata.WriteFile(path, func(w io.Writer) error { return gendata.WriteQueries(w, qs) })
}

// freePort returns a port free on 127.0.0.1 for both UDP and TCP.
func freePort() (int, error) {
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		pc, err := net.ListenPacket("udp", addr(port))
		ln.Close()
		if err == nil {
			pc.Close()
			return port, nil
		}
	}
	return 0, fmt.Errorf("no port free on both UDP and TCP")
}

// answers reports whether the server at addr answers name with an A record.
func answers(addr, name string, timeout time.Duration) error {
	c := &dns.Client{Timeout: timeout}
	resp, _, err := c.Exchange(new(dns.Msg).SetQuestion(name, dns.TypeA), addr)
	switch {
	case err != nil:
		return err
	case resp.Rcode != dns.RcodeSuccess || len(resp.Answer) == 0:
		return fmt.Errorf("%s A: %s with %d answers", name, dns.RcodeToString[resp.Rcode], len(resp.Answer))
	}
	return nil
}
