package kube2sky

import (
	"log/slog"
	"slices"
	"sync"

	"github.com/kubesky/kubesky/kube2sky/records"
)

// problemLog logs and counts the problems of each Service once: again only
// when they change, so a resync does not repeat them.
type problemLog struct {
	log     *slog.Logger
	metrics *metrics
	mu      sync.Mutex
	seen    map[string][]records.Problem
}

func newProblemLog(log *slog.Logger, m *metrics) *problemLog {
	return &problemLog{log: log, metrics: m, seen: map[string][]records.Problem{}}
}

func (p *problemLog) report(key string, problems []records.Problem) {
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.seen[key]
	if slices.Equal(old, problems) {
		return
	}
	if len(problems) == 0 {
		delete(p.seen, key)
		return
	}
	p.seen[key] = problems
	for _, pr := range problems {
		if slices.Contains(old, pr) {
			continue
		}
		p.metrics.invalidObjects.WithLabelValues(pr.Kind).Inc()
		p.log.Warn("invalid object: no record for this field", "service", key, "problem", pr.Error())
	}
}
