package explain

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
)

// Query is one name to explain: its question and where its records live.
type Query struct {
	// Name is the fully qualified, lower-case name asked.
	Name string
	// Type is the question type.
	Type uint16
	// Key is the etcd key of Name.
	Key string
	// Reverse is true for an in-addr.arpa or ip6.arpa name: a PTR key is
	// exact, so only Key itself is read.
	Reverse bool
}

// TypeName is the question type's mnemonic, "A".
func (q Query) TypeName() string { return dns.TypeToString[q.Type] }

// maxName is the longest name in presentation form, without the final dot.
const maxName = 253

// ParseQuery reads NAME [TYPE]. NAME may be an IP address, which stands for
// its reverse name with type PTR. TYPE defaults to A (PTR for a reverse
// name).
func ParseQuery(prefix string, args []string) (Query, error) {
	if len(args) < 1 || len(args) > 2 {
		return Query{}, fmt.Errorf("want NAME [TYPE], got %d arguments", len(args))
	}
	name := args[0]
	if addr, err := netip.ParseAddr(name); err == nil {
		name = contract.ReverseName(addr)
	}
	name = strings.ToLower(dns.Fqdn(name))
	if err := checkName(name); err != nil {
		return Query{}, fmt.Errorf("bad name %q: %w", args[0], err)
	}
	_, isReverse := contract.AddrFromReverse(name)
	q := Query{Name: name, Key: contract.Key(prefix, name), Reverse: isReverse, Type: dns.TypeA}
	if isReverse {
		q.Type = dns.TypePTR
	}
	if len(args) == 2 {
		t, err := parseType(args[1])
		if err != nil {
			return Query{}, err
		}
		q.Type = t
	}
	return q, nil
}

// checkName accepts a fully qualified name of labels of letters, digits,
// hyphens and underscores (SRV names), or the wildcard "*".
func checkName(name string) error {
	if name == "." {
		return fmt.Errorf("the root has no records")
	}
	if len(name)-1 > maxName {
		return fmt.Errorf("%d characters, more than %d", len(name)-1, maxName)
	}
	for _, label := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		if err := checkLabel(label); err != nil {
			return err
		}
	}
	return nil
}

func checkLabel(label string) error {
	switch {
	case label == "":
		return fmt.Errorf("empty label")
	case len(label) > 63:
		return fmt.Errorf("label %q longer than 63 characters", label)
	case label == "*":
		return nil
	}
	for _, c := range label {
		if !(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') && c != '-' && c != '_' {
			return fmt.Errorf("label %q has %q (want letters, digits, '-' or '_')", label, c)
		}
	}
	return nil
}

// knownTypes are the types the error for an unknown one suggests.
var knownTypes = []string{"A", "AAAA", "ANY", "CNAME", "MX", "NS", "PTR", "SOA", "SRV", "TXT"}

func parseType(s string) (uint16, error) {
	t, ok := dns.StringToType[strings.ToUpper(s)]
	if !ok || t == dns.TypeNone {
		return 0, fmt.Errorf("unknown type %q (want one of %s)", s, strings.Join(knownTypes, ", "))
	}
	return t, nil
}

// InScope reports whether key is one of the query's keys: the name's key,
// or for a forward name, any key below it, where a wildcard label ("*" or
// "any") of the name matches any one label, as skydns matches it.
func (q Query) InScope(key string) bool {
	if q.Reverse {
		return key == q.Key
	}
	return contract.MatchKey(q.Key, key)
}

// readPrefix is the longest key prefix every key in scope starts with:
// the name's key, or with a wildcard label, the key above the first one.
func (q Query) readPrefix() (prefix string, wildcard bool) {
	segments := strings.Split(q.Key, "/")
	for i, seg := range segments {
		if contract.IsWildcard(seg) {
			return strings.Join(segments[:i], "/"), true
		}
	}
	return q.Key, false
}
