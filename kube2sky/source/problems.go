package source

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/kubesky/kubesky/kube2sky/records"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
)

// problemLog tells about the problems of each Service and its
// EndpointSlices once: again only when they change, so a resync does not
// repeat them. Each new problem is a log line and counts in the metrics;
// each object with new problems gets a Warning event listing them.
type problemLog struct {
	log      *slog.Logger
	invalid  *prometheus.CounterVec                         // newly seen problems, by kind
	ref      func(kind, key string) *corev1.ObjectReference // nil when the object is gone
	recorder record.EventRecorder                           // set by startEvents, before any reconcile

	mu   sync.Mutex // guards seen
	seen map[string][]records.Problem
}

func newProblemLog(log *slog.Logger, invalid *prometheus.CounterVec, ref func(kind, key string) *corev1.ObjectReference) *problemLog {
	return &problemLog{log: log, invalid: invalid, ref: ref, seen: map[string][]records.Problem{}}
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
	var fresh []records.Problem
	for _, pr := range problems {
		if slices.Contains(old, pr) {
			continue
		}
		fresh = append(fresh, pr)
		p.invalid.WithLabelValues(pr.Kind).Inc()
		p.log.Warn("invalid object: no record for this field", "service", key, "problem", pr.Error())
	}
	p.recordEvents(fresh)
}

// recordEvents records one event per object among problems.
func (p *problemLog) recordEvents(problems []records.Problem) {
	if p.recorder == nil {
		return
	}
	for _, group := range byObject(problems) {
		ref := p.ref(group[0].Kind, group[0].Object)
		if ref == nil {
			continue
		}
		head := fmt.Sprintf("%d field(s) yield no DNS record: ", len(group))
		p.recorder.Event(ref, corev1.EventTypeWarning, ReasonInvalidForDNS, eventMessage(head, group))
	}
}

// byObject groups problems by their object, in order of first appearance.
func byObject(problems []records.Problem) [][]records.Problem {
	var groups [][]records.Problem
	index := map[[2]string]int{}
	for _, pr := range problems {
		k := [2]string{pr.Kind, pr.Object}
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], pr)
	}
	return groups
}
