#!/bin/sh
# drvshim-guest.sh: rdmabench (and perftest) under the driver-behaviour shim,
# inside the SoftRoCE guest (called by scripts/guest-test.sh; needs rdmabench,
# perftest's ib_write_bw, /work/libdrvshim.so from internal/drvshim and siw1).
# Each behaviour (RDMABENCH_DRVSHIM, docs/development.md) makes rxe or siw
# answer one verbs call as a hardware driver does:
#   cxgb4      on siw1: rdma_cm loopback and server/run pass every op in lat
#              and bw (no access-flags change on a connected iWARP QP), and
#              perftest's ib_write_bw -R runs under the shim too;
#   trace      rdma_cm QPs on RoCE are narrowed to the test's access after
#              connecting (least privilege at the QP);
#   rdatom=1   the server's device allows one outstanding READ: the rdma_cm
#              client records the depth its QP got (1), not what it asked;
#   mlx5sq     a tx depth within max_qp_wr that mlx5's WQE blocks cannot
#              hold: exit 3 (a device limit), and the error names the tx
#              depth, inline size, QP type and max_qp_wr, and says the first
#              two shrink the usable depth.
# Exit 0 when all holds; 1 with the reason otherwise.
set -u
fail() { echo "drvshim-guest FAIL: $*"; exit 1; }
SHIM=${DRVSHIM:-/work/libdrvshim.so}
[ -r "$SHIM" ] || fail "$SHIM not found (make vm-test builds build/libdrvshim.so)"
SIW=${RDMABENCH_SIW_DEVICE:-}
[ -n "$SIW" ] || fail "no siw device (boot the guest with --siw auto or require)"
N=50

# under BEHAVIOURS CMD...: CMD with the shim preloaded
under() { b=$1; shift; LD_PRELOAD=$SHIM RDMABENCH_DRVSHIM=$b "$@"; }
# again CMD...: CMD, and once more if it fails (a loaded host can make a loopback
# miss its peer's heartbeat), with a DRVSHIM RETRY line
again() { "$@" && return 0; echo "DRVSHIM RETRY: $*"; "$@"; }

echo "-- cxgb4 on $SIW: loopback --rdma-cm, send/write/read, lat and bw"
again under cxgb4 rdmabench loopback --rdma-cm -d "$SIW" --op send,write,read --mode lat,bw -n $N --json /tmp/shim-cxgb4.json \
	>/tmp/shim-cxgb4.txt 2>&1 || { cat /tmp/shim-cxgb4.txt; fail "loopback --rdma-cm under cxgb4"; }
grep -q '^drvshim: loaded (cxgb4)' /tmp/shim-cxgb4.txt || fail "the shim was not loaded"
grep -E '^ (send|write|read) ' /tmp/shim-cxgb4.txt
[ "$(grep -cE '^ (send|write|read) ' /tmp/shim-cxgb4.txt)" -ge 6 ] || { cat /tmp/shim-cxgb4.txt; fail "cxgb4 loopback: want 6 result rows"; }

echo "-- cxgb4 on $SIW: server and run over rdma_cm"
under cxgb4 rdmabench server --bind 203.0.113.1 -p 18610 >/tmp/shim-server.log 2>&1 &
spid=$!
wait-listen 18610 30 || { cat /tmp/shim-server.log; fail "cxgb4 server did not listen"; }
under cxgb4 rdmabench run 203.0.113.1 -p 18610 --rdma-cm --op send,write,read --mode lat,bw -n $N --json /tmp/shim-cxgb4-run.json \
	>/tmp/shim-run.txt 2>&1 || { cat /tmp/shim-run.txt /tmp/shim-server.log; kill $spid; fail "server/run --rdma-cm under cxgb4"; }
kill $spid; wait $spid 2>/dev/null
[ "$(grep -cE '^ (send|write|read) ' /tmp/shim-run.txt)" -ge 6 ] && jcheck /tmp/shim-cxgb4-run.json '**.device == "siw1"' \
	|| { cat /tmp/shim-run.txt; fail "cxgb4 server/run: want 6 result rows on siw1"; }
grep -q 'drvshim: loaded (cxgb4)' /tmp/shim-server.log || fail "the server ran without the shim"

echo "-- cxgb4 on $SIW: perftest ib_write_bw -R"
under cxgb4 ib_write_bw -R -d "$SIW" -n 200 -p 18611 >/tmp/shim-pt-srv.txt 2>&1 &
ppid=$!
wait-listen 18611 30 || { cat /tmp/shim-pt-srv.txt; fail "ib_write_bw server did not listen"; }
under cxgb4 ib_write_bw -R -d "$SIW" -n 200 -p 18611 203.0.113.1 >/tmp/shim-pt.txt 2>&1 \
	|| { cat /tmp/shim-pt.txt /tmp/shim-pt-srv.txt; kill $ppid; fail "ib_write_bw -R under cxgb4"; }
wait $ppid || { cat /tmp/shim-pt-srv.txt; fail "ib_write_bw -R server under cxgb4"; }
grep -E '^ *65536 ' /tmp/shim-pt.txt || { cat /tmp/shim-pt.txt; fail "ib_write_bw -R: no result row"; }

# (on iWARP, the cxgb4 runs above show that no access changes after connecting)
echo "-- trace: rdma_cm QPs narrowed after connecting on RoCE (rxe1)"
again under trace rdmabench loopback --rdma-cm --op write --mode bw --size 4K -n $N >/tmp/shim-trace.txt 2>&1 || { cat /tmp/shim-trace.txt; fail "trace on rxe"; }
grep 'drvshim: trace' /tmp/shim-trace.txt
# WRITE bw: the server's QP REMOTE_WRITE (0x2), the client's nothing (0x0)
grep -q 'access 0x2 (no state change)' /tmp/shim-trace.txt && grep -q 'access 0x0 (no state change)' /tmp/shim-trace.txt \
	|| fail "RoCE rdma_cm QPs not narrowed to the test's access"

echo "-- rdatom=1 on the server (rxe1): the rdma_cm client records what its QP got"
under rdatom=1 rdmabench server --bind 192.0.2.1 -p 18612 >/tmp/shim-rd.log 2>&1 &
spid=$!
wait-listen 18612 30 || { cat /tmp/shim-rd.log; fail "rdatom server did not listen"; }
rdmabench run 192.0.2.1 -p 18612 --rdma-cm --op read --mode lat -n $N --json /tmp/shim-rd.json >/tmp/shim-rd.txt 2>&1 \
	|| { cat /tmp/shim-rd.txt /tmp/shim-rd.log; kill $spid; fail "run --rdma-cm against an rdatom=1 server"; }
kill $spid; wait $spid 2>/dev/null
jcheck /tmp/shim-rd.json 'results[0].outstanding_reads == 1' || fail "outstanding_reads: want 1, what the server's reply allowed"

echo "-- mlx5sq on rxe0: a tx depth within max_qp_wr that the send queue's WQE blocks cannot hold"
under mlx5sq rdmabench loopback -d rxe0 --op send --mode bw --tx-depth 8192 --inline-size 256 -n 10 >/tmp/shim-sq.txt 2>&1
rc=$?
cat /tmp/shim-sq.txt
[ $rc = 3 ] && grep -q 'drvshim: mlx5sq' /tmp/shim-sq.txt \
	&& grep -q 'tx depth (send_wr 8192) is within max_qp_wr 32768, but the inline size (256 bytes) and the QP type (RC) shrink the usable send queue depth' /tmp/shim-sq.txt \
	|| fail "mlx5sq: exit $rc, want 3 (a device limit) and the depth, inline size, QP type and max_qp_wr named"
echo "drvshim-guest OK"
