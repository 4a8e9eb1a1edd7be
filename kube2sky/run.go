package kube2sky

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/kubesky/kubesky/kube2sky/clusterset"
	"github.com/kubesky/kubesky/kube2sky/source"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	mcsclient "sigs.k8s.io/mcs-api/pkg/client/clientset/versioned"
)

// Run connects to the API server and etcd, serves HTTP on cfg.HTTPAddr and
// runs the controller until ctx ends. cfg must be valid.
func Run(ctx context.Context, cfg Config, log *slog.Logger) error {
	source.UseWatchList() // before any client reads client-go's feature gates
	restCfg, err := restConfig(cfg.Kubeconfig)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(withProtobuf(restCfg))
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	etcd, err := cfg.Etcd.New(zap.NewNop())
	if err != nil {
		return err
	}
	defer etcd.Close()
	c, err := New(cfg, kube, etcd, log)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("--http-addr: %w", err)
	}
	setGCPercent(cfg.GCPercent)
	if cfg.Clusterset.Prefix != "" {
		broker, closeBroker, err := clustersetEtcd(cfg, etcd)
		if err != nil {
			return err
		}
		defer closeBroker()
		publisher, err := newPublisher(ctx, cfg.clustersetConfig(), restCfg, kube, broker, log)
		if err != nil {
			return err
		}
		pctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		defer func() { stop(); <-done }()
		go func() { defer close(done); _ = publisher.Run(pctx) }()
	}
	log.Info("kube2sky starting", "api_server", restCfg.Host, "etcd", cfg.Etcd.Endpoints, "zone", cfg.Zone, "prefix", cfg.Prefix,
		"owner", cfg.owner(), "http", ln.Addr().String(), "workers", cfg.Workers, "resync_period", cfg.ResyncPeriod,
		"leader_elect", cfg.LeaderElect, "lease_duration", cfg.LeaseDuration, "ttl", cfg.TTL,
		"pod_records", cfg.PodRecords, "hosts_configmap", cfg.HostsConfigMap, "hosts_domain", cfg.HostsDomain,
		"gc_percent", cfg.GCPercent)
	return serve(ctx, c, ln, log)
}

// clustersetEtcd is the client the clusterset is published through: one
// of --clusterset-etcd-*, or records (the records' etcd) without them.
func clustersetEtcd(cfg Config, records *clientv3.Client) (*clientv3.Client, func(), error) {
	if len(cfg.ClustersetEtcd.Endpoints) == 0 {
		return records, func() {}, nil
	}
	c, err := cfg.ClustersetEtcd.New(zap.NewNop())
	if err != nil {
		return nil, nil, fmt.Errorf("clusterset etcd: %w", err)
	}
	return c, func() { c.Close() }, nil
}

// newPublisher is the clusterset publisher of cfg, the cluster ID read
// from the ClusterProperty when not given.
func newPublisher(ctx context.Context, cfg clusterset.Config, restCfg *rest.Config, kube kubernetes.Interface, etcd *clientv3.Client, log *slog.Logger) (*clusterset.Publisher, error) {
	mcs, err := mcsclient.NewForConfig(restCfg)
	if err != nil {
		return nil, fmt.Errorf("mcs-api client: %w", err)
	}
	if cfg.ClusterID == "" {
		dyn, err := dynamic.NewForConfig(restCfg)
		if err != nil {
			return nil, fmt.Errorf("dynamic client: %w", err)
		}
		if cfg.ClusterID, err = clusterset.ReadClusterID(ctx, dyn); err != nil {
			return nil, err
		}
	}
	log.Info("publishing this cluster's ServiceExports", "cluster_id", cfg.ClusterID, "prefix", cfg.Prefix, "lease_ttl", cfg.LeaseTTL,
		"etcd", etcd.Endpoints())
	return clusterset.New(cfg, kube, mcs, etcd, log.With("component", "clusterset")), nil
}

// serve runs the HTTP server and the controller until ctx ends.
func serve(ctx context.Context, c *Controller, ln net.Listener, log *slog.Logger) error {
	srv := &http.Server{Handler: c.Handler(), ReadHeaderTimeout: 10 * time.Second}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server stopped", "err", err)
		}
	})
	err := c.Run(ctx)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return err
}

// restConfig loads the API server configuration: the given kubeconfig, else
// $KUBECONFIG or ~/.kube/config when present, else the in-cluster one.
func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" && !defaultKubeconfigExists() {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no --kubeconfig, $KUBECONFIG or ~/.kube/config, and not in a cluster: %w", err)
		}
		return cfg, nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	return cfg, nil
}

func defaultKubeconfigExists() bool {
	if os.Getenv(clientcmd.RecommendedConfigPathEnvVar) != "" {
		return true
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join(home, clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName))
	return err == nil
}
