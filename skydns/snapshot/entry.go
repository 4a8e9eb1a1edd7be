package snapshot

import (
	"net"
	"strings"

	"github.com/kubesky/kubesky/etcdstore"
)

// Entry is one decoded record as a lookup returns it: the record, its
// address, and where it is stored.
type Entry struct {
	// Record is the decoded value, normalized at apply time: a Host that is
	// a domain name is made fully qualified, and Owner is dropped.
	Record etcdstore.Record
	// IP is Host parsed as an address: 4 bytes for IPv4, 16 for IPv6, nil
	// when Host is a name or empty. It is shared by every answer built
	// from the entry and must not be modified.
	IP net.IP

	prefix  string // the snapshot's prefix, without a trailing "/"
	treeKey string // shared with the tree
}

// Key is the full etcd key, prefix included. It is built on each call.
func (e *Entry) Key() string {
	return e.prefix + "/" + e.treeKey[:len(e.treeKey)-1]
}

// Depth is the number of labels of the key below the prefix.
func (e *Entry) Depth() int { return strings.Count(e.treeKey, "/") }

// value is what the tree stores for one record: 64 bytes, with no copy of
// the key (the tree holds it) and the small fields packed. Text and Group,
// which SkyDNS service records seldom carry, live behind a pointer.
type value struct {
	host                   string
	ip                     net.IP
	texts                  *texts // nil when both are empty
	ttl                    uint32
	port, priority, weight uint16
	targetStrip            uint8 // Decode keeps it in 0..127
	mail                   bool
}

type texts struct{ text, group string }

// newValue packs a decoded record whose numbers Decode checked: ports,
// priorities and weights fit 16 bits, targetstrip 0..127.
func newValue(r etcdstore.Record, ip net.IP) value {
	v := value{host: r.Host, ip: ip, ttl: r.TTL, port: uint16(r.Port), priority: uint16(r.Priority),
		weight: uint16(r.Weight), targetStrip: uint8(r.TargetStrip), mail: r.Mail}
	if r.Text != "" || r.Group != "" {
		v.texts = &texts{text: r.Text, group: r.Group}
	}
	return v
}

// entry unpacks v, stored at treeKey, for a caller.
func (s *Snapshot) entry(treeKey string, v value) Entry {
	e := Entry{IP: v.ip, prefix: s.prefix, treeKey: treeKey, Record: etcdstore.Record{
		Host: v.host, Port: int(v.port), Priority: int(v.priority), Weight: int(v.weight),
		Mail: v.mail, TTL: v.ttl, TargetStrip: int(v.targetStrip)}}
	if v.texts != nil {
		e.Record.Text, e.Record.Group = v.texts.text, v.texts.group
	}
	return e
}
