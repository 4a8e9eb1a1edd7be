package source

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestUntilAcceptedAsksAgainOnlyWhileTheAPIServerIsUnavailable: requests
// refused for want of a server are made again, soon, until one is taken;
// an error about the request itself is returned at once; a canceled
// context ends the retries.
func TestUntilAcceptedAsksAgainOnlyWhileTheAPIServerIsUnavailable(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	gone := schema.GroupResource{Resource: "services"}
	for _, tc := range []struct {
		name      string
		errs      []error // returned by the calls in turn, then nil
		wantCalls int
		wantErr   bool
	}{
		{"refused connections, then taken", []error{refused, refused, refused}, 4, false},
		{"an API server starting up (503), then taken", []error{apierrors.NewServiceUnavailable("starting")}, 2, false},
		{"too many requests (429), then taken", []error{apierrors.NewTooManyRequests("slow down", 1)}, 2, false},
		{"forbidden: returned at once", []error{apierrors.NewForbidden(gone, "", errors.New("no"))}, 1, true},
		{"gone: returned at once, for the reflector to list again", []error{apierrors.NewResourceExpired("too old")}, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			start := time.Now()
			out, err := untilAccepted(t.Context(), func(context.Context) (int, error) {
				calls++
				if calls <= len(tc.errs) {
					return 0, tc.errs[calls-1]
				}
				return 42, nil
			})
			if calls != tc.wantCalls || (err != nil) != tc.wantErr || (err == nil && out != 42) {
				t.Fatalf("%d calls, %d, %v; want %d calls, error %v", calls, out, err, tc.wantCalls, tc.wantErr)
			}
			if took, most := time.Since(start), time.Duration(calls)*acceptRetryMax; took > most {
				t.Errorf("took %v, want under %v: no retry waits more than %v", took, most, acceptRetryMax)
			}
		})
	}
	t.Run("a canceled context ends the retries", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		calls := 0
		_, err := untilAccepted(ctx, func(context.Context) (int, error) {
			calls++
			cancel()
			return 0, refused
		})
		if calls != 1 || err == nil {
			t.Fatalf("%d calls, error %v; want 1 call and the error", calls, err)
		}
	})
}
