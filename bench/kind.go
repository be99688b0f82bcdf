package bench

// Test kinds. A kind is one type with both halves of a test: the client's
// measured phase (measure) and the server's answer (respond). kindOf looks
// the kind up from the Spec alone, the same on both sides; Client.Run and
// Server.serve run the shared lifecycle around it:
//
//	client: connect (exchange, rdma_cm or TCP) → ready → watch + heartbeat
//	        → kind.measure → finish (the end, the server's result)
//	        → the verify pass (verify.go) → the result's shared fields
//	server: connect → kind.respond (its loops, start, the client's end,
//	        its result) → the verify pass
//
// A kind talks to its peer only through its test's control channel
// (ctrl.Chan: t.c), never through the Client or the Server, and gets
// everything it needs in its clientTest or serverTest. The kinds:
//
//	latKind      latency (bench/measure's Lat; lat.go)
//	bwKind       bandwidth on one QP (bench/measure's BW; bw.go)
//	multiKind    bandwidth on several QPs (multi.go)
//	loadKind     latency under load (load.go)
//	bidirKind    bidirectional bandwidth (bidir.go)
//	tcpKind      the kernel-TCP baseline (tcp.go)
//
// and one pass after any RDMA kind: verifyPass (verify.go).

import (
	"context"
	"log"
	"net"

	"github.com/rdmabench/rdmabench/bench/ctrl"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/sockeng"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// kind is one test kind: both halves of a test.
type kind interface {
	// measure is the client's half, from the server's start to the end
	// of its own loops. A kind that ends the test itself (bidirectional)
	// also returns the server's result (measured.served).
	measure(t *clientTest) (measured, error)
	// respond is the server's half of a test whose endpoints are
	// connected: its loops, the start message, the client's end and its
	// result. An error after the result was sent is the loops' (the
	// session reports it); nil lets a verify pass follow.
	respond(t *serverTest) error
}

// kindOf is the kind of a valid test s.
func kindOf(s spec.Spec) kind {
	switch {
	case s.Transport == result.TransportTCP:
		return tcpKind{}
	case s.Bidirectional:
		return bidirKind{}
	case s.Mode == result.ModeLat && s.Load != nil:
		return loadKind{}
	case s.Mode == result.ModeLat:
		return latKind{}
	case s.NumQPs() > 1:
		return multiKind{}
	}
	return bwKind{}
}

// measured is what a kind's client half measured.
type measured struct {
	res    result.Result
	total  int64   // operations the client posted, warm-up included: the end's total
	totals []int64 // per measured QP (several QPs), for the end
	// served is the server's result when the kind ended the test itself
	// (nil: the lifecycle sends the end and takes the result).
	served *proto.ServerResult
}

// clientTest is one test on the client, as its kind sees it: the spec,
// the control channel and the watch of the server, the connected data
// plane. It lives from the server's start to the client's result.
type clientTest struct {
	ctx  context.Context
	c    ctrl.Chan // to the server; while the test runs the watch w reads it
	peer string    // the server's address, for errors
	spec spec.Spec
	o    measure.Options
	w    *serverWatch
	ab   *testAbort // whatever aborts the test goes through it
	// stopHeartbeat stops the client's heartbeat (idempotent): a kind
	// that sends the end itself calls it first.
	stopHeartbeat func()
	eps           *endpoint.Test // RDMA kinds
	tcp           *tcpData       // tcpKind
}

// serverTest is one test on the server, as its kind sees it. It lives
// from the connected endpoints to the server's result (and verify pass).
type serverTest struct {
	c    ctrl.Chan // to the client
	spec spec.Spec
	eps  *endpoint.Test // RDMA kinds
	tcp  *tcpData       // tcpKind
	cpus []int          // the responder loops' CPUs (serverCPU); nil: not pinned
	log  *log.Logger
}

// tcpData is a TCP test's data connection and its engine (tcp.go).
type tcpData struct {
	dc  *net.TCPConn
	eng *sockeng.Engine
}

// close closes the engine and the connection.
func (d *tcpData) close() {
	d.eng.Close()
	d.dc.Close()
}
