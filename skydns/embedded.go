//go:build !noembed

package skydns

import (
	"log/slog"

	"github.com/kubesky/kubesky/etcdstore/embedetcd"
	"github.com/kubesky/kubesky/internal/logging"
)

// EmbeddedEtcdBuilt reports whether this build can start an embedded etcd
// (built without -tags noembed).
const EmbeddedEtcdBuilt = true

// embeddedEtcd is a running embedded etcd server.
type embeddedEtcd = *embedetcd.Server

// startEmbeddedEtcd starts the embedded etcd cfg describes.
// Its log lines go to logger.
func startEmbeddedEtcd(cfg Config, logger *slog.Logger) (embeddedEtcd, error) {
	return embedetcd.Start(embedetcd.Config{DataDir: cfg.EtcdDataDir, ClientURL: "http://" + cfg.EmbeddedEtcdAddr,
		Logger: logging.Zap(logger.Handler())})
}
