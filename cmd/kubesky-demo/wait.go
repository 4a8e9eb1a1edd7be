package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"time"

	"github.com/kubesky/kubesky/internal/poll"
)

// httpOK returns nil when url answers 200. caFile, if set, verifies an
// https:// URL.
func httpOK(ctx context.Context, url, caFile string) error {
	client, err := httpClient(caFile)
	if err != nil {
		return err
	}
	return poll.HTTPOK(ctx, client, url)
}

func httpClient(caFile string) (*http.Client, error) {
	transport := &http.Transport{Proxy: nil}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		transport.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	return &http.Client{Timeout: 2 * time.Second, Transport: transport}, nil
}
