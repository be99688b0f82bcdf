package kinds

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

// Kind is one test kind: both halves of a test.
type Kind interface {
	// Measure is the client's half, from the server's start to the end
	// of its own loops. A kind that ends the test itself (bidirectional)
	// also returns the server's result (Measured.Served).
	Measure(t *ClientTest) (Measured, error)
	// Respond is the server's half of a test whose endpoints are
	// connected: its loops, the start message, the client's end and its
	// result. An error after the result was sent is the loops' (the
	// session reports it); nil lets a verify pass follow.
	Respond(t *ServerTest) error
}

// Of is the kind of a valid test s, the same on both sides.
func Of(s spec.Spec) Kind {
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

// Serve is the server's half of a test whose data plane is connected: its
// kind, then its verify pass (spec.Spec.Validate refuses --verify with -b).
func Serve(t *ServerTest) error {
	if err := Of(t.Spec).Respond(t); err != nil {
		return err
	}
	if t.Spec.Verify { // after the measured run: see verify.go
		return VerifyPass{}.Respond(t)
	}
	return nil
}

// Measured is what a kind's client half measured.
type Measured struct {
	Res    result.Result
	Total  int64   // operations the client posted, warm-up included: the end's total
	Totals []int64 // per measured QP (several QPs), for the end
	// Served is the server's result when the kind ended the test itself
	// (nil: the lifecycle sends the end and takes the result).
	Served *proto.ServerResult
}

// ClientTest is one test on the client, as its kind sees it: the spec,
// the control channel and the watch of the server, the connected data
// plane. It lives from the server's start to the client's result.
type ClientTest struct {
	Ctx  context.Context
	C    ctrl.Chan // to the server; while the test runs the Watch reads it
	Peer string    // the server's address, for errors
	Spec spec.Spec
	Opts measure.Options
	// Watch reads the server's messages from its start to its result.
	Watch *Watch
	Abort *TestAbort // whatever aborts the test goes through it
	// StopHeartbeat stops the client's heartbeat (idempotent): a kind
	// that sends the end itself calls it first.
	StopHeartbeat func()
	EPs           *endpoint.Test // RDMA kinds
	TCP           *TCPData       // tcpKind
}

// ServerTest is one test on the server, as its kind sees it. It lives
// from the connected endpoints to the server's result (and verify pass).
type ServerTest struct {
	C    ctrl.Chan // to the client
	Spec spec.Spec
	EPs  *endpoint.Test // RDMA kinds
	TCP  *TCPData       // tcpKind
	CPUs []int          // the responder loops' CPUs (ServerCPU); nil: not pinned
	Log  *log.Logger
}

// TCPData is a TCP test's data connection and its engine (tcp.go).
type TCPData struct {
	dc  *net.TCPConn
	Eng *sockeng.Engine // the loop, for the test's abort
}

// Close closes the engine and the connection.
func (d *TCPData) Close() {
	d.Eng.Close()
	d.dc.Close()
}
