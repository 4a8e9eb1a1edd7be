package embedetcd

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Config says where an embedded etcd keeps its data and listens.
type Config struct {
	// Name is the member name (default "kubesky").
	Name string
	// DataDir holds the write-ahead log and snapshots; it persists across
	// restarts.
	DataDir string
	// ClientURL is the client listen URL, e.g. http://127.0.0.1:2379. Port 0
	// picks a free port; Embedded.ClientURL reports the one chosen.
	ClientURL string
	// PeerURL is the peer listen URL (default http://127.0.0.1:0: a
	// single member never dials its peers).
	PeerURL string
	// ReadyTimeout bounds the wait for the server to serve (default 30s).
	ReadyTimeout time.Duration
	// LogLevel is etcd's own log level (default "error").
	LogLevel string
	// WatchProgressNotifyInterval is how often etcd sends a progress
	// notification to a quiet watch that asked for them (zero: etcd's
	// default, 10 minutes).
	WatchProgressNotifyInterval time.Duration
	// Logger, if set, is where etcd logs (at LogLevel and above); the
	// default is zap's JSON on stderr.
	Logger *zap.Logger
	// ClientTLS, if set, is the TLS etcd serves its clients with (an
	// https:// ClientURL); with ClientCertAuth it requires a client
	// certificate, whose common name is the etcd user once auth is on.
	ClientTLS *transport.TLSInfo
}

// Server is a single-member etcd server running inside this process.
type Server struct {
	etcd *embed.Etcd
}

// Start starts an etcd server and waits until it serves clients.
func Start(c Config) (*Server, error) {
	cfg, err := c.etcdConfig()
	if err != nil {
		return nil, err
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting embedded etcd in %s: %w", c.DataDir, err)
	}
	timeout := c.ReadyTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	select {
	case <-e.Server.ReadyNotify():
		return &Server{etcd: e}, nil
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd in %s failed while starting: %w", c.DataDir, err)
	case <-time.After(timeout):
		e.Close()
		return nil, fmt.Errorf("embedded etcd in %s not ready after %s", c.DataDir, timeout)
	}
}

func (c Config) etcdConfig() (*embed.Config, error) {
	if c.DataDir == "" {
		return nil, errors.New("embedded etcd needs a data dir")
	}
	clientURL, err := parseListenURL("client", c.ClientURL, "http://127.0.0.1:2379")
	if err != nil {
		return nil, err
	}
	peerURL, err := parseListenURL("peer", c.PeerURL, "http://127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	cfg := embed.NewConfig()
	cfg.Name = valueOr(c.Name, "kubesky")
	cfg.Dir = c.DataDir
	cfg.ListenClientUrls = []url.URL{*clientURL}
	cfg.AdvertiseClientUrls = []url.URL{*clientURL}
	cfg.ListenPeerUrls = []url.URL{*peerURL}
	cfg.AdvertisePeerUrls = []url.URL{*peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// etcd derives the cluster ID from the members' peer URLs and this
	// token: with the defaults every embedded etcd would be the same cluster
	// to a client. A random token makes a new data dir a cluster of its own
	// (a restart from an existing one keeps the ID it bootstrapped with).
	cfg.InitialClusterToken = "kubesky-" + rand.Text()
	if c.ClientTLS != nil {
		cfg.ClientTLSInfo = *c.ClientTLS
	}
	if c.WatchProgressNotifyInterval > 0 {
		cfg.WatchProgressNotifyInterval = c.WatchProgressNotifyInterval
	}
	cfg.LogLevel = valueOr(c.LogLevel, "error")
	cfg.Logger = "zap"
	cfg.LogOutputs = []string{"stderr"}
	if c.Logger != nil {
		level, err := zapcore.ParseLevel(cfg.LogLevel)
		if err != nil {
			return nil, fmt.Errorf("embedded etcd log level: %w", err)
		}
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(c.Logger.WithOptions(zap.IncreaseLevel(level)))
	}
	return cfg, nil
}

func parseListenURL(what, raw, fallback string) (*url.URL, error) {
	u, err := url.Parse(valueOr(raw, fallback))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("embedded etcd %s URL %q is not an http:// URL with host:port", what, raw)
	}
	return u, nil
}

func valueOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// ClientURL returns the URL clients reach the server at, with the port that
// was actually bound.
func (e *Server) ClientURL() string {
	scheme := "http://"
	if !e.etcd.Config().ClientTLSInfo.Empty() {
		scheme = "https://"
	}
	return scheme + e.etcd.Clients[0].Addr().String()
}

// Err reports a fatal error of the running server.
func (e *Server) Err() <-chan error { return e.etcd.Err() }

// Close stops the server and waits for it to release its data dir.
func (e *Server) Close() {
	e.etcd.Close()
	<-e.etcd.Server.StopNotify()
}
