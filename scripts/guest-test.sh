#!/bin/sh
# Runs inside the SoftRoCE guest (scripts/vm-run.sh): the RDMA test suites,
# then the command-line checks. Exits non-zero on the first failure.
set -eu
export RDMABENCH_REQUIRE_RDMA=1
fail() { echo "GUEST-TEST FAIL: $*"; exit 1; }

echo "=== verbs tests (rxe0)"
verbs.test -test.v -test.count=1 2>&1 | tee /tmp/verbs.log | grep -E '^(=== RUN|--- |PASS|FAIL|ok|\s+rdma_test)' || true
grep -q '^PASS' /tmp/verbs.log || { tail -50 /tmp/verbs.log; fail "verbs tests"; }
grep -q -- '--- SKIP' /tmp/verbs.log && fail "verbs tests skipped inside the guest"

echo "=== verbs tests with GOEXPERIMENT=cgocheck2"
verbs-cgocheck2.test -test.count=1 -test.run 'RDMA' 2>&1 | tail -3 | tee /tmp/cgocheck2.log
grep -q '^PASS' /tmp/cgocheck2.log || fail "verbs tests under cgocheck2"

echo "=== verbs benchmark"
verbs.test -test.run x -test.bench RDMA -test.benchtime 2000x 2>&1 | grep -E 'Benchmark|ok' || fail "verbs benchmark"

echo "=== bench tests (rxe0)"
# (the golden-file tests need testdata/ and run on the host)
bench.test -test.v -test.count=1 -test.run 'RDMA|Describe' 2>&1 | tee /tmp/bench.log | grep -E '^(--- |PASS|FAIL|ok)' || true
grep -q '^PASS' /tmp/bench.log || { tail -60 /tmp/bench.log; fail "bench tests"; }
grep -q -- '--- SKIP' /tmp/bench.log && fail "bench tests skipped inside the guest"

echo "=== rdmabench devices"
rdmabench devices | tee /tmp/devices.txt
grep -q rxe0 /tmp/devices.txt && grep -q PORT_ACTIVE /tmp/devices.txt && grep -q '::ffff:127.0.0.1' /tmp/devices.txt \
	|| fail "devices output"

echo "=== server survives a client killed mid-test"
rdmabench server --bind 127.0.0.1 -p 18600 2>/tmp/server.log &
spid=$!
sleep 1
rdmabench run 127.0.0.1 -p 18600 --op send --mode lat -D 20s >/dev/null 2>&1 &
cpid=$!
sleep 4
kill -9 $cpid
wait $cpid 2>/dev/null || true
rdmabench run 127.0.0.1 -p 18600 --op send,write,read --mode lat --iters 500 --json /tmp/after-kill.json \
	|| { cat /tmp/server.log; fail "second client after a killed one"; }
kill -0 $spid || fail "server died"
kill $spid; wait $spid 2>/dev/null || true
grep -E 'client|lost' /tmp/server.log | tail -5
echo "GUEST-TEST OK"
