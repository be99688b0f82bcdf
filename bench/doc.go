// Package bench is the benchmark engine: the client sends each test
// (a bench/spec Spec) to the server over the control protocol
// (bench/proto), both sides build endpoints (QPs, CQs, registered memory
// from verbs pools), the C loop in verbs runs the timed traffic, and the
// samples become a result.Result in a Document (bench/result).
//
// What one test is lives in bench/spec (pure Go): Spec, Plan, defaults,
// validation, the op table; callers use its names directly (spec.Spec,
// spec.MaxSize, ...). The host's environment lives in bench/hostenv (pure
// Go). docs/architecture.md has
// the map of every package; TestDocMap holds the list below to the files.
//
// Files by concept:
//
// The server: server.go (config, devices, timeouts), listener.go (the
// accept loop, protected mode, shutdown; the caps on unauthenticated
// connections and --allow are bench/admit's), session.go (one client's session:
// admission, handshake, busy lock, limits), serveonce.go (--once: stop
// after the first session that ran a test; the shared key and the
// challenge-response are bench/auth's), responder.go (the server's side of one test),
// doctorserve.go (the server's answer to a doctor request, the verbs side
// of rdmabench doctor), onesession.go (the perftest drop-in's listeners:
// one session, and its first bytes peeked).
//
// The perftest drop-in facing a real perftest tool: perftestpeer.go
// (perftest's exchange, bench/perftest/wire, around rdmabench's endpoints
// and loops), perftestcm.go (-R: the exchange over an rdma_cm channel,
// bench/cmchan, and the test's QPs connected by rdma_cm; what UC and UD
// change there is bench/perftest's), perftestloop.go (each side's loop
// part once the QPs are connected: -a's sizes, the reports, the closing
// handshake), perftestduration.go (-D: the SEND receiver, the ping-pong
// sides that stop on their own clock; the margins are bench/perftest's),
// perftestbidir.go (-b), perftestpeak.go (perftest's BW peak from the C
// loop's post and completion stamps).
//
// The attackers of rdmabench isolation (bench/isolation) are load kinds:
// load.go's streams drive the load QPs round robin (Load.Threads), run
// the registration churn (Load.ChurnSize), and its startRNRReceivers is
// the server's side of an RNR storm (Load.RNR).
//
// The client: client.go (one control session), run.go (a whole client
// run and loopback), repeat.go (--repeat), loadsweep.go (--load-sweep),
// watch.go (heartbeats and the peer watch of a running test).
//
// Devices and routes: device.go (an open device and what it supports),
// devicelimits.go (a test list held to a device's limits up front, for
// rdmabench cliffs), devicereport.go (rdmabench devices), route.go (the device chosen by
// route, and pairs that cannot talk; the netdev to device and port map
// through sysfs is bench/hostenv's), asyncevents.go (fatal async events per device),
// placement.go (NUMA placement), devlimit.go (a QP, CQ or SRQ the device
// cannot size: exit 3), inline.go (the inline size: device
// probe, perftest's rules).
//
// The data plane: endpoint.go (one QP and its engine), testendpoints.go
// (all QPs of one test), opverbs.go (the verbs half of the op table),
// memory.go (the registered pools, ODP), meminfo.go (/proc/meminfo and
// huge pages), budget.go (the resource budget, NeedOf), srq.go (shared
// receive queues), choices.go (the differences from perftest that are
// options: relaxed ordering, address stepping, GRH, completion vectors,
// P_Key index; the CPU's cache line that address stepping rounds to is
// bench/hostenv's), cm.go (rdma_cm), measure.go (the measurement of one
// test), bwdrain.go (the one bandwidth phase loop, bwPhase, its warm-up
// and its hookup to bench/drain, the drainer of the senders' samples),
// multi.go (multi-QP bandwidth), bidir.go (bidirectional tests), load.go
// (latency under load), verify.go (the --verify pass), tcp.go (the kernel
// TCP baseline; the clock's share of a latency is bench/hostenv's). The
// workload knobs' memory (a spread test's region) is bench/spread.
//
// Where a run took place: env.go (each side's result.Env: the device, GID
// and placement, over bench/hostenv's host facts and checks),
// portcounters.go (each side's port counters around each test, and the
// sysfs reads of bench/timeline's per-interval counters).
package bench
