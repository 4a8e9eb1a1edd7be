package source

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/kubesky/kubesky/kube2sky/hosts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
)

// ReasonInvalidHostsLines is the event reason on the hosts ConfigMap.
const ReasonInvalidHostsLines = "InvalidHostsLines"

// hostsReport tells about the hosts ConfigMap's bad lines: in the log, in
// an event on the ConfigMap and in the metrics, once per change.
type hostsReport struct {
	log     *slog.Logger
	metrics Metrics
	group   *hostsGroup

	recorder record.EventRecorder // set by startEvents, before any reconcile

	mu   sync.Mutex // guards last and uid
	uid  types.UID
	last []hosts.Problem
}

func newHostsReport(log *slog.Logger, m Metrics, g *hostsGroup) *hostsReport {
	return &hostsReport{log: log, metrics: m, group: g}
}

// report sets the metrics and, when the problems of cm changed, logs the
// new ones and records an event. cm is nil when the ConfigMap is gone.
func (r *hostsReport) report(cm *hostsObject, problems []hosts.Problem, records int) {
	r.metrics.HostsInvalidLines.Set(float64(len(problems)))
	r.metrics.HostsRecords.Set(float64(records))
	r.mu.Lock()
	defer r.mu.Unlock()
	var uid types.UID
	if cm != nil {
		uid = cm.UID
	}
	if uid == r.uid && slices.Equal(problems, r.last) {
		return
	}
	old := r.last
	if uid != r.uid {
		old = nil
	}
	r.uid, r.last = uid, problems
	for _, p := range problems {
		if !slices.Contains(old, p) {
			r.metrics.InvalidObjects.WithLabelValues("ConfigMap").Inc()
			r.log.Warn("hosts ConfigMap: line skipped", "configmap", r.group.ref, "problem", p.Error())
		}
	}
	if cm != nil && len(problems) > 0 && r.recorder != nil {
		r.recorder.Event(configMapRef(cm), corev1.EventTypeWarning, ReasonInvalidHostsLines, eventMessage(fmt.Sprintf("%d hosts line(s) skipped, the rest applied: ", len(problems)), problems))
	}
}

func configMapRef(cm *hostsObject) *corev1.ObjectReference {
	return &corev1.ObjectReference{Kind: "ConfigMap", APIVersion: "v1", Namespace: cm.Namespace, Name: cm.Name,
		UID: cm.UID, ResourceVersion: cm.ResourceVersion}
}
