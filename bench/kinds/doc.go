// Package kinds holds the test kinds. A kind is one type with both
// halves of a test: the client's measured phase (Measure) and the
// server's answer (Respond). Of looks the kind up from the Spec alone, the
// same on both sides; bench's Client.Run and bench/server's
// Server.runTest (through Serve) run the shared lifecycle around it:
//
//	client: connect (exchange, rdma_cm or TCP) → ready → watch + heartbeat
//	        → Kind.Measure → finish (the end, the server's result)
//	        → the verify pass (verify.go) → the result's shared fields
//	server: connect → Kind.Respond (its loops, start, the client's end,
//	        its result) → the verify pass
//
// A kind talks to its peer only through its test's control channel
// (ctrl.Chan: t.C), never through the Client or the Server, and gets
// everything it needs in its ClientTest or ServerTest. The kinds:
//
//	latKind      latency (bench/measure's Lat; lat.go)
//	bwKind       bandwidth on one QP (bench/measure's BW; bw.go)
//	multiKind    bandwidth on several QPs (multi.go)
//	loadKind     latency under load (load.go)
//	bidirKind    bidirectional bandwidth (bidir.go)
//	tcpKind      the kernel-TCP baseline (tcp.go)
//
// and one pass after any RDMA kind: VerifyPass (verify.go). The package
// also holds what the kinds share: the server's responder loops
// (responder.go), the watch of the server, the heartbeats and the abort of
// a running test (watch.go).
package kinds
