package peer

import (
	"time"

	"github.com/rdmabench/rdmabench/bench/perftest/wire"
)

// loopExchange is what the loops (loopKind) swap with the perftest peer
// after the barrier after RTR: QP 0's record (the size syncs, the barrier
// after the loop, the closing handshake), the bandwidth reports, and the
// bandwidth tools' closing "done". *wire.Conn is the one Run uses, over
// the TCP connection or -R's rdma_cm channel; the sequencing tests use an
// in-memory pair (exchange_test.go).
type loopExchange interface {
	// Dest swaps this side's record ours for the peer's; field names the
	// step in errors and traces.
	Dest(ours wire.Dest, withGID bool, field string) (wire.Dest, error)
	// SwapBWReport swaps this side's bandwidth report for the peer's.
	SwapBWReport(ours wire.BWReport) (wire.BWReport, error)
	// Swap sends mine and reads n bytes of the peer's.
	Swap(field string, mine []byte, n int) ([]byte, error)
	// SetTimeout bounds each later read and write (0: wire.DefaultTimeout).
	SetTimeout(d time.Duration)
	// SetClient sets the side that writes first in each later swap.
	SetClient(client bool)
}

var _ loopExchange = (*wire.Conn)(nil)
