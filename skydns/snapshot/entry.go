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
	flagHostShared // the host is stored without its leaf's host suffix
)

// pack returns the tree key of the record at relativeKey (see relativeKey)
// and the packed value of the record, whose numbers Decode checked, both
// cut from one string.
func pack(relativeKey string, r contract.Record, ip net.IP) (string, value) {
	numbers := [...]uint64{uint64(r.TTL), uint64(r.Port), uint64(r.Priority), uint64(r.Weight), uint64(r.TargetStrip)}
	texts := [...]string{r.Host, r.Text, r.Group}
	size := len(relativeKey) + 2 + len(ip) // the key, its "/", the flags, the address
	for _, u := range numbers {
		size += uvarintLen(int(u))
	}
	for _, text := range texts {
		size += uvarintLen(len(text)) + len(text)
	}
	var b strings.Builder
	b.Grow(size)
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
	for _, u := range numbers {
		b.Write(binary.AppendUvarint(n[:0], u))
	}
	b.Write(ip)
	for _, text := range texts {
		b.Write(binary.AppendUvarint(n[:0], uint64(len(text))))
		b.WriteString(text)
	}
	all := b.String()
	return all[:treeKeyLen], value(all[treeKeyLen:])
}

// stored is a value as a leaf holds it: with flagHostShared, its host
// is stored without the leaf's host suffix, which it ends with.
type stored struct {
	v          value
	hostSuffix string
}

// entry unpacks sv, stored at k, for a caller. Text and Group share the
// leaf's bytes, and so does Host unless it ends with the leaf's host
// suffix; IP is a copy.
func (s *Snapshot) entry(k treeKey, sv stored) Entry {
	d := unpacker{rest: string(sv.v)}
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
	if flags&flagHostShared != 0 {
		e.Record.Host += sv.hostSuffix
	}
	return e
}

// whole is sv's value as pack made it, its host whole.
func (sv stored) whole() value {
	before, host, after := hostField(sv.v)
	if before[0]&flagHostShared == 0 {
		return sv.v
	}
	var b strings.Builder
	host += sv.hostSuffix
	b.Grow(len(sv.v) + len(sv.hostSuffix) + binary.MaxVarintLen32)
	b.WriteByte(before[0] &^ flagHostShared)
	b.WriteString(before[1:])
	var n [binary.MaxVarintLen64]byte
	b.Write(binary.AppendUvarint(n[:0], uint64(len(host))))
	b.WriteString(host)
	b.WriteString(after)
	return value(b.String())
}

// hostField splits v around its host: the bytes before the host's length,
// the host, and the bytes after it.
func hostField(v value) (before, host, after string) {
	d := unpacker{rest: string(v)}
	flags := d.byte()
	for range 5 {
		d.uvarint()
	}
	switch {
	case flags&flagIPv4 != 0:
		d.rest = d.rest[net.IPv4len:]
	case flags&flagIPv6 != 0:
		d.rest = d.rest[net.IPv6len:]
	}
	before = string(v)[:len(v)-len(d.rest)]
	host = d.text()
	return before, host, d.rest
}

// hostIsName reports whether v's host is a name, not an address.
func hostIsName(v value) bool { return v[0]&(flagIPv4|flagIPv6) == 0 }

// sharesHost reports whether v, from pack, is stored without suffix.
func sharesHost(v value, suffix string) bool {
	if suffix == "" || !hostIsName(v) {
		return false
	}
	_, host, _ := hostField(v)
	return strings.HasSuffix(host, suffix)
}

// sharedLen is the length of v, from pack, as writeShared writes it.
func sharedLen(v value, suffix string) int {
	if !sharesHost(v, suffix) {
		return len(v)
	}
	before, host, after := hostField(v)
	short := len(host) - len(suffix)
	return len(before) + uvarintLen(short) + short + len(after)
}

// writeShared writes v, from pack, without the host suffix when its host
// ends with it (marked flagHostShared).
func writeShared(b *strings.Builder, v value, suffix string) {
	if !sharesHost(v, suffix) {
		b.WriteString(string(v))
		return
	}
	before, host, after := hostField(v)
	b.WriteByte(before[0] | flagHostShared)
	b.WriteString(before[1:])
	var n [binary.MaxVarintLen64]byte
	short := host[:len(host)-len(suffix)]
	b.Write(binary.AppendUvarint(n[:0], uint64(len(short))))
	b.WriteString(short)
	b.WriteString(after)
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
