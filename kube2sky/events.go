package kube2sky

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
	// reasonInvalidForDNS is on a Service or an EndpointSlice with a field
	// that yields no record.
	reasonInvalidForDNS = "InvalidForDNS"
	maxEventMessage     = 1000
)

// startEvents starts the event recorder that the problem reports use; it
// stops when ctx ends. It runs before any reconcile.
func (c *Controller) startEvents(ctx context.Context, wg *sync.WaitGroup) {
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.kube.CoreV1().Events("")})
	recorder := b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kube2sky"})
	c.problems.recorder = recorder
	if c.hosts.report != nil {
		c.hosts.report.recorder = recorder
	}
	if c.kubeDNS != nil {
		c.kubeDNS.recorder = recorder
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
