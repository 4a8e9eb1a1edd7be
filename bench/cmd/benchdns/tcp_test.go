package main

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"slices"
	"testing"
)

func TestSkyDNSServesDoTWithACertificateFor127001(t *testing.T) {
	o, err := (&bench{work: t.TempDir()}).dotOptions()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := net.SplitHostPort(o.tlsAddr); err != nil {
		t.Fatalf("tlsAddr %q: %v", o.tlsAddr, err)
	}
	if len(o.extra) != 6 || o.extra[0] != "--tls-addr" || o.extra[1] != o.tlsAddr || o.extra[2] != "--tls-cert" || o.extra[4] != "--tls-key" {
		t.Fatalf("extra %q, want --tls-addr %s --tls-cert FILE --tls-key FILE", o.extra, o.tlsAddr)
	}
	pair, err := tls.LoadX509KeyPair(o.extra[3], o.extra[5])
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := leaf.VerifyHostname("127.0.0.1"); err != nil || !slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageServerAuth) {
		t.Fatalf("certificate for %v, uses %v: %v; want a server certificate for 127.0.0.1", leaf.IPAddresses, leaf.ExtKeyUsage, err)
	}
}
