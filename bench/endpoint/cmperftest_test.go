package endpoint

import (
	"errors"
	"fmt"
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
