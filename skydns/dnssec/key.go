package dnssec

import (
	"crypto"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/miekg/dns"
)

// Algorithm is the only algorithm accepted: ECDSA P-256 with SHA-256.
const Algorithm = dns.ECDSAP256SHA256

// Key is one zone key: its public DNSKEY and its private half.
type Key struct {
	DNSKEY *dns.DNSKEY
	Signer crypto.Signer
}

// Zone is the key's zone: the DNSKEY's owner, lower case.
func (k Key) Zone() string { return dns.CanonicalName(k.DNSKEY.Hdr.Name) }

// SEP reports whether the key is a key-signing key (flag 257).
func (k Key) SEP() bool { return k.DNSKEY.Flags&dns.SEP != 0 }

// ReadKey reads the key pair named by path: K<zone>+013+<tag> with or
// without the .key or .private extension.
func ReadKey(path string) (Key, error) {
	base := strings.TrimSuffix(strings.TrimSuffix(path, ".key"), ".private")
	pub, err := readPublic(base + ".key")
	if err != nil {
		return Key{}, err
	}
	if pub.Algorithm != Algorithm {
		return Key{}, fmt.Errorf("%s.key: algorithm %d, want %d (ECDSAP256SHA256)", base, pub.Algorithm, Algorithm)
	}
	signer, err := readPrivate(pub, base+".private")
	if err != nil {
		return Key{}, err
	}
	return Key{DNSKEY: pub, Signer: signer}, nil
}

// readPublic reads the DNSKEY record of a .key file.
func readPublic(file string) (*dns.DNSKEY, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rr, err := dns.ReadRR(f, file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	k, ok := rr.(*dns.DNSKEY)
	if !ok {
		return nil, fmt.Errorf("%s: not a DNSKEY record", file)
	}
	return k, nil
}

// readPrivate reads the private key of pub from a .private file.
func readPrivate(pub *dns.DNSKEY, file string) (crypto.Signer, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	priv, err := pub.ReadPrivateKey(f, file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	signer, ok := priv.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s: not a signing key", file)
	}
	return signer, nil
}

// ReadKeys reads every key of paths (see ReadKey). Each error names its
// file.
func ReadKeys(paths []string) ([]Key, error) {
	keys := make([]Key, 0, len(paths))
	var errs []error
	for _, p := range paths {
		k, err := ReadKey(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		keys = append(keys, k)
	}
	return keys, errors.Join(errs...)
}

// DS is the DS record of k for the parent zone (digest SHA-256).
func DS(k Key) *dns.DS { return k.DNSKEY.ToDS(dns.SHA256) }

// NewKey makes a new key pair for zone (a KSK or CSK when sep is set, a ZSK
// otherwise) and writes it to dir as K<zone>+013+<tag>.key and .private;
// it returns the files' path without the extension.
func NewKey(dir, zone string, sep bool) (string, error) {
	k := &dns.DNSKEY{Hdr: dns.RR_Header{Name: dns.Fqdn(strings.ToLower(zone)), Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: DNSKEYTTL},
		Flags: dns.ZONE, Protocol: 3, Algorithm: Algorithm}
	if sep {
		k.Flags |= dns.SEP
	}
	priv, err := k.Generate(256)
	if err != nil {
		return "", err
	}
	base := fmt.Sprintf("%s/K%s+%03d+%05d", dir, k.Hdr.Name, k.Algorithm, k.KeyTag())
	if err := os.WriteFile(base+".key", []byte(k.String()+"\n"), 0o644); err != nil {
		return "", err
	}
	return base, os.WriteFile(base+".private", []byte(k.PrivateKeyString(priv)), 0o600)
}
