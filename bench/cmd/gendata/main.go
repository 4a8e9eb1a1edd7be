// Command gendata writes the benchmark's data set: N services as SkyDNS
// records into etcd, a dnsmasq hosts file with the same A names, and a
// dnsperf query file (70 % A, 10 % SRV, 10 % NXDOMAIN, 10 % NODATA).
//
//	gendata --services 10000 --etcd-endpoints http://127.0.0.1:2379 \
//	    --hosts /tmp/hosts --queries /tmp/queries
//
// Each output is optional: without --etcd-endpoints nothing is written to
// etcd.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kubesky/kubesky/bench/gendata"
	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore"
)

type options struct {
	spec       gendata.Spec
	endpoints  string
	hosts      string
	queries    string
	queryCount int
	seed       uint64
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parse(args, stderr)
	if err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := generate(ctx, o, stdout); err != nil {
		fmt.Fprintf(stderr, "gendata: %v\n", err)
		return 1
	}
	return 0
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("gendata", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.spec.Services, "services", 10000, "number of services")
	fs.IntVar(&o.spec.Namespaces, "namespaces", 100, "number of namespaces the services are spread over")
	fs.StringVar(&o.spec.Zone, "zone", "cluster.local", "cluster domain")
	fs.StringVar(&o.spec.Prefix, "prefix", contract.DefaultPrefix, "etcd key prefix")
	fs.StringVar(&o.endpoints, "etcd-endpoints", "", "comma-separated etcd URLs to load the records into (none: skip)")
	fs.StringVar(&o.hosts, "hosts", "", "write a hosts file with the A names here (none: skip)")
	fs.StringVar(&o.queries, "queries", "", "write a dnsperf query file here (none: skip)")
	fs.IntVar(&o.queryCount, "query-count", 100000, "lines in the query file")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the query order")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	err := o.spec.Validate() // before defaults, which would turn 0 into 10000
	if err == nil {
		o.spec = o.spec.WithDefaults()
		err = o.spec.Validate()
	}
	if err != nil {
		fmt.Fprintf(stderr, "gendata: %v\n", err)
		return o, err
	}
	if o.queryCount < 1 {
		fmt.Fprintf(stderr, "gendata: --query-count %d: want at least 1\n", o.queryCount)
		return o, fmt.Errorf("bad --query-count")
	}
	return o, nil
}

func generate(ctx context.Context, o options, stdout io.Writer) error {
	svcs := gendata.Generate(o.spec)
	kvs := gendata.Records(o.spec, svcs)
	fmt.Fprintf(stdout, "services %d, keys %d, raw bytes of keys and values %d\n", len(svcs), len(kvs), gendata.RawBytes(kvs))
	if o.hosts != "" {
		if err := gendata.WriteFile(o.hosts, func(w io.Writer) error { return gendata.WriteHosts(w, o.spec, svcs) }); err != nil {
			return err
		}
	}
	if o.queries != "" {
		qs := gendata.Queries(o.spec, svcs, o.queryCount, o.seed)
		if err := gendata.WriteFile(o.queries, func(w io.Writer) error { return gendata.WriteQueries(w, qs) }); err != nil {
			return err
		}
	}
	if o.endpoints == "" {
		return nil
	}
	rev, err := load(ctx, strings.Split(o.endpoints, ","), kvs)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "loaded into etcd at revision %d\n", rev)
	return nil
}

func load(ctx context.Context, endpoints []string, kvs []gendata.KV) (int64, error) {
	opts := etcdstore.DefaultClientOptions()
	opts.Endpoints = endpoints
	c, err := opts.New(nil)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	return gendata.Load(ctx, c, kvs, 0)
}
