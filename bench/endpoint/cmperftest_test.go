package endpoint

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/rdmabench/rdmabench/verbs"
)

// TestPerftestCMRetryable: the client retries a request perftest's server
// was not listening for yet (rejected, unreachable, connect error), not
// other failures.
func TestPerftestCMRetryable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&verbs.EventError{Op: "rdma_connect", Want: verbs.CMEventEstablished, Got: verbs.CMEventRejected, Status: 8}, true},
		{fmt.Errorf("wrapped: %w", &verbs.EventError{Got: verbs.CMEventUnreachable, Status: -110}), true},
		{&verbs.EventError{Got: verbs.CMEventConnectError}, true},
		{&verbs.EventError{Got: verbs.CMEventAddrError, Status: -113}, false},
		{errors.New("rdma_create_qp: ENOMEM"), false},
	} {
		if got := cmRetryable(tc.err); got != tc.want {
			t.Errorf("cmRetryable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestCMPortTaken: an iWARP rdma_connect refused for its source port is
// made again; the same errno on another transport, or from another call,
// is not.
func TestCMPortTaken(t *testing.T) {
	taken := &verbs.Error{Op: "rdma_connect", Err: syscall.EADDRNOTAVAIL}
	for _, tc := range []struct {
		iwarp bool
		err   error
		want  bool
	}{
		{true, taken, true},
		{true, fmt.Errorf("rdma_cm QP 0 of 1: %w", taken), true},
		{true, &verbs.Error{Op: "rdma_connect", Err: syscall.EADDRINUSE}, true},
		{false, taken, false},
		{true, &verbs.Error{Op: "rdma_connect", Err: syscall.ECONNREFUSED}, false},
		{true, &verbs.Error{Op: "rdma_resolve_addr", Err: syscall.EADDRNOTAVAIL}, false},
		{true, &verbs.EventError{Op: "rdma_connect", Got: verbs.CMEventRejected}, false},
	} {
		if got := cmPortTaken(tc.iwarp, tc.err); got != tc.want {
			t.Errorf("cmPortTaken(iwarp %v, %v) = %v, want %v", tc.iwarp, tc.err, got, tc.want)
		}
	}
}
