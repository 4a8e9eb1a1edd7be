package gendata

import (
	"bufio"
	"fmt"
	"io"
)

// WriteZone writes the services as a zone file for Knot DNS and NSD: the
// same A and named-port SRV records the etcd data holds (TTL 300), under
// an SOA and an NS record at the zone's apex.
func WriteZone(w io.Writer, s Spec, svcs []Service) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "$ORIGIN %s.\n$TTL 300\n", s.Zone)
	fmt.Fprintf(bw, "@ 30 IN SOA ns.dns.%[1]s. hostmaster.%[1]s. 1 7200 1800 86400 30\n", s.Zone)
	fmt.Fprintf(bw, "@ IN NS ns.dns.%s.\n", s.Zone)
	for _, svc := range svcs {
		fqdn := svc.FQDN(s.Zone)
		fmt.Fprintf(bw, "%s IN A %s\n", fqdn, svc.IP)
		fmt.Fprintf(bw, "_http._tcp.%s IN SRV 10 100 80 %s\n", fqdn, fqdn)
	}
	return bw.Flush()
}
