package kube2sky

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/kube2sky/source"
)

// The --pod-records modes. Only PodsVerified makes kube2sky write; the
// others are accepted so that kube2sky and skydns can share one setting.
const (
	PodsDisabled = "disabled"
	PodsInsecure = "insecure"
	PodsVerified = "verified"
)

// ExtraRecords configures the records beyond Services: pods and host
// records from a ConfigMap. It is embedded in Config.
type ExtraRecords struct {
	// PodRecords is disabled, insecure or verified; verified writes
	// pod/<ns>/<a-b-c-d> for every running pod's IPs.
	PodRecords string
	// HostsConfigMap is the "namespace/name" of a ConfigMap whose data keys
	// hold hosts-file text; "" writes no host records.
	HostsConfigMap string
	// HostsDomain is a domain every host name is written under too, besides
	// hosts.<zone>; "" for none.
	HostsDomain string
	// KubeDNSConfigMap is the "namespace/name" of a ConfigMap in kube-dns's
	// format (stubDomains, upstreamNameservers) written as skydns's stub
	// domains and upstreams; "" for none.
	KubeDNSConfigMap string
	// EndpointPodNames names a headless Service's endpoint without a
	// hostname by its pod's name rather than by its dashed address.
	EndpointPodNames bool
	// Namespaces, if any, are the only namespaces whose Services get
	// records; their pods' records are unaffected.
	Namespaces []string
	// IgnoreEmptyServices writes no records for a cluster IP Service
	// without a ready endpoint.
	IgnoreEmptyServices bool
	// DNSService is the "namespace/name" of the Service pods send DNS to;
	// its cluster IPs are written as the zone's name servers (dns/ns/nsN),
	// the addresses of the apex NS names. "" writes none.
	DNSService string
}

func (e *ExtraRecords) addFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&e.EndpointPodNames, "endpoint-pod-names", e.EndpointPodNames, "name a headless Service's endpoint without a hostname by its pod's name, where that is a DNS label, not by its dashed address (CoreDNS's endpoint_pod_names)")
	fs.StringSliceVar(&e.Namespaces, "namespaces", e.Namespaces, "only these namespaces' Services get records, comma separated (CoreDNS's namespaces; empty: every namespace)")
	fs.BoolVar(&e.IgnoreEmptyServices, "ignore-empty-services", e.IgnoreEmptyServices, "write no records for a cluster IP Service without a ready endpoint, so its name is NXDOMAIN and search paths go on (CoreDNS's ignore empty_service)")
	fs.StringVar(&e.PodRecords, "pod-records", e.PodRecords, "pod records: disabled, insecure (skydns synthesizes them; nothing is written) or verified (write pod/<ns>/<a-b-c-d> for every running pod)")
	fs.StringVar(&e.HostsConfigMap, "hosts-configmap", e.HostsConfigMap, "namespace/name of a ConfigMap whose data keys hold hosts-file text, written under hosts.<zone> (live)")
	fs.StringVar(&e.KubeDNSConfigMap, "kube-dns-configmap", e.KubeDNSConfigMap, "namespace/name of a ConfigMap in kube-dns's format (stubDomains, upstreamNameservers; usually kube-system/kube-dns) written as skydns's stub domains and upstreams (live)")
	fs.StringVar(&e.DNSService, "dns-service", e.DNSService, "namespace/name of the cluster DNS Service, whose cluster IPs are written as the zone's name servers (dns/ns/ns1...), the addresses of the apex NS (\"\": none; live)")
	fs.StringVar(&e.HostsDomain, "hosts-domain", e.HostsDomain, "also write the host names under this domain (skydns must serve it: --zone)")
}

// validate checks the extra records' flags against the cluster zone.
func (e ExtraRecords) validate(zone string) error {
	var errs []error
	switch e.PodRecords {
	case PodsDisabled, PodsInsecure, PodsVerified:
	default:
		errs = append(errs, fmt.Errorf("--pod-records: %q must be disabled, insecure or verified", e.PodRecords))
	}
	for _, ns := range e.Namespaces {
		if !contract.ValidLabel(ns) {
			errs = append(errs, fmt.Errorf("--namespaces: %q is not a namespace name", ns))
		}
	}
	if e.HostsConfigMap != "" {
		if _, _, err := source.SplitObjectRef(e.HostsConfigMap); err != nil {
			errs = append(errs, fmt.Errorf("--hosts-configmap: %w", err))
		}
	}
	for _, f := range []struct{ flag, ref string }{{"--kube-dns-configmap", e.KubeDNSConfigMap}, {"--dns-service", e.DNSService}} {
		if f.ref == "" {
			continue
		}
		if _, _, err := source.SplitObjectRef(f.ref); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.flag, err))
		}
	}
	return errors.Join(append(errs, e.validateDomain(zone))...)
}

func (e ExtraRecords) validateDomain(zone string) error {
	d := strings.TrimSuffix(e.HostsDomain, ".")
	switch {
	case d == "":
		return nil
	case e.HostsConfigMap == "":
		return errors.New("--hosts-domain: needs --hosts-configmap")
	case !contract.ValidDomain(d):
		return fmt.Errorf("--hosts-domain: %q is not a lower-case domain name", e.HostsDomain)
	}
	zone = strings.TrimSuffix(zone, ".")
	for _, other := range []string{zone, "arpa"} {
		if d == other || strings.HasSuffix(d, "."+other) || strings.HasSuffix(other, "."+d) {
			return fmt.Errorf("--hosts-domain: %q overlaps %q; host records go under hosts.%s already", e.HostsDomain, other, zone)
		}
	}
	return nil
}
