package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

func TestTheForwardPartIsNamedButNotRunByDefault(t *testing.T) {
	c, err := parseFlags([]string{"--parts", "forward", "--forwarders", "skydns,unbound"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.runs("forward") || c.runs("dns") || len(c.forwarders) != 2 || c.externalNames != 1000000 ||
		len(c.missLatencies) != 2 || c.missLatencies[1] != 20*time.Millisecond || c.outage != time.Minute {
		t.Fatalf("config %+v", c)
	}
	d, _ := parseFlags(nil, io.Discard)
	if d.runs("forward") || len(d.forwarders) != len(forwarders) {
		t.Fatalf("defaults run forward %v, forwarders %v", d.runs("forward"), d.forwarders)
	}
}

func TestBadForwardFlagsAreRejectedWithAReason(t *testing.T) {
	cases := map[string][]string{
		"an unknown forwarder":           {"--forwarders", "bind9"},
		"fewer names than two warm sets": {"--external-names", "150000"},
		"no miss rate":                   {"--miss-rate", "0"},
		"a negative latency":             {"--miss-latencies", "0s,-20ms"},
		"a latency without a unit":       {"--miss-latencies", "20"},
		"an outage shorter than a probe": {"--outage", "5s"},
		"more search queries than a mix": {"--search-queries", "500001"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			var stderr strings.Builder
			if _, err := parseFlags(args, &stderr); err == nil || stderr.Len() == 0 {
				t.Fatalf("parseFlags(%q) = nil error, stderr %q", args, stderr.String())
			}
		})
	}
}

func TestTheExternalZoneParsesWithOneAddressPerName(t *testing.T) {
	var b strings.Builder
	if err := writeExternalZone(&b, 300); err != nil {
		t.Fatal(err)
	}
	zp := dns.NewZoneParser(strings.NewReader(b.String()), "", "")
	names, ttls := map[string]string{}, map[string]uint32{}
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		if a, isA := rr.(*dns.A); isA && a.Hdr.Name != "ns."+externalZone {
			names[a.Hdr.Name], ttls[a.Hdr.Name] = a.A.String(), a.Hdr.Ttl
		}
	}
	if err := zp.Err(); err != nil {
		t.Fatal(err)
	}
	if len(names) != 300+staleNames || names[externalName(0)] != "10.0.0.0" || names[externalName(299)] != "10.0.1.43" {
		t.Fatalf("%d names, first %s, last %s", len(names), names[externalName(0)], names[externalName(299)])
	}
	last := staleName(staleNames - 1)
	if ttls[externalName(0)] != externalTTL || ttls[last] != uint32(staleTTL.Seconds()) || names[last] != "10.255.3.231" {
		t.Fatalf("TTLs %d and %d, %s %s", ttls[externalName(0)], ttls[last], last, names[last])
	}
}

func TestKnotcCountersAreAdded(t *testing.T) {
	n, err := sumCounters("mod-stats.request-protocol[udp4] = 1200\nmod-stats.request-protocol[tcp4] = 3\n")
	if err != nil || n != 1203 {
		t.Fatalf("got %d, %v; want 1203", n, err)
	}
	if n, err := sumCounters(""); err != nil || n != 0 {
		t.Fatalf("no counters yet: got %d, %v; want 0", n, err)
	}
	if _, err := sumCounters("mod-stats.request-protocol[udp4] = many"); err == nil {
		t.Fatal("a counter that is not a number was added")
	}
}

func TestUpstreamAddressesAreWrittenEachServersWay(t *testing.T) {
	if got := atAddr("127.0.0.1:5353"); got != "127.0.0.1@5353" {
		t.Errorf("atAddr: %s", got)
	}
	if got := hashAddr("127.0.0.1:5353"); got != "127.0.0.1#5353" {
		t.Errorf("hashAddr: %s", got)
	}
}
