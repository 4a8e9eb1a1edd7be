package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
)

// maxBody bounds how much of the answer is read and printed.
const maxBody = 4096

// probe GETs the URL and returns the body of a 200 answer; anything else
// is an error carrying the status and the body.
func probe(o options) ([]byte, error) {
	if err := checkURL(o.url); err != nil {
		return nil, err
	}
	client, err := newClient(o)
	if err != nil {
		return nil, err
	}
	resp, err := client.Get(o.url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	body = bytes.TrimSpace(body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", o.url, resp.Status, body)
	}
	return body, nil
}

func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("%q is not an http:// or https:// URL with a host", raw)
	}
	return nil
}

func newClient(o options) (*http.Client, error) {
	cfg := &tls.Config{InsecureSkipVerify: o.insecure} //nolint:gosec // opt-in, for self-signed liveness endpoints
	if o.caFile != "" {
		pool, err := loadCA(o.caFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	transport := &http.Transport{TLSClientConfig: cfg, Proxy: nil}
	return &http.Client{Timeout: o.timeout, Transport: transport}, nil
}

func loadCA(path string) (*x509.CertPool, error) {
	pemBytes, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--cacert: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		return nil, fmt.Errorf("--cacert: %s holds no PEM certificate", path)
	}
	return pool, nil
}
