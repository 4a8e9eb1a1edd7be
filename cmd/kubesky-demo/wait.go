package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// poll calls cond until it returns nil, ctx ends, timeout passes, or cond
// returns an error made by permanent; the error then carries cond's last
// error. The interval starts at 50ms and doubles up to 1s.
func poll(ctx context.Context, timeout time.Duration, cond func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	interval := 50 * time.Millisecond
	for {
		err := cond(ctx)
		if err == nil {
			return nil
		}
		var p permanentError
		if errors.As(err, &p) {
			return p.err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not done after %s: %w", timeout, err)
		case <-time.After(interval):
		}
		interval = min(2*interval, time.Second)
	}
}

// permanent wraps err so that poll returns it at once: the condition can
// no longer become true.
func permanent(err error) error { return permanentError{err} }

type permanentError struct{ err error }

func (p permanentError) Error() string { return p.err.Error() }

// httpOK returns nil when url answers 200. caFile, if set, verifies an
// https:// URL.
func httpOK(ctx context.Context, url, caFile string) error {
	client, err := httpClient(caFile)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
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
