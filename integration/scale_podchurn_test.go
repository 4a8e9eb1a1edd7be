package integration

import (
	"context"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// podChurnKind is one sort of pod change; part 4 alternates between them.
type podChurnKind int

const (
	podStart podChurnKind = iota // a new pod gets its IP: its A record appears
	podStop                      // a preloaded pod is deleted: NXDOMAIN
)

var podChurnKinds = []podChurnKind{podStart, podStop}

func (k podChurnKind) String() string {
	return [...]string{
		"a new pod starts (its IP's A record appears)",
		"a running pod is deleted (NXDOMAIN)",
	}[k]
}

// podChurnBase is where the started pods' addresses are counted from, apart
// from the preloaded pods' and every Service's.
var podChurnBase = netip.MustParseAddr("10.192.0.0")

// podChurnResult is what one pod change measured.
type podChurnResult struct {
	kind    podChurnKind
	label   string        // the address's label, a-b-c-d
	acked   time.Time     // when the API acknowledged the write that shows
	write   time.Duration // that write's round trip
	visible time.Duration // from the acknowledgement to the first answer showing it
	err     error
}

// podChurner makes the changes of part 4: even changes start pod q-<m>
// (created, then given a running status; the status update is the write
// timed), odd ones delete preloaded pods p-000000, p-000001, … at once
// (grace period 0; no kubelet runs to finish a graceful deletion).
type podChurner struct {
	kube    kubernetes.Interface
	dnsAddr string
	next    atomic.Int64 // the next preloaded pod to delete
}

func (c *podChurner) change(ctx context.Context, m int) podChurnResult {
	r := podChurnResult{kind: podChurnKinds[m%len(podChurnKinds)]}
	var ip string
	var check dnsCheck
	var err error
	switch r.kind {
	case podStart:
		ip = nthIPv4(podChurnBase, m)
		check = dnsCheck{podName(ip), dns.TypeA, func(msg *dns.Msg) bool { return answerHolds(msg, ip) }}
		err = c.start(ctx, m, ip, &r)
	default:
		i := int(c.next.Add(1) - 1)
		ip = nthIPv4(scalePodBase, i)
		check = dnsCheck{podName(ip), dns.TypeA, func(msg *dns.Msg) bool { return msg.Rcode == dns.RcodeNameError }}
		begin := time.Now()
		err = c.kube.CoreV1().Pods(scaleNamespace).Delete(ctx, scalePodName(i), metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		r.acked = time.Now()
		r.write = r.acked.Sub(begin)
	}
	r.label = podLabel(ip)
	if err != nil {
		r.err = err
		return r
	}
	seen, err := awaitAnswer(ctx, c.dnsAddr, check)
	r.visible, r.err = seen.Sub(r.acked), err
	return r
}

// start creates pod q-<m> and sets its running status with ip, noting the
// status update's acknowledgement and round trip in r.
func (c *podChurner) start(ctx context.Context, m int, ip string, r *podChurnResult) error {
	created, err := createPod(ctx, c.kube, podChurnName(m))
	begin := time.Now()
	if err == nil {
		err = setRunning(ctx, c.kube, created, ip)
	}
	r.acked = time.Now()
	r.write = r.acked.Sub(begin)
	return err
}

// podChurnName names the pod change m starts.
func podChurnName(m int) string { return "q-" + strings.TrimPrefix(scalePodName(m), "p-") }

// podLabel is the first label of a pod's name: its address with dashes.
func podLabel(ip string) string { return strings.NewReplacer(".", "-").Replace(ip) }

// podName is the DNS name of a pod address in scaleNamespace.
func podName(ip string) string {
	return podLabel(ip) + "." + scaleNamespace + ".pod.cluster.local."
}
