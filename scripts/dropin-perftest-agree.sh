#!/bin/sh
# dropin-perftest-agree.sh: the drop-in's figures against perftest's, in the
# guest (docs/perftest.md, "Agreement with perftest"; make dropin-agree). For
# each test, ROUNDS rounds of three runs: perftest's server with perftest's
# client (pt-pt), with the drop-in's client (pt-rb), and the drop-in's server
# with perftest's client (rb-pt), the order rotated each round so that drift
# falls on all three alike. Each run's client output goes to
# /out/KEY.PAIRING.ROUND.txt, the list of tests to /out/agree.list, failures
# to /out/agree.fail; scripts/dropinagree (on the host) parses the tables and
# computes the medians and ratios. No parsing here.
# Usage: dropin-perftest-agree.sh ROUNDS [TOOL ARGS...]   (default: the eight
# tools' tests below; one test given on the command line replaces them)
set -u
rounds=$1; shift
O=/out T=/tmp/agree
mkdir -p $O $T/bin
. "$(dirname "$0")/dropin-lib.sh" # wait_listen
if [ $# -gt 0 ]; then
  tests="$(printf '%s' "$*" | tr ' ' '~')"
else
  tests="ib_send_lat~-n~1000 ib_write_lat~-n~1000 ib_read_lat~-n~1000 ib_atomic_lat~-n~1000 ib_send_bw~-n~2000~-s~4096 ib_write_bw~-n~2000~-s~4096 ib_read_bw~-n~2000~-s~4096 ib_atomic_bw~-n~2000"
fi
echo "rounds $rounds" >$O/agree.list
: >$O/agree.fail
for t in $tests; do
  set -- $(echo "$t" | tr '~' ' ')
  ln -sf "$(command -v rdmabench)" $T/bin/$1
  printf '%s\t%s\n' "$(echo "$t" | tr '~' '_' | tr -d -- '-')" "$*" >>$O/agree.list
done
# one SERVER CLIENT OUT TOOL ARGS...: one run; the client's output in OUT
one() {
  srv=$1 cli=$2 out=$3; shift 3
  timeout 120 $srv -d rxe0 -x 1 -p 18990 "$@" >$T/srv.txt 2>&1 & s=$!
  wait_listen 18990 || { echo "$out: no server" >>$O/agree.fail; wait $s; return; }
  timeout 120 $cli -d rxe0 -x 1 -p 18990 "$@" 127.0.0.1 >$out 2>&1 || { echo "$out: client failed" >>$O/agree.fail; cat $out $T/srv.txt >>$O/agree.fail; }
  wait $s || { echo "$out: server failed" >>$O/agree.fail; cat $T/srv.txt >>$O/agree.fail; }
}
r=1
while [ $r -le $rounds ]; do
  for t in $tests; do
    set -- $(echo "$t" | tr '~' ' ')
    tool=$1 key=$(echo "$t" | tr '~' '_' | tr -d -- '-'); shift
    k=0 # (wait_listen uses i)
    while [ $k -lt 3 ]; do
      case $(( (k + r) % 3 )) in
        0) one $tool $tool $O/$key.pt-pt.$r.txt "$@" ;;
        1) one $tool $T/bin/$tool $O/$key.pt-rb.$r.txt "$@" ;;
        2) one $T/bin/$tool $tool $O/$key.rb-pt.$r.txt "$@" ;;
      esac
      k=$((k + 1))
    done
  done
  echo "dropin-perftest-agree: round $r of $rounds done"
  r=$((r + 1))
done
[ -s $O/agree.fail ] && { cat $O/agree.fail; exit 1; }
echo "dropin-perftest-agree: OK"
