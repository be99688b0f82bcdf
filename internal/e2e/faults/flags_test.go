package faults

import (
	"fmt"
	"time"
)

// Absurd flag values: each is refused with a clear message naming the
// value (and its limit) and the right exit code within a few seconds,
// before any test or connection (2: usage), or, for what the device lacks,
// once the device is open and before the first test (3). No case needs a
// server: a client that got as far as connecting would fail differently.

// flagCase is one command line and what rdmabench must say to it.
type flagCase struct {
	name    string
	code    int
	mention []string
	args    []string
}

const hugeCPU = "9223372036854775806-9223372036854775807"

var flagCases = []flagCase{
	{"rate-nan", 2, []string{"rate NaN", "1..1e+08"}, []string{"run", "127.0.0.1", "--rate", "NaN"}},
	{"rate-inf", 2, []string{"rate +Inf"}, []string{"run", "127.0.0.1", "--rate", "Inf"}},
	{"rate-0.001", 2, []string{"rate 0.001 ops/s out of range 1.."}, []string{"run", "127.0.0.1", "--rate", "0.001"}},
	{"rate-negative", 2, []string{"rate -5"}, []string{"loopback", "--rate", "-5"}},
	{"server-gid-index-minus-5", 2, []string{"--gid-index -5"}, []string{"server", "-x", "-5"}},
	{"client-gid-index-minus-1", 2, []string{"--gid-index -1"}, []string{"run", "127.0.0.1", "-x", "-1"}},
	{"gid-index-300", 2, []string{"--gid-index 300", "0..255"}, []string{"loopback", "-x", "300"}},
	{"ib-port-0", 2, []string{"--ib-port 0", "1..255"}, []string{"server", "-i", "0"}},
	{"cpu-int64-range", 2, []string{"CPU 9223372036854775807 out of range"}, []string{"run", "127.0.0.1", "--cpu", hugeCPU}},
	{"server-cpu-int64-range", 2, []string{"CPU 9223372036854775807 out of range"}, []string{"server", "--cpu", hugeCPU}},
	{"cpu-overflow", 2, []string{"99999999999999999999"}, []string{"loopback", "--cpu", "0-99999999999999999999"}},
	{"warmup-minus-7", 2, []string{"--warmup -7"}, []string{"run", "127.0.0.1", "--warmup", "-7"}},
	{"json-unwritable", 2, []string{"--json /proc/rdmabench/r.json"}, []string{"run", "127.0.0.1", "--json", "/proc/rdmabench/r.json"}},
	{"json-directory", 2, []string{"--json /tmp"}, []string{"loopback", "--json", "/tmp"}},
	{"hgrm-unwritable", 2, []string{"--hgrm /proc/nope/h"}, []string{"loopback", "--hgrm", "/proc/nope/h"}},
	{"iters-negative", 2, []string{"iterations -1"}, []string{"run", "127.0.0.1", "--iters", "-1"}},
	{"iters-overflow", 2, []string{"99999999999999999999"}, []string{"run", "127.0.0.1", "--iters", "99999999999999999999"}},
	{"duration-negative", 2, []string{"duration -5s"}, []string{"run", "127.0.0.1", "--duration", "-5s"}},
	{"duration-48h", 2, []string{"duration 48h0m0s"}, []string{"run", "127.0.0.1", "--duration", "48h"}},
	{"warmup-time-negative", 2, []string{"warm-up time -1s"}, []string{"run", "127.0.0.1", "--warmup-time", "-1s"}},
	{"tx-depth-negative", 2, []string{"tx depth -1"}, []string{"run", "127.0.0.1", "--mode", "bw", "--tx-depth", "-1"}},
	{"tx-depth-40000", 2, []string{"tx depth 40000 out of range 1..32768"}, []string{"run", "127.0.0.1", "--mode", "bw", "--tx-depth", "40000"}},
	{"rx-depth-negative", 2, []string{"rx depth -2"}, []string{"run", "127.0.0.1", "--rx-depth", "-2"}},
	{"cq-mod-negative", 2, []string{"CQ moderation -1"}, []string{"run", "127.0.0.1", "--mode", "bw", "--cq-mod", "-1"}},
	{"qps-5000", 2, []string{"QPs 5000 out of range 1..1024"}, []string{"run", "127.0.0.1", "--mode", "bw", "--qps", "5000"}},
	{"threads-negative", 2, []string{"threads -1"}, []string{"run", "127.0.0.1", "--mode", "bw", "--threads", "-1"}},
	{"load-qps-negative", 2, []string{"--load-qps -3"}, []string{"run", "127.0.0.1", "--load-qps", "-3"}},
	{"load-qps-65", 2, []string{"--load-qps 65 out of range 0..64"}, []string{"run", "127.0.0.1", "--load-qps", "65"}},
	{"post-list-negative", 2, []string{"post list -1"}, []string{"run", "127.0.0.1", "--mode", "bw", "--post-list", "-1"}},
	{"mtu-negative", 2, []string{"MTU -1"}, []string{"run", "127.0.0.1", "--mtu", "-1"}},
	{"sl-16", 2, []string{"service level 16"}, []string{"run", "127.0.0.1", "--sl", "16"}},
	{"tclass-negative", 2, []string{"traffic class -1"}, []string{"run", "127.0.0.1", "--tclass", "-1"}},
	{"inline-negative", 2, []string{`--inline-size "-1"`}, []string{"run", "127.0.0.1", "--inline-size", "-1"}},
	{"qp-timeout-32", 2, []string{"QP timeout 32"}, []string{"run", "127.0.0.1", "--qp-timeout", "32"}},
	{"size-2G", 2, []string{`size "2G" exceeds`}, []string{"run", "127.0.0.1", "--size", "2G"}},
	{"size-negative", 2, []string{`size "-4"`}, []string{"run", "127.0.0.1", "--size", "-4"}},
	{"client-port-0", 2, []string{"--port 0 out of range 1..65535"}, []string{"run", "127.0.0.1", "-p", "0"}},
	{"server-port-70000", 2, []string{"control port 70000"}, []string{"server", "-p", "70000"}},
	{"connect-timeout-negative", 2, []string{"--connect-timeout -1s"}, []string{"run", "127.0.0.1", "--connect-timeout", "-1s"}},
	{"interval-negative", 2, []string{"--interval -1s"}, []string{"run", "127.0.0.1", "--interval", "-1s"}},
	{"max-memory-zero", 2, []string{`memory size "0"`}, []string{"server", "--max-memory", "0"}},
	{"max-memory-overflow", 2, []string{`memory size "99999999T"`}, []string{"server", "--max-memory", "99999999T"}},
	{"max-qps-negative", 2, []string{"--max-qps -1"}, []string{"server", "--max-qps", "-1"}},
	// what the device lacks: exit 3 once it is open, before the first test
	{"tx-depth-32768-rxe", 3, []string{"tx depth 32768", "max_cqe"}, []string{"loopback", "--op", "send,write", "--mode", "bw", "--tx-depth", "32768", "--iters", "100"}},
	{"inline-1024-rxe", 3, []string{"--inline-size 1024", "grants at most"}, []string{"loopback", "--op", "send", "--mode", "lat", "--inline-size", "1024", "--iters", "100"}},
}

func init() {
	for _, f := range flagCases {
		register(Case{Group: "flags", Name: f.name, Run: func(t *Fx) error {
			limit := 6 * time.Second // refused before any work: the process's start under the guest's emulation (3.1-4.3 s seen on a loaded host)
			if f.code == 3 {
				limit = 10 * time.Second // opens the device (and probes inline sizes) first
			}
			if err := t.ExpectExit(f.code, limit, f.mention, f.args...); err != nil {
				return fmt.Errorf("rdmabench %v: %w", f.args, err)
			}
			return nil
		}, Parallel: f.code == 2}) // usage errors need no device: nothing to contend for
	}
}
