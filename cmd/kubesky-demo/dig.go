package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/internal/poll"
)

// query is one question the demo asks skydns.
type query struct {
	name  string
	qtype uint16
	// dig is what follows `dig @server -p port +noall +answer` to ask it.
	dig string
	// answered says the examples make it answer records; the demo waits
	// for those.
	answered bool
}

// demoQueries are the questions whose answers show each kind of record
// the examples produce.
func demoQueries(zone string) []query {
	zone = dns.Fqdn(zone)
	q := func(name string, qtype uint16, answered bool) query {
		return query{name: name, qtype: qtype, dig: name + " " + dns.TypeToString[qtype], answered: answered}
	}
	ptr := func(ip string) query {
		name, _ := dns.ReverseAddr(ip)
		return query{name: name, qtype: dns.TypePTR, dig: "-x " + ip, answered: true}
	}
	return []query{
		q("web.default.svc."+zone, dns.TypeA, true),
		q("_https._tcp.web.default.svc."+zone, dns.TypeSRV, true),
		q("db.default.svc."+zone, dns.TypeA, true),
		q("db-0.db.default.svc."+zone, dns.TypeA, true),
		q("_postgres._tcp.db.default.svc."+zone, dns.TypeSRV, true),
		ptr("10.96.0.80"),
		ptr("10.244.1.10"),
		q("docs.default.svc."+zone, dns.TypeCNAME, true),
		q("dns-version."+zone, dns.TypeTXT, true),
		q("nothere.default.svc."+zone, dns.TypeA, false),
	}
}

// exchange asks addr one question over UDP, again over TCP if the answer
// was truncated.
func exchange(addr string, q query) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(q.name, q.qtype)
	client := &dns.Client{Net: "udp", Timeout: 2 * time.Second}
	resp, _, err := client.Exchange(m, addr)
	if err == nil && resp.Truncated {
		client.Net = "tcp"
		resp, _, err = client.Exchange(m, addr)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", q.name, dns.TypeToString[q.qtype], err)
	}
	return resp, nil
}

// waitForAnswers polls until every answered query has an answer.
func waitForAnswers(ctx context.Context, addr string, queries []query, timeout time.Duration) error {
	return poll.Until(ctx, timeout, func(context.Context) error {
		for _, q := range queries {
			if !q.answered {
				continue
			}
			resp, err := exchange(addr, q)
			if err != nil {
				return err
			}
			if len(resp.Answer) == 0 {
				return fmt.Errorf("%s %s: %s without answers", q.name, dns.TypeToString[q.qtype], dns.RcodeToString[resp.Rcode])
			}
		}
		return nil
	})
}

// printAnswers prints each query as a dig command line and its answer
// section as dig prints it, or its status when it has no answers.
func printAnswers(w io.Writer, addr string, queries []query) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	var errs []error
	for _, q := range queries {
		fmt.Fprintf(w, "\n$ dig @%s -p %s +noall +answer %s\n", host, port, q.dig)
		resp, err := exchange(addr, q)
		if err != nil {
			fmt.Fprintf(w, ";; %v\n", err)
			errs = append(errs, err)
			continue
		}
		printAnswer(w, resp)
	}
	return errors.Join(errs...)
}

func printAnswer(w io.Writer, resp *dns.Msg) {
	if len(resp.Answer) == 0 {
		fmt.Fprintf(w, ";; status: %s, no answer records\n", dns.RcodeToString[resp.Rcode])
		return
	}
	for _, rr := range resp.Answer {
		fmt.Fprintln(w, rr.String())
	}
}
