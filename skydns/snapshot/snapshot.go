package snapshot

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	iradix "github.com/hashicorp/go-immutable-radix/v2"
	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/etcdstore"
)

// Snapshot is an immutable view of the records under one prefix at one etcd
// revision. It is safe for any number of concurrent readers.
type Snapshot struct {
	prefix   string // without a trailing "/"
	revision int64
	tree     *iradix.Tree[value]
}

// Empty returns a snapshot of prefix with no records, at revision 0.
func Empty(prefix string) *Snapshot {
	return &Snapshot{prefix: strings.TrimSuffix(prefix, "/"), tree: iradix.New[value]()}
}

// Revision is the etcd revision the snapshot reflects.
func (s *Snapshot) Revision() int64 { return s.revision }

// Len is the number of records held.
func (s *Snapshot) Len() int { return s.tree.Len() }

// Prefix is the etcd prefix mirrored, without a trailing "/".
func (s *Snapshot) Prefix() string { return s.prefix }

// Apply returns a new snapshot with u applied; s is not changed. A Full
// update replaces every record. A value that does not decode is skipped and
// reported in the returned errors (each names its key); a record previously
// stored at that key is removed, so a bad write never leaves a stale answer.
// Keys outside the prefix are ignored; a key with upper-case letters is
// skipped and reported, since no query can reach it (keys are lower case by
// contract). The cost is proportional to the number of events, not to the
// size of the snapshot.
func (s *Snapshot) Apply(u etcdstore.Update) (*Snapshot, []error) {
	tree := s.tree
	if u.Full {
		tree = iradix.New[value]()
	}
	txn := tree.Txn()
	var errs []error
	for _, ev := range u.Events {
		if err := s.applyEvent(txn, ev); err != nil {
			errs = append(errs, err)
		}
	}
	return &Snapshot{prefix: s.prefix, revision: u.Revision, tree: txn.CommitOnly()}, errs
}

func (s *Snapshot) applyEvent(txn *iradix.Txn[value], ev etcdstore.Event) error {
	tk, ok := s.treeKey(ev.Key)
	if !ok {
		return nil
	}
	if ev.Type == etcdstore.Delete {
		txn.Delete(tk)
		return nil
	}
	v, err := decodeValue(ev.Key, ev.Value)
	if err == nil && hasUpper(ev.Key) {
		err = fmt.Errorf("key %q: not lower case, so no query can match it", ev.Key)
	}
	if err != nil {
		txn.Delete(tk)
		return err
	}
	txn.Insert(tk, v)
	return nil
}

// treeKey maps a full etcd key to its tree key; see the package doc.
func (s *Snapshot) treeKey(key string) ([]byte, bool) {
	rest, ok := strings.CutPrefix(key, s.prefix+"/")
	if !ok || rest == "" {
		return nil, false
	}
	tk := make([]byte, 0, len(rest)+1)
	return append(append(tk, rest...), '/'), true
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

func decodeValue(key string, raw []byte) (value, error) {
	r, err := etcdstore.Decode(key, raw)
	if err != nil {
		return value{}, err
	}
	var ip net.IP
	if addr, err := netip.ParseAddr(r.Host); err == nil {
		ip = net.IP(addr.Unmap().AsSlice())
	} else if r.Host != "" {
		r.Host = dns.Fqdn(strings.ToLower(r.Host))
	}
	return newValue(r, ip), nil
}
