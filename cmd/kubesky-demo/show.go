package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/etcdstore"
)

// showConfig says where show finds etcd and skydns.
type showConfig struct {
	etcdEndpoints []string
	dnsAddr       string
	prefix        string
	zone          string
	wait          time.Duration
}

func defaultShowConfig() showConfig {
	return showConfig{
		etcdEndpoints: []string{"http://127.0.0.1:2379"},
		dnsAddr:       "127.0.0.1:1053",
		prefix:        contract.DefaultPrefix,
		zone:          "cluster.local",
		wait:          time.Minute,
	}
}

func (c *showConfig) addFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&c.etcdEndpoints, "etcd-endpoints", c.etcdEndpoints, "etcd holding the records")
	fs.StringVar(&c.dnsAddr, "dns-addr", c.dnsAddr, "skydns's DNS host:port")
	fs.StringVar(&c.prefix, "prefix", c.prefix, "etcd key prefix of the records")
	fs.StringVar(&c.zone, "zone", c.zone, "cluster zone")
	fs.DurationVar(&c.wait, "wait", c.wait, "how long to wait for the example records to be served")
}

func showCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := defaultShowConfig()
	fs := pflag.NewFlagSet("show", pflag.ContinueOnError)
	c.addFlags(fs)
	summary := "Waits until skydns serves the example Services, then prints the records in etcd\n" +
		"(as `etcdctl get --prefix` does) and dig-style answers for A, SRV, PTR, CNAME and TXT."
	if code, exit := parseFlags(fs, args, summary, stdout, stderr); exit {
		return code
	}
	if err := c.run(ctx, stdout); err != nil {
		fmt.Fprintf(stderr, "kubesky-demo show: %v\n", err)
		return 1
	}
	return 0
}

// run waits for the examples' answers, then prints the keys and answers.
func (c showConfig) run(ctx context.Context, w io.Writer) error {
	queries := demoQueries(c.zone)
	if err := waitForAnswers(ctx, c.dnsAddr, queries, c.wait); err != nil {
		return fmt.Errorf("skydns at %s does not serve the examples yet (have they been applied?): %w", c.dnsAddr, err)
	}
	fmt.Fprintf(w, "\n=== The records in etcd (kube2sky wrote them; every reader of the contract sees the same)\n")
	if err := printKeys(ctx, w, c.etcdEndpoints, c.prefix); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n=== What skydns answers\n")
	return printAnswers(w, c.dnsAddr, queries)
}

// printKeys lists every key under prefix with its value, as
// `etcdctl get --prefix` prints them.
func printKeys(ctx context.Context, w io.Writer, endpoints []string, prefix string) error {
	opts := etcdstore.DefaultClientOptions()
	opts.Endpoints = endpoints
	client, err := opts.New(nil)
	if err != nil {
		return err
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	dir := strings.TrimSuffix(prefix, "/") + "/"
	resp, err := client.Get(ctx, dir, clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return fmt.Errorf("listing %s in etcd at %v: %w", dir, endpoints, err)
	}
	fmt.Fprintf(w, "\n$ etcdctl --endpoints %s get --prefix %s\n", strings.Join(endpoints, ","), dir)
	for _, kv := range resp.Kvs {
		fmt.Fprintf(w, "%s\n%s\n", kv.Key, kv.Value)
	}
	return nil
}
