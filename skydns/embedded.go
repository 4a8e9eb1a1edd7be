//go:build !noembed

package skydns

import "github.com/kubesky/kubesky/etcdstore/embedetcd"

// EmbeddedEtcdBuilt reports whether this build can start an embedded etcd
// (built without -tags noembed).
const EmbeddedEtcdBuilt = true

// embeddedEtcd is a running embedded etcd server.
type embeddedEtcd = *embedetcd.Server

// startEmbeddedEtcd starts the embedded etcd cfg describes.
func startEmbeddedEtcd(cfg Config) (embeddedEtcd, error) {
	return embedetcd.Start(embedetcd.Config{DataDir: cfg.EtcdDataDir, ClientURL: "http://" + cfg.EmbeddedEtcdAddr})
}
