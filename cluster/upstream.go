package cluster

import (
	"context"
	"net"
	"strings"

	"github.com/miekg/dns"
)

// UpstreamNames are what the stand-in upstream resolver knows: the names
// outside the cluster that pods can resolve (through skydns's forwarder,
// which finds the stand-in in the node's resolv.conf). Every other name is
// NXDOMAIN.
var UpstreamNames = map[string]string{
	"www.example.org.": "192.0.2.10",
	"foo.example.com.": "192.0.2.11",
}

// ServeUpstream answers UDP and TCP queries on addr from UpstreamNames
// until ctx ends.
func ServeUpstream(ctx context.Context, addr string) error {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		pc.Close()
		return err
	}
	return serveUpstream(ctx, pc, ln)
}

// serveUpstream answers on pc and ln until ctx ends or a server fails.
func serveUpstream(ctx context.Context, pc net.PacketConn, ln net.Listener) error {
	handler := dns.HandlerFunc(answerUpstream)
	servers := []*dns.Server{{PacketConn: pc, Handler: handler}, {Listener: ln, Handler: handler}}
	errs := make(chan error, len(servers))
	for _, s := range servers {
		go func() { errs <- s.ActivateAndServe() }()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errs:
	}
	for _, s := range servers {
		_ = s.Shutdown()
	}
	return err
}

func answerUpstream(w dns.ResponseWriter, r *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(r)
	m.RecursionAvailable = true
	if len(r.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		_ = w.WriteMsg(m)
		return
	}
	q := r.Question[0]
	ip, ok := UpstreamNames[strings.ToLower(q.Name)]
	switch {
	case !ok:
		m.Rcode = dns.RcodeNameError
	case q.Qtype == dns.TypeA:
		m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.ParseIP(ip)}}
	}
	_ = w.WriteMsg(m)
}
