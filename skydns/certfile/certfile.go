// Package certfile serves a TLS certificate read from a PEM certificate
// file and key file, and reads them again when either changes: each TLS
// handshake compares the files' modification times and sizes with those
// of the pair in use, so a certificate rotated on disk is served from the
// next connection on.
package certfile

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"
)

// Pair is a certificate and key kept current with their files.
type Pair struct {
	certFile, keyFile string

	mu    sync.Mutex // guards cert and stamp
	cert  *tls.Certificate
	stamp stamp
}

// stamp is what tells that the files changed.
type stamp struct {
	certMod, keyMod   time.Time
	certSize, keySize int64
}

// Load reads certFile and keyFile. Errors name the flag of the file at
// fault: --tls-cert or --tls-key.
func Load(certFile, keyFile string) (*Pair, error) {
	p := &Pair{certFile: certFile, keyFile: keyFile}
	st, err := p.stat()
	if err != nil {
		return nil, err
	}
	if err := p.read(st); err != nil {
		return nil, err
	}
	return p, nil
}

// GetCertificate is tls.Config.GetCertificate: the pair, read again first
// if the files changed. While the files do not make a pair (half
// written), the last good one is served.
func (p *Pair) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	st, err := p.stat()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil && st != p.stamp {
		_ = p.readLocked(st) // on failure the stamp stays, so the next handshake tries again
	}
	return p.cert, nil
}

// stat reads the files' stamp.
func (p *Pair) stat() (stamp, error) {
	c, err := os.Stat(p.certFile)
	if err != nil {
		return stamp{}, fmt.Errorf("--tls-cert: %w", err)
	}
	k, err := os.Stat(p.keyFile)
	if err != nil {
		return stamp{}, fmt.Errorf("--tls-key: %w", err)
	}
	return stamp{certMod: c.ModTime(), keyMod: k.ModTime(), certSize: c.Size(), keySize: k.Size()}, nil
}

func (p *Pair) read(st stamp) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.readLocked(st)
}

// readLocked reads both files and, if they make a pair, keeps it as of st.
func (p *Pair) readLocked(st stamp) error {
	certPEM, err := os.ReadFile(p.certFile)
	if err != nil {
		return fmt.Errorf("--tls-cert: %w", err)
	}
	keyPEM, err := os.ReadFile(p.keyFile)
	if err != nil {
		return fmt.Errorf("--tls-key: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("--tls-cert %s, --tls-key %s: %w", p.certFile, p.keyFile, err)
	}
	p.cert, p.stamp = &cert, st
	return nil
}
