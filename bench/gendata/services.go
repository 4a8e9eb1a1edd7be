package gendata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// MaxServices is the most services the 10.96.0.0/12 address range holds.
const MaxServices = 1<<20 - 2

// Spec says what to generate.
type Spec struct {
	// Services is how many services (default 10000).
	Services int
	// Namespaces spreads the services over this many namespaces
	// (default 100).
	Namespaces int
	// Zone is the cluster domain (default "cluster.local").
	Zone string
	// Prefix is the etcd key prefix (default "/skydns").
	Prefix string
}

// WithDefaults returns s with its zero fields set to the defaults.
func (s Spec) WithDefaults() Spec {
	if s.Services == 0 {
		s.Services = 10000
	}
	if s.Namespaces == 0 {
		s.Namespaces = 100
	}
	if s.Zone == "" {
		s.Zone = "cluster.local"
	}
	if s.Prefix == "" {
		s.Prefix = "/skydns"
	}
	s.Zone = strings.Trim(strings.ToLower(s.Zone), ".")
	return s
}

// Validate reports a spec that cannot be generated.
func (s Spec) Validate() error {
	var errs []error
	if s.Services < 1 || s.Services > MaxServices {
		errs = append(errs, fmt.Errorf("services %d: want 1 to %d", s.Services, MaxServices))
	}
	if s.Namespaces < 1 {
		errs = append(errs, fmt.Errorf("namespaces %d: want at least 1", s.Namespaces))
	}
	if s.Zone == "" {
		errs = append(errs, errors.New("empty zone"))
	}
	if !strings.HasPrefix(s.Prefix, "/") {
		errs = append(errs, fmt.Errorf("prefix %q does not start with /", s.Prefix))
	}
	return errors.Join(errs...)
}

// Service is one generated ClusterIP service.
type Service struct {
	Name, Namespace string
	IP              netip.Addr
}

// Generate returns the spec's services in index order.
func Generate(s Spec) []Service {
	out := make([]Service, s.Services)
	for i := range out {
		out[i] = service(i, s.Namespaces)
	}
	return out
}

func service(i, namespaces int) Service {
	var ip [4]byte
	binary.BigEndian.PutUint32(ip[:], 10<<24|96<<16+uint32(i)+1)
	return Service{
		Name:      fmt.Sprintf("svc%d", i),
		Namespace: fmt.Sprintf("ns%d", i%namespaces),
		IP:        netip.AddrFrom4(ip),
	}
}

// FQDN is the service's name in zone, with a trailing dot.
func (s Service) FQDN(zone string) string {
	return s.Name + "." + s.Namespace + ".svc." + zone + "."
}
