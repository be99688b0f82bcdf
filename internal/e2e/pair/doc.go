// Package pair is the two-host stage as Go tests, in the pair bed
// (vmtest.Pair: guests g1 198.51.100.1 and g2 198.51.100.2 on one wire,
// rxe2 on eth0 in each). The tests run in g1: each starts 'rdmabench
// server --bind <g2>' on g2 through g2's agent (vmtest.Peer.Command) and
// runs clients here with no -d, so that both sides must choose rxe2 by
// route: SEND/WRITE/READ latency and bandwidth with and without rdma_cm,
// UD and 4 QPs across the wire, the loopback-GID refusal and doctor's
// peer-mtu check (pair_test.go); the kill and stop cases of either side
// (kills_test.go: TestClientKilled, TestClientStopped, TestServerKilled,
// TestServerStopped), which wait on deadlines. Outside a guest it skips.
package pair
