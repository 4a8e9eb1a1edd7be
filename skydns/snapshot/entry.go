package snapshot

import (
	"encoding/binary"
	"net"
	"strings"

	"github.com/kubesky/kubesky/contract"
)

// Entry is one decoded record as a lookup returns it: the record, its
// address, and where it is stored.
type Entry struct {
	// Record is the decoded value, normalized at apply time: a Host that is
	// a domain name is made fully qualified, and Owner is dropped.
	Record contract.Record
	// IP is Host parsed as an address: 4 bytes for IPv4, 16 for IPv6, nil
	// when Host is a name or empty. Each lookup returns its own copy.
	IP net.IP

	prefix  string  // the snapshot's prefix, without a trailing "/"
	treeKey treeKey // shared with the leaf
}

// Key is the full etcd key, prefix included. It is built on each call.
func (e *Entry) Key() string {
	k := e.treeKey
	if k.tail == "" {
		return e.prefix + "/" + k.head[:len(k.head)-1]
	}
	return e.prefix + "/" + k.head + k.tail[:len(k.tail)-1]
}

// Depth is the number of labels of the key below the prefix.
func (e *Entry) Depth() int { return e.treeKey.depth() }

// value is one record packed into a string, as a leaf stores it after
// its key (see leaf). Layout: a flags byte, ttl, port, priority, weight and targetstrip as
// uvarints, the address's 4 or 16 bytes, then host, text and group, each
// as a uvarint length and its bytes.
type value string

const (
	flagIPv4 = 1 << iota
	flagIPv6
	flagMail
)

// pack returns the tree key of the record at relativeKey (see relativeKey)
// and the packed value of the record, whose numbers Decode checked, both
// cut from one string.
func pack(relativeKey string, r contract.Record, ip net.IP) (string, value) {
	// Room for the key, its "/", the flags, five uvarints (at most 5+3+3+3+1
	// bytes), the address and three length-prefixed strings.
	var b strings.Builder
	b.Grow(len(relativeKey) + 1 + 16 + len(ip) + 3*binary.MaxVarintLen16 + len(r.Host) + len(r.Text) + len(r.Group))
	b.WriteString(relativeKey)
	b.WriteByte('/')
	treeKeyLen := b.Len()
	var flags byte
	switch len(ip) {
	case net.IPv4len:
		flags |= flagIPv4
	case net.IPv6len:
		flags |= flagIPv6
	}
	if r.Mail {
		flags |= flagMail
	}
	b.WriteByte(flags)
	var n [binary.MaxVarintLen64]byte
	for _, u := range [...]uint64{uint64(r.TTL), uint64(r.Port), uint64(r.Priority), uint64(r.Weight), uint64(r.TargetStrip)} {
		b.Write(binary.AppendUvarint(n[:0], u))
	}
	b.Write(ip)
	for _, text := range [...]string{r.Host, r.Text, r.Group} {
		b.Write(binary.AppendUvarint(n[:0], uint64(len(text))))
		b.WriteString(text)
	}
	all := b.String()
	return all[:treeKeyLen], value(all[treeKeyLen:])
}

// entry unpacks v, stored at treeKey, for a caller. Host, Text and Group
// share v's bytes; IP is a copy.
func (s *Snapshot) entry(k treeKey, v value) Entry {
	d := unpacker{rest: string(v)}
	flags := d.byte()
	e := Entry{prefix: s.prefix, treeKey: k, Record: contract.Record{
		Mail: flags&flagMail != 0, TTL: uint32(d.uvarint()), Port: d.int(), Priority: d.int(),
		Weight: d.int(), TargetStrip: d.int()}}
	switch {
	case flags&flagIPv4 != 0:
		e.IP = net.IP(d.bytes(net.IPv4len))
	case flags&flagIPv6 != 0:
		e.IP = net.IP(d.bytes(net.IPv6len))
	}
	e.Record.Host, e.Record.Text, e.Record.Group = d.text(), d.text(), d.text()
	return e
}

// unpacker reads a value front to back. Values are only made by pack, so
// it does not check for truncation beyond what slicing does.
type unpacker struct{ rest string }

func (d *unpacker) byte() byte {
	c := d.rest[0]
	d.rest = d.rest[1:]
	return c
}

func (d *unpacker) uvarint() uint64 {
	var n uint64
	for shift := 0; ; shift += 7 {
		c := d.byte()
		n |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return n
		}
	}
}

func (d *unpacker) int() int { return int(d.uvarint()) }

func (d *unpacker) bytes(n int) []byte {
	b := []byte(d.rest[:n])
	d.rest = d.rest[n:]
	return b
}

func (d *unpacker) text() string {
	n := d.int()
	t := d.rest[:n]
	d.rest = d.rest[n:]
	return t
}
