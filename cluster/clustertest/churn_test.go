package clustertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesky/kubesky/cluster"
	"github.com/kubesky/kubesky/internal/poll"
)

// The Service churn: changes a second, how long an acknowledged change may
// take to reach DNS, and how often a change's name is asked while waiting.
const (
	churnInterval  = 100 * time.Millisecond // 10 changes a second
	maxPropagation = 2 * time.Second
	churnGiveUp    = 15 * time.Second // after this a change counts as lost, not late
	churnPoll      = 25 * time.Millisecond
	churnDeleteLag = 50 // a Service is deleted this many changes after its creation (5 s)
)

// churn creates and deletes Services in default, alternately, and checks
// that each change the API server acknowledged is answered through the
// kube-dns Service: the new Service's cluster IP, or NXDOMAIN once deleted.
type churn struct {
	t *testing.T
	c *cluster.Cluster

	mu      sync.Mutex      // guards the fields below
	delays  []time.Duration // acknowledgement to first right answer, per change
	lost    []string        // changes not answered within churnGiveUp
	apiErrs int             // changes the API server did not acknowledge
	checks  sync.WaitGroup
}

// run makes changes until ctx is done, then waits for every check.
func (ch *churn) run(ctx context.Context) {
	var created []string
	tick := time.NewTicker(churnInterval)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			ch.checks.Wait()
			return
		case <-tick.C:
		}
		if i%2 == 0 || len(created) < churnDeleteLag/2 {
			if name := ch.create(i); name != "" {
				created = append(created, name)
			}
			continue
		}
		ch.delete(created[0])
		created = created[1:]
	}
}

func (ch *churn) create(i int) string {
	name := fmt.Sprintf("churn-%d", i)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
	got, err := ch.c.Client.CoreV1().Services("default").Create(context.Background(), svc, metav1.CreateOptions{})
	if err != nil {
		ch.apiError(err)
		return ""
	}
	ch.check("create "+name, name, got.Spec.ClusterIP)
	return name
}

func (ch *churn) delete(name string) {
	if err := ch.c.Client.CoreV1().Services("default").Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		ch.apiError(err)
		return
	}
	ch.check("delete "+name, name, "")
}

func (ch *churn) apiError(err error) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ch.apiErrs++
	ch.t.Logf("the API server refused a change: %v", err)
}

// check polls DNS from now (the acknowledgement) until the name answers
// with ip, or with NXDOMAIN when ip is empty.
func (ch *churn) check(change, name, ip string) {
	acked := time.Now()
	fqdn := name + ".default.svc.cluster.local."
	ch.checks.Add(1)
	go func() {
		defer ch.checks.Done()
		err := poll.Every(context.Background(), churnGiveUp, churnPoll, func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			reply, err := ch.c.Exchange(ctx, cluster.DNSPort(ch.c.Cfg().Addresses().ClusterDNS), fqdn, dns.TypeA)
			if err == nil && !answers(reply, ip) {
				err = errNotYet
			}
			return err
		})
		if err != nil {
			ch.record(0, change)
			return
		}
		ch.record(time.Since(acked), "")
	}()
}

var errNotYet = errors.New("the change does not show yet")

// answers reports whether reply is an A record for ip, or NXDOMAIN when ip
// is empty.
func answers(reply *dns.Msg, ip string) bool {
	if ip == "" {
		return reply.Rcode == dns.RcodeNameError
	}
	for _, rr := range reply.Answer {
		if a, ok := rr.(*dns.A); ok && a.A.String() == ip {
			return true
		}
	}
	return false
}

func (ch *churn) record(delay time.Duration, lost string) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if lost != "" {
		ch.lost = append(ch.lost, lost)
		return
	}
	ch.delays = append(ch.delays, delay)
}

// report logs the figures and fails on a lost or late change.
func (ch *churn) report(t *testing.T) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	delays := slices.Clone(ch.delays)
	slices.Sort(delays)
	if len(delays) == 0 {
		t.Fatal("no change reached DNS")
	}
	pct := func(p int) time.Duration { return delays[(len(delays)-1)*p/100].Round(time.Millisecond) }
	t.Logf("Service churn: %d changes answered, %d lost, %d refused by the API server; propagation p50 %s, p99 %s, max %s",
		len(delays), len(ch.lost), ch.apiErrs, pct(50), pct(99), pct(100))
	if len(ch.lost) > 0 {
		t.Errorf("changes never answered within %s: %v", churnGiveUp, ch.lost)
	}
	var late int
	for _, d := range delays {
		if d > maxPropagation {
			late++
		}
	}
	if late > 0 {
		t.Errorf("%d changes took longer than %s to reach DNS (max %s)", late, maxPropagation, pct(100))
	}
}
