#!/bin/sh
# Runs inside the SoftRoCE guest (scripts/vm-run.sh): the RDMA test suites,
# then the command-line checks. Exits non-zero on the first failure.
set -eu
export RDMABENCH_REQUIRE_RDMA=1
fail() { echo "GUEST-TEST FAIL: $*"; exit 1; }
T0=$(date +%s)
stage() { echo "=== [$(($(date +%s) - T0)) s] $*"; } # each stage with the time since the start

stage "verbs tests (rxe0)"
verbs.test -test.v -test.count=1 2>&1 | tee /tmp/verbs.log | grep -E '^(=== RUN|--- |PASS|FAIL|ok|\s+rdma_test)' || true
grep -q '^PASS' /tmp/verbs.log || { grep -B15 -- '--- FAIL' /tmp/verbs.log | head -80; fail "verbs tests"; }
grep -q -- '--- SKIP' /tmp/verbs.log && fail "verbs tests skipped inside the guest"

stage "verbs tests with GOEXPERIMENT=cgocheck2"
verbs-cgocheck2.test -test.count=1 -test.run 'RDMA' 2>&1 | tail -3 | tee /tmp/cgocheck2.log
grep -q '^PASS' /tmp/cgocheck2.log || fail "verbs tests under cgocheck2"

stage "socket engine tests (bench/sockeng, GOEXPERIMENT=cgocheck2)"
sockeng-cgocheck2.test -test.v -test.count=1 2>&1 | tee /tmp/sockeng.log | grep -E '^(--- |PASS|FAIL|ok)' || true
grep -q '^PASS' /tmp/sockeng.log || { grep -B15 -- '--- FAIL' /tmp/sockeng.log | head -80; fail "socket engine tests"; }
grep -q -- '--- SKIP' /tmp/sockeng.log && fail "socket engine tests skipped inside the guest"

stage "verbs benchmark"
verbs.test -test.run x -test.bench RDMA -test.benchtime 2000x 2>&1 | grep -E 'Benchmark|ok' || fail "verbs benchmark"

stage "bench tests (rxe0)"
# (the golden-file tests need testdata/ and run on the host)
# (the TCP baseline's tests need no RDMA: make unit runs them on the host, and the
# stage "TCP baseline in the guest" below runs it on the guest's kernel)
bench.test -test.v -test.count=1 -test.run 'RDMA|Describe' 2>&1 | tee /tmp/bench.log | grep -E '^(--- |PASS|FAIL|ok)' || true
grep -q '^PASS' /tmp/bench.log || { tail -60 /tmp/bench.log; ls -la /tmp; free -m; dmesg | tail -20; fail "bench tests"; }
grep -q -- '--- SKIP' /tmp/bench.log && fail "bench tests skipped inside the guest"

stage "MR benchmark tests (rxe0)"
mr.test -test.v -test.count=1 -test.run 'RDMA' 2>&1 | tee /tmp/mr.log | grep -E '^(--- |PASS|FAIL|ok)' || true
grep -q '^PASS' /tmp/mr.log || { grep -B15 -- '--- FAIL' /tmp/mr.log | head -80; fail "MR benchmark tests"; }
grep -q -- '--- SKIP' /tmp/mr.log && fail "MR benchmark tests skipped inside the guest"

stage "rdmabench devices"
rdmabench devices | tee /tmp/devices.txt
grep -q rxe0 /tmp/devices.txt && grep -q PORT_ACTIVE /tmp/devices.txt && grep -q '::ffff:127.0.0.1' /tmp/devices.txt \
	|| fail "devices output"

stage "docs: the README's and docs/' code blocks that need RDMA (docs/docs_test.go)"
[ -f /work/docs-guest.sh ] || fail "/work/docs-guest.sh missing (make vm-test writes it)"
(sh /work/docs-guest.sh) || fail "docs code blocks"

stage "TCP baseline in the guest"
rdmabench loopback --transport tcp --mode lat,bw --size 2,64K -n 500 --json /tmp/tcp.json | grep -E '^ send|Connection type'
jcheck /tmp/tcp.json 'count(results.*.transport == "tcp") == 4' || fail "TCP baseline JSON"

stage "memory registration benchmark"
rdmabench mr --sizes 4K,1M --iters 50 --op-iters 500 --json /tmp/mr.json | tail -8
jcheck /tmp/mr.json '**.pooled_over_per_op' || fail "rdmabench mr JSON"
set +e
rdmabench mr --odp --sizes 4K --iters 5 --op-iters 10 >/tmp/err.txt 2>&1; rc=$?
set -e
[ $rc = 3 ] && grep -q 'ODP not supported by rxe0' /tmp/err.txt || { cat /tmp/err.txt; fail "ODP on rxe0: exit $rc"; }

stage "isolation: a SEND latency victim beside the RNR storm (docs/isolation.md)"
# one round of 0.2 s runs, in one session; make isolation-test runs the whole catalogue
set +e
rdmabench isolation --attackers rnr-storm --repeat 1 -D 0.2 --max-inflation p50=100000x --json /tmp/iso.json >/tmp/iso.txt 2>&1; rc=$?
set -e
grep -E '^(rnr-storm|max-inflation) ' /tmp/iso.txt || true
[ $rc = 0 ] || { cat /tmp/iso.txt; fail "isolation exited $rc"; }
jcheck /tmp/iso.json 'count(attackers.*.runs.*) == 1' 'attackers[name=rnr-storm].achieved.*.mpps > 0' \
	'count(verdicts.*.verdict == "pass") == 1' || fail "isolation JSON"

stage "data path memory registration (--mr-mode)"
rdmabench loopback --op write --mode bw --size 4K -n 2000 --mr-mode per-op --json /tmp/perop.json | grep -E '^ write|MR mode'
jcheck /tmp/perop.json 'results[0].mr_mode == "per-op"' || fail "--mr-mode per-op JSON"
set +e
rdmabench loopback --op write --mode lat -n 100 --mr-mode odp >/tmp/err.txt 2>&1; rc=$?
set -e
[ $rc = 3 ] && grep -q 'ODP not supported by rxe0' /tmp/err.txt || { cat /tmp/err.txt; fail "--mr-mode odp on rxe0: exit $rc"; }
set +e
rdmabench loopback --op write --mode lat -n 100 --hugepages >/tmp/err.txt 2>&1; rc=$?
set -e
[ $rc = 3 ] && grep -q 'no huge pages are reserved' /tmp/err.txt || { cat /tmp/err.txt; fail "--hugepages without huge pages: exit $rc"; }

stage "payload checking (--verify) and shared receive queues (--srq)"
rdmabench loopback --op send,write,read --mode lat,bw --size 4099 -n 500 --verify --json /tmp/verify.json | grep -E '^ (send|write|read) |Payload check'
jcheck /tmp/verify.json 'count(results.*.verify.checked_by == "server") == 4' 'count(results.*.verify.checked_by == "client") == 2' \
	'results.*.verify.messages == 64' 'results.*.verify.bytes == 262336' || fail "--verify JSON"
rdmabench loopback --srq --mode lat,bw -n 1000 --verify --json /tmp/srq.json | grep -E '^ send|Receive queue'
rdmabench loopback --srq --mode bw --qps 4 --size 4K -n 2000 --verify --json /tmp/srq4.json | grep -E '^ send'
jcheck /tmp/srq.json 'count(results.*.srq == true) == 2' 'count(results.*.verify.checked_by == "server") == 2' \
	/tmp/srq4.json 'results[0].srq == true' 'results[0].qps == 4' 'results[0].verify.checked_by == "server"' \
	|| fail "--srq JSON"

stage "rdma_cm (rxe1 on dummy0: rdma_cm cannot use loopback addresses)"
rdmabench loopback --rdma-cm --qps 8 --threads 2 --op write --mode bw -n 4000 --json /tmp/cm.json | tee /tmp/cm.txt
jcheck /tmp/cm.json 'results[0].connection.method == "rdma_cm"' 'results[0].connection.setup_p50_ns >= 0' \
	'**.gid_reason ~ "chosen by rdma_cm for 192.0.2.1"' 'environment.inline_size_granted >= 0' \
	'results[0].link_utilization > 0' 'results[0].link_utilization < 1' 'results[0].cpu' \
	&& grep -q 'setup_max\[msec\]' /tmp/cm.txt || fail "--rdma-cm --qps 8 --threads 2 output"
set +e
rdmabench loopback --rdma-cm -d rxe0 --op write --mode bw -n 100 >/tmp/err.txt 2>&1; rc=$?
set -e
[ $rc != 0 ] && grep -q 'cannot resolve the loopback address 127.0.0.1, and rxe0 has no other IP address' /tmp/err.txt \
	|| { cat /tmp/err.txt; fail "--rdma-cm on the loopback-only rxe0: exit $rc"; }

stage "inline by default (device probe), and perftest's rules"
rdmabench loopback --op send,write --mode lat --size 2 -n 2000 --json /tmp/inline.json | tee /tmp/inline.txt | grep -E 'inline|Inline'
grep -q 'Max inline data : 236\[B\] send lat, 220\[B\] write lat' /tmp/inline.txt && jcheck /tmp/inline.json 'results[0].inline_bytes == 236' \
	'results.*.inline_reason ~ "auto: rxe0 grants up to 512 B on RC QPs"' || fail "default inline on rxe"
jcheck /tmp/inline.json 'results.*.counters.*.deltas.sent_pkts > 0' || fail "no counters object with a nonzero packet counter in the loopback JSON"
rdmabench loopback --op send --mode lat --size 2 -n 500 --inline-size perftest --json /tmp/inline-pt.json | grep -E 'inline|Inline'
jcheck /tmp/inline-pt.json 'results[0].inline_bytes == 0' 'results[0].inline_reason ~ "perftest disables inline on devices it does not recognise"' \
	|| fail "--inline-size perftest on rxe"
set +e
rdmabench loopback --op send --mode lat -n 100 --inline-size 1024 >/tmp/err.txt 2>&1; rc=$?
set -e
[ $rc = 3 ] && grep -q 'grants at most 512 bytes of inline data' /tmp/err.txt || { cat /tmp/err.txt; fail "--inline-size 1024 on rxe: exit $rc"; }

stage "device by route, and one run over two devices (-d rxe0,rxe1)"
rdmabench server --bind 192.0.2.1 -p 18600 >/tmp/server-route.log 2>&1 &
spid=$!
sleep 1
rdmabench run 192.0.2.1 -p 18600 --op send --mode lat -n 300 --json /tmp/route.json | grep -E 'Device|software'
jcheck /tmp/route.json '**.device_reason ~ "by route: rxe1 port 1 holds 192.0.2.1"' 'server_environment' \
	|| fail "device by route"
kill $spid; wait $spid 2>/dev/null || true
grep 'by route' /tmp/server-route.log | head -1
rdmabench loopback -d rxe0,rxe1 --op send --mode lat -n 300 --json /tmp/multi.json | tee /tmp/multi.txt | tail -6
[ -s /tmp/multi-rxe0.json ] && [ -s /tmp/multi-rxe1.json ] && grep -q 'rxe0.*rxe1' /tmp/multi.txt || fail "-d rxe0,rxe1 sweep"

stage "a down device that sorts first (rxa0 on dummy9, not up): loopback --rdma-cm, mr, -d rxa0"
# (server, run and loopback in bench's TestRDMADownDeviceFirst; rdma_cm here: librdmacm
# keeps every device open until its process exits, and rxa0 could not be deleted)
ip link add dummy9 type dummy && rdma link add rxa0 type rxe netdev dummy9
rdmabench loopback --rdma-cm --op write --mode lat -n 200 | grep -E '^ Device' | tee /tmp/down-cm.txt
grep -q 'rxe1 (chosen by rdma_cm.*port 1 as rdma_cm bound it' /tmp/down-cm.txt || fail "loopback --rdma-cm with rxa0 down and first"
rdmabench mr --sizes 4K --iters 5 --op-iters 10 --json /tmp/down-mr.json >/dev/null
jcheck /tmp/down-mr.json '**.device == "rxe0"' || fail "rdmabench mr with rxa0 down and first"
set +e
rdmabench server -d rxa0 -i 1 -p 18611 >/tmp/err.txt 2>&1; rc=$?
set -e
[ $rc = 3 ] && grep -q 'port not active: rxa0 port 1 is PORT_DOWN' /tmp/err.txt || { cat /tmp/err.txt; fail "server -d rxa0: exit $rc"; }
rdma link delete rxa0 && ip link delete dummy9

stage "soft-iWARP (siw1 on dummy1, 203.0.113.1): loopback and server/run with no -d"
rdmabench devices | grep -A12 '^siw1' | grep -E 'transport|netdev' 
rdmabench loopback -d siw1 --rdma-cm --op send,write,read --mode lat,bw -n 300 --json /tmp/siw.json | grep -E 'Device|software|^ (send|write|read) '
jcheck /tmp/siw.json '**.transport == "iWARP"' '**.netdev == "dummy1"' || fail "loopback -d siw1 --rdma-cm"
rdmabench server --bind 203.0.113.1 -p 18602 >/tmp/server-siw.log 2>&1 &
spid=$!
sleep 1
rdmabench run 203.0.113.1 -p 18602 --rdma-cm --op send,write,read --mode lat,bw -n 300 --json /tmp/siw-run.json | grep -E 'Device|software'
jcheck /tmp/siw-run.json '**.device == "siw1"' '**.transport == "iWARP"' || fail "server/run on the siw address"
kill $spid; wait $spid 2>/dev/null || true
grep 'by route: siw1' /tmp/server-siw.log | head -1 || fail "server did not choose siw1 by route"
set +e
rdmabench loopback -d siw1 --qp-type ud --op send --mode lat -n 10 >/tmp/err.txt 2>&1; rc=$?
set -e
[ $rc = 3 ] && grep -q 'siw1 is an iWARP device: --qp-type ud not supported by the device' /tmp/err.txt || { cat /tmp/err.txt; fail "UD on siw1: exit $rc"; }
stage "bidirectional bandwidth (-b), the sum and, with --report-both, each side"
rdmabench loopback -b --op write,send --mode bw --size 64K -n 1000 --json /tmp/bidir.json | tee /tmp/bidir.txt | grep -E 'bidir|^ +(client|server)'
grep -q '^ write bidir  *65536  *2000 ' /tmp/bidir.txt && grep -q '^ send bidir  *65536  *2000 ' /tmp/bidir.txt \
	&& grep -q 'sums of both sides' /tmp/bidir.txt && ! grep -q '^   client' /tmp/bidir.txt \
	&& jcheck /tmp/bidir.json 'count(results.*.bidirectional == true) == 2' 'results.*.sides.server.ops > 0' || fail "-b output"
rdmabench loopback -b --report-both --op read --mode bw --size 4K -D 1s --json /tmp/bidir-both.json | tee /tmp/bidir-both.txt | grep -E 'bidir|^ +(client|server)'
grep -q '^ read bidir ' /tmp/bidir-both.txt && grep -q '^   client  *4096 ' /tmp/bidir-both.txt && grep -q '^   server  *4096 ' /tmp/bidir-both.txt \
	&& grep -q 'perftest --report-both' /tmp/bidir-both.txt && jcheck /tmp/bidir-both.json 'results[0].sides.client' 'results[0].sides.server' \
	|| fail "-b --report-both output"
set +e
rdmabench loopback -b --op send --mode lat -n 100 >/tmp/err.txt 2>&1; rc=$?
set -e
[ $rc = 2 ] && grep -q 'applies to bandwidth tests' /tmp/err.txt || { cat /tmp/err.txt; fail "-b with --mode lat: exit $rc"; }

stage "HdrHistogram files"
rdmabench loopback --op send --mode lat -n 3000 --interval 200ms --hlog /tmp/r.hlog --hgrm /tmp/r >/dev/null
grep -q 'Tag=send-lat-2B,' /tmp/r.hlog && grep -q '#\[Mean' /tmp/r-send-lat-2B.hgrm || fail ".hlog/.hgrm output"
head -3 /tmp/r-send-lat-2B.hgrm

stage "clear errors"
set +e
rdmabench loopback -d nosuch0 >/tmp/err.txt 2>&1; rc=$?
set -e
cat /tmp/err.txt
[ $rc = 2 ] && grep -q 'device "nosuch0" not found; available: rxe0, rxe1, siw1' /tmp/err.txt || fail "unknown device: exit $rc"
set +e
rdmabench loopback -x 7 >/tmp/err.txt 2>&1; rc=$?
set -e
cat /tmp/err.txt
[ $rc = 2 ] && grep -q 'index 7 is not a valid GID' /tmp/err.txt || fail "bad GID index: exit $rc"
set +e
rdmabench loopback -i 2 >/tmp/err.txt 2>&1; rc=$?
set -e
cat /tmp/err.txt
[ $rc = 2 ] && grep -q 'port 2 invalid: rxe0 has 1 port' /tmp/err.txt || fail "port 2: exit $rc"
# hide the userspace providers (rxe, siw): the kernel still has the devices
mkdir -p /tmp/hidden
for f in /etc/libibverbs.d/rxe.driver /etc/libibverbs.d/siw.driver /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so \
	/usr/lib/x86_64-linux-gnu/libibverbs/libsiw-rdmav*.so; do mv "$f" /tmp/hidden/; done
set +e
rdmabench devices >/tmp/err.txt 2>&1; rc=$?
set -e
mv /tmp/hidden/rxe.driver /tmp/hidden/siw.driver /etc/libibverbs.d/
mv /tmp/hidden/librxe-rdmav*.so /tmp/hidden/libsiw-rdmav*.so /usr/lib/x86_64-linux-gnu/libibverbs/
cat /tmp/err.txt
[ $rc = 3 ] && grep -q 'no userspace provider' /tmp/err.txt || fail "missing provider: exit $rc"

# (SIGINT and SIGTERM mid-run, and a client killed mid-test: the waits group of the
# fault-injection suite below)

stage "rdma_cm between a server and a client, as on two hosts (control and rdma_cm on 192.0.2.1)"
rdmabench server --bind 192.0.2.1 -p 18601 2>/tmp/server-cm.log &
spid=$!
sleep 1
rdmabench run 192.0.2.1 -p 18601 --rdma-cm --op send,read --mode lat,bw --iters 500 --json /tmp/cm-run.json \
	|| { cat /tmp/server-cm.log; fail "run --rdma-cm against a server"; }
jcheck /tmp/cm-run.json 'results.*.connection.address ~ "192.0.2.1:"' '**.device == "rxe1"' || fail "run --rdma-cm JSON"
kill $spid; wait $spid 2>/dev/null || true
grep 'rdma_cm' /tmp/server-cm.log | head -2
stage "every JSON document above against bench/result/schema.json"
RDMABENCH_JSON_DIR=/tmp result.test -test.run '^TestSchemaFiles$' -test.v 2>&1 | tee /tmp/schema.log | grep -E '^(--- |PASS|FAIL|ok)|schema' | head -40 || true
grep -q '^PASS' /tmp/schema.log || { tail -30 /tmp/schema.log; fail "JSON schema"; }
stage "hardware check (scripts/hw-check.sh): every ACTIVE port, rdmabench beside perftest, one report"
mkdir -p /tmp/hwc
sh /work/hw-check.sh -o /tmp/hwc --keep --ops write --modes lat --lat-sizes 2 -n 100 --reps 1 --timeout 60 >/tmp/hwc.out 2>/tmp/hwc.err \
	|| { cat /tmp/hwc.out /tmp/hwc.err; fail "hw-check"; }
sed -n '/^results:/,/^time:/p' /tmp/hwc.out
hwc=$(sed -n 's/^Report: \(.*\)\.tar\.gz (.*/\1/p' /tmp/hwc.out)
[ -n "$hwc" ] && [ -s "$hwc.tar.gz" ] && tar -tzf "$hwc.tar.gz" >/tmp/hwc.list || { cat /tmp/hwc.out; fail "hw-check: no report"; }
for d in rxe0 rxe1 siw1; do
	grep -qE "^  $d +1 write +lat +2 +[0-9.]+ +[0-9.]+ +[0-9]+\.[0-9]{3}" /tmp/hwc.out && grep -q "/runs/$d-p1/write-lat-2.rb1.json$" /tmp/hwc.list \
		&& grep -q "/runs/$d-p1/write-lat-2.pt1.txt$" /tmp/hwc.list || { cat /tmp/hwc.out; fail "hw-check: no $d result with its perftest ratio"; }
done
grep -q -- '-x 1 127.0.0.1 (client)' "$hwc/runs/rxe0-p1/write-lat-2.pt1.cmd" && grep -q -- '-R 203.0.113.1 (client)' "$hwc/runs/siw1-p1/write-lat-2.pt1.cmd" \
	&& grep -q -- '--rdma-cm' "$hwc/runs/siw1-p1/write-lat-2.rb1.cmd" && grep -q '^failures: none' /tmp/hwc.out || fail "hw-check: the tools' flags"
stage "perftest drop-in: ib_send_lat and ib_write_bw links to rdmabench, against perftest's own output (scripts/dropin-guest.sh)"
sh /work/dropin-guest.sh || fail "perftest drop-in"
stage "driver behaviours under the LD_PRELOAD shim: cxgb4 on siw1, rdatom=1, mlx5sq (scripts/drvshim-guest.sh)"
sh /work/drvshim-guest.sh || fail "driver-behaviour shim"

stage "mesh: 3 ranks under MPICH's mpiexec in this guest (scripts/mesh-guest-local.sh)"
sh /work/mesh-guest-local.sh || fail "mesh (3 local ranks)"
stage "fault-injection suite (internal/e2e/faults)"
RDMABENCH_GUEST=g1 RDMABENCH_BIN="$(command -v rdmabench)" faults.test -test.v -test.timeout 20m >/tmp/faults.log 2>&1 \
	|| { grep -E -- '^(=== RUN|--- FAIL|    )' /tmp/faults.log | tail -80; fail "fault-injection suite"; }
grep -E -- '^ *--- (PASS|FAIL|SKIP)' /tmp/faults.log

passed=$(cat /tmp/verbs.log /tmp/sockeng.log /tmp/bench.log /tmp/mr.log | grep -c -- '--- PASS' || true)
failed=$(cat /tmp/verbs.log /tmp/sockeng.log /tmp/bench.log /tmp/mr.log | grep -c -- '--- FAIL' || true)
echo "GUEST-TEST OK ($(($(date +%s) - T0)) s)"
echo "guest: $passed passed, $failed failed"
