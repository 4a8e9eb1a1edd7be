package cluster

import (
	"context"
	"net"
	"strings"

	"github.com/miekg/dns"
)

// UpstreamNames are what the stand-in upstream resolver knows: the names
// outside the cluster that pods can resolve (through skydns's forwarder,
// which finds the stand-in in the node's resolv.conf), with their IPv4
// address. dns.google is what Kubernetes' DNS e2e tests ask the internet
// for. Every other name is NXDOMAIN.
var UpstreamNames = map[string]string{
	"www.example.org.": "192.0.2.10",
	"foo.example.com.": "192.0.2.11",
	"dns.google.":      "8.8.8.8",
}

// upstreamIPv6 are the IPv6 addresses of some of UpstreamNames.
var upstreamIPv6 = map[string]string{
	"dns.google.": "2001:4860:4860::8888",
}

// upstreamPTR maps the reverse name of every address above to its name.
var upstreamPTR = reverseNames()

func reverseNames() map[string]string {
	ptr := map[string]string{}
	for _, table := range []map[string]string{UpstreamNames, upstreamIPv6} {
		for name, ip := range table {
			if reverse, err := dns.ReverseAddr(ip); err == nil {
				ptr[reverse] = name
			}
		}
	}
	return ptr
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
	name := strings.ToLower(q.Name)
	ipv4, known := UpstreamNames[name]
	target, isPTR := upstreamPTR[name]
	hdr := dns.RR_Header{Name: q.Name, Rrtype: q.Qtype, Class: dns.ClassINET, Ttl: 60}
	switch {
	case !known && !isPTR:
		m.Rcode = dns.RcodeNameError
	case q.Qtype == dns.TypeA && known:
		m.Answer = []dns.RR{&dns.A{Hdr: hdr, A: net.ParseIP(ipv4)}}
	case q.Qtype == dns.TypeAAAA && upstreamIPv6[name] != "":
		m.Answer = []dns.RR{&dns.AAAA{Hdr: hdr, AAAA: net.ParseIP(upstreamIPv6[name])}}
	case q.Qtype == dns.TypePTR && isPTR:
		m.Answer = []dns.RR{&dns.PTR{Hdr: hdr, Ptr: target}}
	}
	_ = w.WriteMsg(m)
}
