package forward

import (
	"context"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/skydns/dnsserver"
)

// Forward is ServeForward in the shape of the skydns daemon's Forwarder
// hook (skydns.Config.Forwarder).
func (f *Forwarder) Forward(ctx context.Context, q dnsserver.Query) *dns.Msg {
	return f.ServeForward(ctx, q.Msg, q.Client)
}
