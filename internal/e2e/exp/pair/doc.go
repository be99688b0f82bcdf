// Package pair holds the experiments on the two-guest bed (vmtest.Pair: g1
// 198.51.100.1 and g2 198.51.100.2 on one wire, rxe2 on each eth0), behind the
// build tag experiment so that make test never builds them. The test binary
// runs in g1, which runs the clients (and the netem loss on its eth0); the
// servers run in g2 through the bed's agent (vmtest.Peer.Command), under the
// test binary's serve helper (internal/e2e/exp/expkit). One test per target:
//
//	TestSmoke     make pair-smoke: ping, ib_send_lat and rdmabench send lat across the wire
//	TestLossTail  make bench: loss and the tail (netem loss rates; table.md, latency.svg)
//	TestBidir     make bench: rdmabench -b against ib_write_bw -b, ABBA BAAB
//	TestWireBW    make bench-wire, make bench: 64 KiB WRITE bandwidth against ib_write_bw
//	TestTimeline  make pair-timeline: counter timelines on a lossy wire
//
// Parameters come from the environment with the old scripts' names and
// defaults (WIRE_ROUNDS, LOSS_RATES, ...); files go to $RDMABENCH_OUT (the
// Makefile: /out, which is build/<target> on the host).
package pair
