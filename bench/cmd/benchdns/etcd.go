package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/bench/callgrind"
	"github.com/kubesky/kubesky/etcdstore"
)

// etcdArgv runs bin/etcd as a single member on fixed ports, without fsync:
// the benchmark measures readers, and apply-rate bursts should not wait on
// the disk of a shared VM.
func (b *bench) etcdArgv() []string {
	peer := "http://" + addr(b.peerPort)
	return []string{b.cfg.etcd, "--name", "bench", "--data-dir", b.etcdDir,
		"--listen-client-urls", b.etcdURL, "--advertise-client-urls", b.etcdURL,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", "bench=" + peer,
		"--unsafe-no-fsync", "--log-level", "error"}
}

// startEtcd starts etcd pinned to the server CPU; wrap, if set, wraps its
// command line (callgrind). The ports are chosen once and kept across
// restarts.
func (b *bench) startEtcd(ctx context.Context, wrap func([]string) []string) error {
	if b.etcdURL == "" {
		if err := b.pickEtcdPorts(); err != nil {
			return err
		}
	}
	argv, env, log := b.etcdArgv(), []string(nil), "etcd.log"
	if wrap != nil {
		argv, env, log = wrap(argv), callgrind.Env, "etcd.callgrind.log"
	}
	log = filepath.Join(b.work, log)
	p, err := b.startPinned("etcd", argv, env, log)
	if err != nil {
		return err
	}
	b.etcd = p
	if err := b.waitEtcd(ctx, 3*time.Minute); err != nil {
		return fmt.Errorf("%w (log %s: %s)", err, log, tail(log, 400))
	}
	return nil
}

func (b *bench) pickEtcdPorts() error {
	var err error
	if b.etcdPort, err = freePort(); err != nil {
		return err
	}
	if b.peerPort, err = freePort(); err != nil {
		return err
	}
	b.etcdURL = "http://" + addr(b.etcdPort)
	return nil
}

// waitEtcd polls until etcd answers a read.
func (b *bench) waitEtcd(ctx context.Context, timeout time.Duration) error {
	c := b.etcdClient()
	return poll(ctx, b.etcd, timeout, func() error {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err := c.Get(rctx, "/health-check")
		return err
	})
}

// etcdClient returns a client of the bench's etcd, made once.
func (b *bench) etcdClient() *clientv3.Client {
	if b.client != nil {
		return b.client
	}
	opts := etcdstore.DefaultClientOptions()
	opts.Endpoints = []string{b.etcdURL}
	c, err := opts.New(nil)
	if err != nil {
		panic("etcd client options for " + b.etcdURL + ": " + err.Error()) // a plain http URL always works
	}
	b.client = c
	return c
}
