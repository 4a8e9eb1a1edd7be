package gendata

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
)

// WriteHosts writes the services' A names in /etc/hosts format, for
// dnsmasq --addn-hosts.
func WriteHosts(w io.Writer, s Spec, svcs []Service) error {
	bw := bufio.NewWriter(w)
	for _, svc := range svcs {
		fmt.Fprintf(bw, "%s %s\n", svc.IP, strings.TrimSuffix(svc.FQDN(s.Zone), "."))
	}
	return bw.Flush()
}

// WriteFile creates path and fills it with write.
func WriteFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// Query kinds, in the order of the mix.
const (
	KindA      = "A"        // an existing service's A record
	KindSRV    = "SRV"      // an existing service's named port
	KindNX     = "NXDOMAIN" // a name in the zone that does not exist
	KindNoData = "NODATA"   // AAAA of an IPv4-only service
)

// Query is one line of a dnsperf query file.
type Query struct {
	Kind, Name, Type string
}

// Queries returns n queries in the mix 70 % A, 10 % SRV, 10 % NXDOMAIN,
// 10 % NODATA, over services picked at random with seed (the same seed
// gives the same queries).
func Queries(s Spec, svcs []Service, n int, seed uint64) []Query {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]Query, n)
	for i := range out {
		svc := svcs[rng.IntN(len(svcs))]
		out[i] = query(s, svc, i%10, rng.IntN(len(svcs)))
	}
	return out
}

// query returns the query of slot (0..9) of the mix for svc; missing
// numbers the name that does not exist.
func query(s Spec, svc Service, slot, missing int) Query {
	fqdn := svc.FQDN(s.Zone)
	switch {
	case slot < 7:
		return Query{Kind: KindA, Name: fqdn, Type: "A"}
	case slot == 7:
		return Query{Kind: KindSRV, Name: "_http._tcp." + fqdn, Type: "SRV"}
	case slot == 8:
		return Query{Kind: KindNX, Name: fmt.Sprintf("missing%d.%s.svc.%s.", missing, svc.Namespace, s.Zone), Type: "A"}
	default:
		return Query{Kind: KindNoData, Name: fqdn, Type: "AAAA"}
	}
}

// WriteQueries writes queries in dnsperf's format: "name type" per line.
func WriteQueries(w io.Writer, qs []Query) error {
	bw := bufio.NewWriter(w)
	for _, q := range qs {
		fmt.Fprintf(bw, "%s %s\n", q.Name, q.Type)
	}
	return bw.Flush()
}
