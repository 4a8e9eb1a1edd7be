package source

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// Event reasons on the objects kube2sky reads.
const (
	// ReasonInvalidForDNS is on a Service or an EndpointSlice with a field
	// that yields no record.
	ReasonInvalidForDNS = "InvalidForDNS"
	maxEventMessage     = 1000
)

// startEvents starts the event recorder that the problem reports use; it
// stops when ctx ends. It runs before any reconcile.
func (s *Source) startEvents(ctx context.Context, wg *sync.WaitGroup) {
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: s.kube.CoreV1().Events("")})
	recorder := b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kube2sky"})
	s.problems.recorder = recorder
	if s.hosts.report != nil {
		s.hosts.report.recorder = recorder
	}
	if s.kubeDNS != nil {
		s.kubeDNS.recorder = recorder
	}
	wg.Go(func() {
		<-ctx.Done()
		b.Shutdown()
	})
}

// eventMessage is head followed by as many problems as fit in an event.
func eventMessage[P interface{ Error() string }](head string, problems []P) string {
	var b strings.Builder
	b.WriteString(head)
	for i, p := range problems {
		s := p.Error()
		if i > 0 {
			s = "; " + s
		}
		if b.Len()+len(s) > maxEventMessage {
			fmt.Fprintf(&b, "; and %d more (see kube2sky's log)", len(problems)-i)
			break
		}
		b.WriteString(s)
	}
	return b.String()
}
