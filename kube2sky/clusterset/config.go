package clusterset

import (
	"errors"
	"fmt"
	"strings"
	"time"

	cs "github.com/kubesky/kubesky/contract/clusterset"
)

// Config is what the publisher is told.
type Config struct {
	// ClusterID names this cluster in the clusterset; "" means the value
	// of the ClusterProperty cluster.clusterset.k8s.io (KEP-2149).
	ClusterID string
	// Prefix is the etcd key prefix of the clusterset records.
	Prefix string
	// LeaseTTL is how long the exports outlive a publisher that stopped
	// renewing its lease.
	LeaseTTL time.Duration
	// ResyncPeriod is how often every ServiceExport is checked again (the
	// Conflict condition follows other clusters' exports this way).
	ResyncPeriod time.Duration
	// RequestTimeout bounds each etcd request (0: 5s); kube2sky sets it
	// from the request timeout of the etcd the clusterset is in.
	RequestTimeout time.Duration
}

// Validate checks the settings; an empty ClusterID is read later.
func (c Config) Validate() error {
	var errs []error
	if c.ClusterID != "" && !cs.ValidClusterID(c.ClusterID) {
		errs = append(errs, fmt.Errorf("--cluster-id: %q is not a lower-case DNS label", c.ClusterID))
	}
	if !strings.HasPrefix(c.Prefix, "/") || strings.Trim(c.Prefix, "/") == "" {
		errs = append(errs, fmt.Errorf("--clusterset-prefix: %q must be an etcd path like /clusterset", c.Prefix))
	}
	if c.LeaseTTL < 2*time.Second || c.LeaseTTL%time.Second != 0 {
		errs = append(errs, fmt.Errorf("--clusterset-lease-ttl: must be whole seconds, at least 2s, got %s", c.LeaseTTL))
	}
	if c.ResyncPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--clusterset-resync-period: must be positive, got %s", c.ResyncPeriod))
	}
	return errors.Join(errs...)
}
