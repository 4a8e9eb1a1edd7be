package snapshot

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
)

// Snapshot is an immutable view of the records under one prefix at one etcd
// revision. It is safe for any number of concurrent readers.
type Snapshot struct {
	prefix   string // without a trailing "/"
	revision int64
	records  *table
}

// Empty returns a snapshot of prefix with no records, at revision 0.
func Empty(prefix string) *Snapshot {
	return &Snapshot{prefix: strings.TrimSuffix(prefix, "/"), records: &table{}}
}

// Revision is the etcd revision the snapshot reflects.
func (s *Snapshot) Revision() int64 { return s.revision }

// Len is the number of records held.
func (s *Snapshot) Len() int { return s.records.n }

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
func (s *Snapshot) Apply(u contract.Update) (*Snapshot, []error) {
	if u.Full {
		b := s.NewBuilder()
		for _, ev := range u.Events {
			b.Add(ev)
		}
		return b.Build(u.Revision)
	}
	var errs []error
	changes := make([]change, 0, len(u.Events))
	for _, ev := range u.Events {
		tk, v, err := s.decodeEvent(ev)
		if err != nil {
			errs = append(errs, err)
		}
		if tk != "" {
			changes = append(changes, change{record: record{tk, v}, del: err != nil || ev.Type == contract.Delete})
		}
	}
	return &Snapshot{prefix: s.prefix, revision: u.Revision, records: s.records.with(changes)}, errs
}

// Builder makes a snapshot of a full list from its events one at a time,
// so that a list need not be held whole: each event is decoded and packed
// as it is added, and its raw value may go at once. An etcd list comes in
// key order, which is the tree's but where a key is a prefix of later
// keys ("web" comes before "web-b", "web/" after "web-b/"): records are
// gathered in runs that are sorted and packed into leaves, and the few
// that sort before what is packed already are merged in at the end.
type Builder struct {
	s      *Snapshot
	packed leafList
	n      int      // records packed
	last   string   // the last tree key packed
	run    []change // records after last, not yet packed
	late   []change // records at or before last
	errs   []error
	bad    []contract.Event
}

// builderRun is how many records are gathered before they are sorted and
// packed.
const builderRun = 32 * leafRecords

// NewBuilder returns a Builder of a snapshot of s's prefix.
func (s *Snapshot) NewBuilder() *Builder {
	return &Builder{s: s}
}

// Add decodes one event of the list, as Apply does; a value that does not
// decode is reported by Build, and its event kept for Malformed.
func (b *Builder) Add(ev contract.Event) {
	tk, v, err := b.s.decodeEvent(ev)
	switch {
	case err != nil:
		b.errs = append(b.errs, err)
		b.bad = append(b.bad, ev)
	case tk == "" || ev.Type == contract.Delete:
	case b.n > 0 && tk <= b.last:
		b.late = append(b.late, change{record: record{tk, v}})
	default:
		b.run = append(b.run, change{record: record{tk, v}})
		if len(b.run) == builderRun {
			b.pack()
		}
	}
}

// pack sorts the run and packs it after the leaves packed so far.
func (b *Builder) pack() {
	run := merge(nil, b.run)
	if len(run) == 0 {
		return
	}
	b.last = run[len(run)-1].key
	b.n += len(run)
	b.packed = appendLeaves(b.packed, run, leafRecords)
	b.run = b.run[:0]
}

// Malformed returns the events added whose values did not decode.
func (b *Builder) Malformed() []contract.Event { return b.bad }

// Build returns the snapshot of the events added, at revision, and the
// errors of those that did not decode. The Builder is spent.
func (b *Builder) Build(revision int64) (*Snapshot, []error) {
	b.pack()
	records := &table{groups: appendGroups(nil, b.packed, groupLeaves), n: b.n}
	if len(b.late) > 0 {
		records = records.with(b.late)
	}
	b.packed, b.run, b.late = nil, nil, nil
	return &Snapshot{prefix: b.s.prefix, revision: revision, records: records}, b.errs
}

// record is one tree key and its value.
type record struct {
	key string
	v   value
}

// decodeEvent returns an event's tree key ("" for a key outside the
// prefix) and, for a put, its decoded value. A value that does not decode,
// or a key that no query can reach, is an error; the tree key is still
// returned, so that a record held there is removed.
func (s *Snapshot) decodeEvent(ev contract.Event) (string, value, error) {
	rest, ok := s.relativeKey(ev.Key)
	if !ok {
		return "", "", nil
	}
	if ev.Type == contract.Delete {
		return rest + "/", "", nil
	}
	r, ip, err := decodeValue(ev.Key, ev.Value)
	if err == nil && hasUpper(ev.Key) {
		err = fmt.Errorf("key %q: not lower case, so no query can match it", ev.Key)
	}
	if err != nil {
		return rest + "/", "", err
	}
	tk, v := pack(rest, r, ip)
	return tk, v, nil
}

// relativeKey is a full etcd key without the prefix and its "/"; the tree
// key is that plus a trailing "/" (see the package doc).
func (s *Snapshot) relativeKey(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, s.prefix+"/")
	return rest, ok && rest != ""
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// decodeValue decodes a record and normalizes it: a Host that is an
// address is parsed, a name is made lower case and fully qualified.
func decodeValue(key string, raw []byte) (contract.Record, net.IP, error) {
	r, err := contract.Decode(key, raw)
	if err != nil {
		return contract.Record{}, nil, err
	}
	var ip net.IP
	if addr, err := netip.ParseAddr(r.Host); err == nil {
		ip = net.IP(addr.Unmap().AsSlice())
	} else if r.Host != "" {
		r.Host = dns.Fqdn(strings.ToLower(r.Host))
	}
	return r, ip, nil
}
