package poll

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	calls := 0
	err := Until(context.Background(), 10*time.Second, func(context.Context) error {
		if calls++; calls < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("Until = %v after %d calls, want nil after 3", err, calls)
	}
}

func TestUntilStopsAtAPermanentError(t *testing.T) {
	gone := errors.New("the process exited")
	err := Until(context.Background(), 10*time.Second, func(context.Context) error { return Permanent(gone) })
	if !errors.Is(err, gone) {
		t.Fatalf("Until = %v, want %v", err, gone)
	}
}

func TestUntilTimesOutWithTheLastError(t *testing.T) {
	err := Until(context.Background(), 120*time.Millisecond, func(context.Context) error { return errors.New("still down") })
	if err == nil || !strings.Contains(err.Error(), "not done after 120ms: still down") {
		t.Fatalf("Until = %v", err)
	}
}

func TestHTTPOKSaysWhatAnsweredInstead(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			fmt.Fprint(w, "ok")
			return
		}
		http.Error(w, "not synced", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	if err := HTTPOK(context.Background(), srv.Client(), srv.URL+"/readyz"); err != nil {
		t.Fatalf("HTTPOK on a 200: %v", err)
	}
	err := HTTPOK(context.Background(), srv.Client(), srv.URL+"/other")
	if err == nil || !strings.Contains(err.Error(), "503 Service Unavailable not synced") {
		t.Fatalf("HTTPOK on a 503 = %v", err)
	}
}
