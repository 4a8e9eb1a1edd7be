package cluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesky/kubesky/internal/poll"
)

// httpOK returns nil when url, inside the network namespace netns, answers
// 200. The components' self-signed certificates are not verified: only
// readiness matters here.
func (c *Cluster) httpOK(ctx context.Context, netns, url string) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		DialContext:     DialInNetNS(netns),
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
	return poll.HTTPOK(ctx, client, url)
}

func (c *Cluster) apiserverReady(ctx context.Context) error {
	body, err := c.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("GET /readyz: %w: %s", err, body)
	}
	return nil
}

// nodeReady is nil once the named node has registered and says Ready.
func (c *Cluster) nodeReady(ctx context.Context, name string) error {
	node, err := c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
			return nil
		}
	}
	return fmt.Errorf("node %s not Ready", name)
}

// upstreamReady asks the stand-in upstream for one of its names.
func (c *Cluster) upstreamReady(ctx context.Context) error {
	_, err := c.Exchange(ctx, DNSPort(c.cfg.Addresses().Upstream), "www.example.org.", dns.TypeA)
	return err
}

// Exchange sends one DNS query over UDP from the clients' namespace (the
// first node's, where Service addresses work).
func (c *Cluster) Exchange(ctx context.Context, server, name string, qtype uint16) (*dns.Msg, error) {
	conn, err := DialInNetNS(c.cfg.ClientNetNS())(ctx, "udp", server)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	client := &dns.Client{Timeout: 2 * time.Second}
	reply, _, err := client.ExchangeWithConnContext(ctx, m, &dns.Conn{Conn: conn})
	return reply, err
}
