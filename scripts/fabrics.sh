#!/usr/bin/env bash
# fabrics.sh: SEND, WRITE and READ latency and bandwidth on three fabrics in
# ONE SoftRoCE guest (scripts/vm-run.sh): RoCE (rxe1, rdma_cm), iWARP (siw1,
# rdma_cm) and the kernel-TCP baseline, then 'rdmabench report' over them.
set -euo pipefail

readonly PROG=${0##*/}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly SCRIPT_DIR
REPO=$(cd "$SCRIPT_DIR/.." && pwd)
readonly REPO

usage() {
  cat <<EOF
Usage: $PROG [--outdir DIR] [--siw require|auto|off] [--iters N] [--bw-duration SECS]
             [--timeout SECS]

Boots one qemu guest with scripts/vm-run.sh --siw MODE (rxe0 on lo, rxe1 on dummy0
192.0.2.1, siw1 on dummy1 203.0.113.1) and runs there, at 2 B and 64 KiB:
  RoCE   rdmabench loopback -d rxe1 --rdma-cm   SEND, WRITE, READ: lat (--iters N), bw (-D SECS)
  iWARP  rdmabench loopback -d siw1 --rdma-cm   the same
  TCP    rdmabench loopback --transport tcp     SEND (TCP has no WRITE or READ): lat, bw
each to its own JSON in the guest's /out (copied to DIR): roce-lat.json, roce-bw.json,
iwarp-lat.json, iwarp-bw.json, tcp-lat.json, tcp-bw.json. Then, on the host:
  rdmabench report DIR/*.json                                   (text, to stdout)
  rdmabench report --format markdown --plot DIR/latency.svg ... > DIR/report.md

Options:
  --outdir DIR        where the JSON, report.md and latency.svg go (default build/fabrics)
  --siw MODE          require (the default): fail without siw1; auto: go on with RoCE and
                      TCP when the guest has no siw; off: RoCE and TCP only (for a
                      vm-run.sh without --siw)
  --iters N           latency iterations per test (default 2000; at least 1000, which p99.9 needs)
  --bw-duration SECS  bandwidth measuring time per test, whole seconds (default 2)
  --timeout SECS      vm-run.sh's limit for the whole guest, boot included (default 900)
  -h, --help          show this help

Environment: RDMABENCH_BIN, the binary for guest and host (default build/rdmabench,
built with 'make build' if missing); VM_RUN, the guest runner (default
scripts/vm-run.sh).
A run that fails with exit 4, 5, 7 (or timeout's 124), as load on a 2-core host can
make it, is tried once more; every failed try (its exit and error line) is listed at
the end of the report and of report.md ("Runs that failed").
Exit status: 0 if every run (perhaps on its second try) and the report succeeded; 1 if
a run failed for good (the report covers the others and names it, with its error);
2 on bad usage or a vm-run.sh without --siw;
vm-run.sh's 124/125 if the guest timed out or failed.
EOF
}

err() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { err "error: $*"; exit 2; }

outdir=$REPO/build/fabrics siw=require iters=2000 bwdur=2 timeout=900
need_arg() { (($2 >= 2)) || die "$1 needs an argument (see -h)"; }
while (($#)); do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --*=*) opt=${1%%=*} val=${1#*=}; shift; set -- "$opt" "$val" "$@"; continue ;;
    --outdir) need_arg "$1" $#; outdir=$2; shift 2 ;;
    --siw) need_arg "$1" $#; siw=$2; shift 2 ;;
    --iters) need_arg "$1" $#; iters=$2; shift 2 ;;
    --bw-duration) need_arg "$1" $#; bwdur=$2; shift 2 ;;
    --timeout) need_arg "$1" $#; timeout=$2; shift 2 ;;
    *) err "unknown argument: $1"; usage >&2; exit 2 ;;
  esac
done
posint() { [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 must be a positive integer, got: $2"; }
posint --iters "$iters"
posint --bw-duration "$bwdur"
posint --timeout "$timeout"
((iters >= 1000)) || die "--iters must be at least 1000 (p99.9 needs 1000 samples)"
case $siw in require|auto|off) ;; *) die "--siw must be require, auto or off, got: $siw" ;; esac

vm=${VM_RUN:-$SCRIPT_DIR/vm-run.sh}
[[ -x $vm ]] || die "VM_RUN=$vm: not an executable"
vm_siw=()
if [[ $siw != off ]]; then
  if ! "$vm" -h 2>/dev/null | grep -q -- '--siw'; then
    die "$vm has no --siw option, so the guest cannot get soft-iWARP (siw1): update scripts/vm-run.sh, or run '$PROG --siw off' for RoCE and TCP only"
  fi
  vm_siw=(--siw "$siw")
fi

bin=${RDMABENCH_BIN:-$REPO/build/rdmabench}
if [[ ! -x $bin ]]; then
  [[ -z ${RDMABENCH_BIN:-} ]] || die "RDMABENCH_BIN=$bin: not an executable"
  err "no $bin yet: running 'make build'"
  make -C "$REPO" -s build >&2 || die "make build failed"
fi

mkdir -p "$outdir"
names=(roce-lat roce-bw iwarp-lat iwarp-bw tcp-lat tcp-bw)
for n in "${names[@]}"; do rm -f "$outdir/$n.json" "$outdir/$n.fail"; done
rm -f "$outdir/report.md" "$outdir/latency.svg"

work=$(mktemp -d "${TMPDIR:-/tmp}/fabrics.XXXXXX")
trap 'rm -rf "$work"' EXIT

# --- the guest side (busybox sh) -------------------------------------------------
cat >"$work/fabrics-guest.sh" <<'GUEST'
#!/bin/sh
# Runs in the guest. Env: ITERS, BWDUR, SIW (require, auto, off).
fail=0
say() { echo "fabrics-guest: $*"; }

# rb NAME ARGS...: one rdmabench loopback run at 2 B and 64 KiB, JSON to /out/NAME.json.
# A run that fails as load can make it fail (exit 4: a heartbeat or the control
# connection; 5: the data path: retries exhausted, no progress; 7 or timeout's 124: a
# deadline) gets one more try after a pause; any other exit is final. Each failed try's
# exit and last error line go to /out/NAME.fail, which the host's report names.
rb() {
  name=$1; shift
  try=1
  while :; do
    say "$name (try $try): rdmabench loopback $* --size 2,64K --json /out/$name.json"
    timeout 600 rdmabench loopback "$@" --size 2,64K --json /out/$name.json 2>/tmp/$name.err
    rc=$?
    cat /tmp/$name.err >&2
    [ $rc = 0 ] && return 0
    why=$(grep -v '^rdmabench: \[' /tmp/$name.err | grep '^rdmabench: ' | tail -1)
    echo "try $try: exit $rc: ${why:-no error line}" >>/out/$name.fail
    rm -f /out/$name.json
    case $rc in
      4|5|7|124) if [ $try = 1 ]; then
          say "$name: exit $rc, which load can cause: once more in 3 s (load: $(cut -d' ' -f1-3 /proc/loadavg))"
          try=2; sleep 3; continue
        fi ;;
    esac
    fail=1; say "FAILED: $name (exit $rc)"
    return 0
  done
}

lat="--mode lat --iters $ITERS"
bw="--mode bw --duration ${BWDUR}s"
rdma="--op send,write,read --rdma-cm"

rb roce-lat -d rxe1 $rdma $lat
rb roce-bw -d rxe1 $rdma $bw
if [ -e /sys/class/infiniband/siw1 ]; then
  rb iwarp-lat -d siw1 $rdma $lat
  rb iwarp-bw -d siw1 $rdma $bw
elif [ "$SIW" != off ]; then
  say "no siw1 in this guest (vm-run.sh --siw $SIW): no iWARP runs"
  [ "$SIW" = require ] && fail=1
fi
rb tcp-lat --transport tcp $lat
rb tcp-bw --transport tcp $bw
exit $fail
GUEST

rc=0
"$vm" --timeout "$timeout" "${vm_siw[@]}" --bin "$bin" --outdir "$outdir" \
  --file "$work/fabrics-guest.sh" --env ITERS="$iters" --env BWDUR="$bwdur" --env SIW="$siw" \
  -- sh /work/fabrics-guest.sh || rc=$?
if ((rc != 0 && rc != 1)); then
  err "vm-run.sh exited $rc"
  exit "$rc"
fi

files=()
for n in "${names[@]}"; do
  [[ -s $outdir/$n.json ]] && files+=("$outdir/$n.json")
done
((${#files[@]})) || { err "no result files in $outdir"; exit 1; }
# tries: the runs that failed (for good, or once and then passed), with each failed
# try's exit and error line, as a markdown section
tries() {
  local n line
  for n in "${names[@]}"; do
    [[ -s $outdir/$n.fail ]] || continue
    if [[ -s $outdir/$n.json ]]; then
      echo "- $n: passed on its second try (a failure that load can cause is tried once more); the first:"
    else
      echo "- $n: FAILED, not in the report:"
    fi
    while IFS= read -r line; do echo "  - $line"; done <"$outdir/$n.fail"
  done
}
"$bin" report "${files[@]}"
"$bin" report --format markdown --plot "$outdir/latency.svg" "${files[@]}" >"$outdir/report.md"
if [[ -n $(tries) ]]; then
  printf '\nRuns that failed:\n%s\n' "$(tries)"
  printf '\n## Runs that failed\n\n%s\n' "$(tries)" >>"$outdir/report.md"
fi
echo "$PROG: wrote $outdir/report.md and $outdir/latency.svg"
((rc == 0)) || err "some runs failed (see above): the report covers the others"
exit "$rc"
