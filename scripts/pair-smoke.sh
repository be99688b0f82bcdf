#!/usr/bin/env bash
# pair-smoke.sh: two SoftRoCE guests on a virtual wire (scripts/vm-pair.sh): ping,
# perftest and rdmabench server/client across it on rxe2, with rxe2's packet counters
# read before and after to show the traffic crossed the wire.
set -euo pipefail

dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$dir")
bin=${RDMABENCH_BIN:-$repo/build/rdmabench}

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  cat <<EOF
Usage: ${0##*/} [vm-pair.sh options]

Boots two guests with scripts/vm-pair.sh (a: 198.51.100.1, b: 198.51.100.2, rxe2 on
each eth0) and checks, across the wire:
  - b pings a;
  - perftest: 'ib_send_lat -d rxe2 -x 1 -n 200' server in a, client in b;
  - rxe2's hw_counters/sent_pkts moves in both guests during that run;
  - 'rdmabench server --bind 198.51.100.1 -d rxe2' in a and
    'rdmabench run 198.51.100.1 -d rxe2 --op send --mode lat --iters 200' in b
    (JSON result copied back and checked).
The rdmabench binary is \$RDMABENCH_BIN (default build/rdmabench; built with
'go build -o build/rdmabench ./cmd/rdmabench' when missing). Prints the wall time.
Exits 0 on success, non-zero otherwise.
EOF
  exit 0
fi

if [[ ! -x $bin ]]; then
  go=$(command -v go || echo /usr/local/go/bin/go)
  echo "pair-smoke: building $bin" >&2
  (cd "$repo" && "$go" build -o "$bin" ./cmd/rdmabench)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/pair-smoke.XXXXXX")
trap 'rm -rf "$work"' EXIT
# the JSON checks decode the document (scripts/jcheck), no grepping of its text
jcheck=$work/jcheck
(cd "$repo" && CGO_ENABLED=0 "$(command -v go || echo /usr/local/go/bin/go)" build -o "$jcheck" ./scripts/jcheck) ||
  { echo "pair-smoke: cannot build scripts/jcheck" >&2; exit 2; }
cnt=/sys/class/infiniband/rxe2/ports/1/hw_counters/sent_pkts

# Guest a: servers. Flags tell b when each server listens (wait-listen reads
# /proc/net/tcp: perftest's server would take a probing connection as its client).
read -r -d '' script_a <<EOF || true
c0=\$(cat $cnt)
ib_send_lat -d rxe2 -x 1 -n 200 >/tmp/lat.txt 2>&1 &
p=\$!
wait-listen 18515 120 && pair-signal perftest-up
wait \$p; prc=\$?
c1=\$(cat $cnt)
echo "SMOKE perftest server exit \$prc"
grep -A1 't_typical' /tmp/lat.txt || tail -20 /tmp/lat.txt
echo "SMOKE a rxe2 sent_pkts before \$c0 after \$c1"
rdmabench server --bind 198.51.100.1 -d rxe2 >/tmp/server.log 2>&1 &
s=\$!
wait-listen 18515 120 && pair-signal rdmabench-up
pair-wait client-done 600; wrc=\$?
kill \$s 2>/dev/null; wait \$s 2>/dev/null
echo "SMOKE rdmabench server log:"; tail -5 /tmp/server.log
[ \$prc = 0 ] && [ \$wrc = 0 ] && [ "\$c1" -gt "\$c0" ]
EOF

read -r -d '' script_b <<EOF || true
pair-wait perftest-up 300 || exit 1
ping -c 3 198.51.100.1; echo "SMOKE ping exit \$?"
c0=\$(cat $cnt)
ib_send_lat -d rxe2 -x 1 -n 200 198.51.100.1 >/tmp/lat.txt 2>&1; prc=\$?
c1=\$(cat $cnt)
echo "SMOKE perftest client exit \$prc"
grep -A1 't_typical' /tmp/lat.txt || tail -20 /tmp/lat.txt
echo "SMOKE b rxe2 sent_pkts before \$c0 after \$c1"
pair-wait rdmabench-up 300 || { pair-signal client-done; exit 1; }
rdmabench run 198.51.100.1 -d rxe2 --op send --mode lat --iters 200 --json /out/run.json; rrc=\$?
echo "SMOKE rdmabench run exit \$rrc"
pair-signal client-done
[ \$prc = 0 ] && [ \$rrc = 0 ] && [ "\$c1" -gt "\$c0" ]
EOF

t0=$(date +%s.%N)
rc=0
"$dir/vm-pair.sh" --bin "$bin" --outdir "$work/out" "$@" --a "$script_a" --b "$script_b" \
  | tee "$work/out.txt" || rc=$?
wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
((rc == 0)) || { echo "pair-smoke: FAIL: vm-pair.sh exited $rc (wall ${wall} s)" >&2; exit "$rc"; }

out=$(<"$work/out.txt")
missing=()
checks=(
  'b: SMOKE ping exit 0'
  'b: 3 packets transmitted, 3 packets received'
  'a: SMOKE perftest server exit 0'
  'b: SMOKE perftest client exit 0'
  'b: SMOKE rdmabench run exit 0'
)
for want in "${checks[@]}"; do
  grep -qF -- "$want" <<<"$out" || missing+=("$want")
done
# t_typical line of each side: "#bytes #iterations ..." then " 2  200  ..."
for g in a b; do
  grep -qE "^$g:[[:space:]]+2[[:space:]]+200[[:space:]]" <<<"$out" || missing+=("$g: perftest result line")
  if [[ $out =~ $g:\ SMOKE\ $g\ rxe2\ sent_pkts\ before\ ([0-9]+)\ after\ ([0-9]+) ]]; then
    before=${BASH_REMATCH[1]} after=${BASH_REMATCH[2]}
    echo "pair-smoke: $g: rxe2 sent_pkts $before -> $after (+$((after - before))) over 200 perftest round trips"
    ((after > before)) || missing+=("$g: sent_pkts moving")
  else
    missing+=("$g: sent_pkts line")
  fi
done
json=$work/out/b/run.json
if [[ -f $json ]]; then
  "$jcheck" "$json" 'environment.device == "rxe2"' || missing+=('run.json: environment.device "rxe2"')
  "$jcheck" "$json" 'peer ~ "198.51.100.1"' || missing+=('run.json: peer "198.51.100.1..."')
  "$jcheck" "$json" 'environment.gid == "::ffff:198.51.100.2"' || missing+=('run.json: environment.gid "::ffff:198.51.100.2"')
else
  missing+=("b's /out/run.json")
fi
if ((${#missing[@]})); then
  printf 'pair-smoke: FAIL: missing: %s\n' "${missing[@]}" >&2
  exit 1
fi
echo "pair-smoke: OK (ping, ib_send_lat and rdmabench send lat across the wire on rxe2; wall ${wall} s)"
