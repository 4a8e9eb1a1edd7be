//go:build noembed

package skydns

import (
	"errors"
	"log/slog"
)

// EmbeddedEtcdBuilt reports whether this build can start an embedded etcd:
// built with -tags noembed it cannot, and does not link etcd's server
// (the images' build: a cluster's skydns always reads an etcd of its own).
const EmbeddedEtcdBuilt = false

// embeddedEtcd is what a build with the embedded etcd starts.
type embeddedEtcd interface {
	ClientURL() string
	Err() <-chan error
	Close()
}

// startEmbeddedEtcd fails: Validate rejects a config that needs it first.
func startEmbeddedEtcd(Config, *slog.Logger) (embeddedEtcd, error) {
	return nil, errors.New("this skydns is built without the embedded etcd (-tags noembed)")
}
