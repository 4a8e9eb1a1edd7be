// Package etcdtest starts a real etcd server inside a test process, on
// 127.0.0.1 with a free port and a temporary data dir.
package etcdtest

import (
	"context"
	"testing"
	"time"

	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/etcdstore/embedetcd"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Server is a running embedded etcd and a client connected to it.
type Server struct {
	*embedetcd.Server
	Client  *clientv3.Client
	DataDir string

	progressNotify time.Duration      // etcd's watch progress notify interval; 0 for its default
	clientTLS      *transport.TLSInfo // what clients must present; nil for plain HTTP
}

// Start starts an etcd server that is stopped when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{DataDir: t.TempDir()}
	s.start(t, "http://127.0.0.1:0")
	t.Cleanup(func() { s.Stop() })
	return s
}

// StartWithProgressNotify is Start with etcd sending a progress
// notification to each quiet watch that asks for them every interval.
func StartWithProgressNotify(t testing.TB, interval time.Duration) *Server {
	t.Helper()
	s := &Server{DataDir: t.TempDir(), progressNotify: interval}
	s.start(t, "http://127.0.0.1:0")
	t.Cleanup(func() { s.Stop() })
	return s
}

// StartAt starts a new etcd server, a cluster of its own with an empty
// data dir, on clientURL: what a client of an earlier server at that URL
// meets when that etcd is replaced (restored from a backup, rebuilt).
func StartAt(t testing.TB, clientURL string) *Server {
	t.Helper()
	s := &Server{DataDir: t.TempDir()}
	s.start(t, clientURL)
	t.Cleanup(func() { s.Stop() })
	return s
}

func (s *Server) start(t testing.TB, clientURL string) {
	t.Helper()
	e, err := embedetcd.Start(embedetcd.Config{
		DataDir: s.DataDir, ClientURL: clientURL, ReadyTimeout: 30 * time.Second, LogLevel: "fatal",
		WatchProgressNotifyInterval: s.progressNotify, ClientTLS: s.clientTLS,
	})
	if err != nil {
		t.Fatalf("starting embedded etcd: %v", err)
	}
	s.Server = e
	if s.clientTLS == nil {
		s.Client = NewClient(t, e.ClientURL())
	}
}

// NewClient returns a client of the etcd at url, closed when the test ends.
func NewClient(t testing.TB, url string) *clientv3.Client {
	t.Helper()
	opts := etcdstore.DefaultClientOptions()
	opts.Endpoints = []string{url}
	return NewClientWith(t, opts)
}

// Stop stops the server, keeping its data dir; it is safe to call twice.
func (s *Server) Stop() {
	if s.Server != nil {
		s.Server.Close()
		s.Server = nil
	}
}

// Restart starts the server again on the same client URL and data dir;
// a server from StartSecure keeps its TLS and its Client reconnects.
func (s *Server) Restart(t testing.TB, clientURL string) {
	t.Helper()
	s.Stop()
	s.start(t, clientURL)
}

// Put writes a key, failing the test on error.
func (s *Server) Put(t testing.TB, key, value string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := s.Client.Put(ctx, key, value)
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return resp.Header.Revision
}

// Delete removes a key, failing the test on error.
func (s *Server) Delete(t testing.TB, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.Client.Delete(ctx, key); err != nil {
		t.Fatalf("delete %s: %v", key, err)
	}
}
