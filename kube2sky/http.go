package kube2sky

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kubesky/kubesky/internal/debughttp"
	"github.com/kubesky/kubesky/kube2sky/registry/leader"
)

// Ready returns nil when the replica does its job: informers synced, etcd
// reachable, and either leading with the first full reconcile done or
// standing by behind another leader.
func (c *Controller) Ready() error {
	switch {
	case !c.synced.Load():
		return errors.New("informers not synced")
	case !c.probe.Reachable():
		return errors.New("etcd unreachable")
	}
	switch c.elector.Role() {
	case leader.Standby:
		return nil
	case leader.Leading:
		if c.reconciled.Load() {
			return nil
		}
		return errors.New("leading, first full reconcile not done")
	}
	return errors.New("leader election in progress")
}

// Leading reports whether this replica is the leader.
func (c *Controller) Leading() bool { return c.elector.Role() == leader.Leading }

// Handler serves /healthz, /readyz and /metrics.
func (c *Controller) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := c.Ready(); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		role := "standby"
		if c.Leading() {
			role = "leader"
		}
		fmt.Fprintln(w, "ok:", role)
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(c.metrics.registry, promhttp.HandlerOpts{}))
	if c.cfg.Pprof {
		debughttp.MountPprof(mux)
	}
	return mux
}
