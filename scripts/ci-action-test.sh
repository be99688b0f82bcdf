#!/usr/bin/env bash
# ci-action-test.sh: host-side test of scripts/ci-action.sh, the GitHub Action's steps.
# gate: on bench/compare/testdata fixtures (equal -> 0, regressed -> 1 with REGRESSION
# lines in the step summary, no baseline -> 0 with a note); install: none and bad
# settings; rxe: with stub modprobe/rdma/apt-cache on PATH (this host's kernel is not
# touched): no rdma_rxe -> bed=vm (auto) or exit 3 (host), a failing 'rdma link add'
# -> bed=vm; action.yml calls only subcommands that exist; docs/ci.md shows the example
# workflow as it is. With CI_ACTION_VM=1 it
# also runs the VM bed end to end (a guest boot: about a minute). Needs build/rdmabench.
# shellcheck disable=SC2015 # "A && ok || bad": ok and bad always succeed
set -uo pipefail
PROG=ci-action-test.sh
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
A=scripts/ci-action.sh
BIN=${RDMABENCH_BIN:-$PWD/build/rdmabench}
[[ -x $BIN ]] || { echo "$PROG: no $BIN (make build)" >&2; exit 2; }
fails=0
ok() { printf '%s: ok: %s\n' "$PROG" "$*"; }
bad() { printf '%s: FAIL: %s\n' "$PROG" "$*" >&2; fails=$((fails + 1)); }
expect() { # expect NAME WANT_RC GOT_RC OUTPUT REGEX
  if [[ $3 == "$2" && $4 =~ $5 ]]; then ok "$1 (exit $3)"; else bad "$1: exit $3 (want $2), output: $4"; fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fx=bench/compare/testdata
export RDMABENCH_BIN=$BIN GITHUB_OUTPUT=$tmp/out GITHUB_STEP_SUMMARY=$tmp/summary

# --- gate ------------------------------------------------------------------------------
cp "$fx/a.json" "$tmp/new.json"
out=$(RDMABENCH_BASELINE=$fx/a.json RDMABENCH_RESULT=$tmp/new.json $A gate 2>&1); rc=$?
expect "gate: same numbers" 0 $rc "$out" 'no regressions'
: >"$tmp/summary"
cp "$fx/b.json" "$tmp/new.json"
out=$(RDMABENCH_BASELINE=$fx/a.json RDMABENCH_RESULT=$tmp/new.json RDMABENCH_MAX_REGRESS='p99=10%,bw=5%' $A gate 2>&1); rc=$?
expect "gate: regressed p99" 1 $rc "$out" 'REGRESSION write lat 2B: p99 .*\+15\.7%'
grep -q 'REGRESSION' "$tmp/summary" && ok "gate: the table is in the step summary" || bad "gate: no REGRESSION in \$GITHUB_STEP_SUMMARY"
out=$(RDMABENCH_BASELINE=$fx/a.json RDMABENCH_RESULT=$tmp/new.json RDMABENCH_MAX_REGRESS='p99=50%,bw=50%' $A gate 2>&1); rc=$?
expect "gate: within looser limits" 0 $rc "$out" 'no regressions'
out=$(RDMABENCH_BASELINE=$tmp/none.json RDMABENCH_RESULT=$tmp/new.json $A gate 2>&1); rc=$?
expect "gate: no baseline yet" 0 $rc "$out" "no baseline .*none.json: nothing to gate; commit"
out=$(RDMABENCH_BASELINE=$fx/a.json RDMABENCH_RESULT=$tmp/missing.json $A gate 2>&1); rc=$?
expect "gate: no result" 2 $rc "$out" 'no result file'

# --- install -----------------------------------------------------------------------------
: >"$tmp/out"
out=$(RDMABENCH_INSTALL=none $A install 2>&1); rc=$?
expect "install: none" 0 $rc "$out" "bin=$BIN"
grep -qxF "bin=$BIN" "$tmp/out" && ok "install: bin= in \$GITHUB_OUTPUT" || bad "install: no bin= in \$GITHUB_OUTPUT"
out=$(RDMABENCH_INSTALL=deb RDMABENCH_VERSION='' $A install 2>&1); rc=$?
expect "install: deb without a version" 2 $rc "$out" 'needs a version'
out=$(RDMABENCH_INSTALL=deb RDMABENCH_VERSION=latest $A install 2>&1); rc=$?
expect "install: deb latest" 2 $rc "$out" "not 'latest'"
out=$(RDMABENCH_INSTALL=rpm $A install 2>&1); rc=$?
expect "install: unknown method" 2 $rc "$out" 'install wants deb, go or none, got: rpm'

# --- rxe, with stubs in place of modprobe, rdma and apt-cache --------------------------------
if [[ -e /sys/class/infiniband/rxe0 || -e /sys/module/rdma_rxe ]]; then
  echo "$PROG: skip: this host has rdma_rxe loaded; the stubbed rxe cases assume it has not"
else
  mkdir -p "$tmp/stub"
  printf '#!/bin/sh\necho "modprobe: FATAL: Module rdma_rxe not found" >&2; exit 1\n' >"$tmp/stub/modprobe"
  printf '#!/bin/sh\nexit 100\n' >"$tmp/stub/apt-cache"
  printf '#!/bin/sh\necho "rdma: stub: $*" >&2; exit 1\n' >"$tmp/stub/rdma"
  chmod 755 "$tmp/stub"/*
  : >"$tmp/out"
  out=$(PATH=$tmp/stub:$PATH RDMABENCH_BED=auto $A rxe 2>&1); rc=$?
  expect "rxe: no rdma_rxe, auto" 0 $rc "$out" 'has no loadable rdma_rxe.*falling back to the VM bed.*bed=vm'
  grep -qx 'bed=vm' "$tmp/out" && ok "rxe: bed=vm in \$GITHUB_OUTPUT" || bad "rxe: no bed=vm in \$GITHUB_OUTPUT"
  out=$(PATH=$tmp/stub:$PATH RDMABENCH_BED=host $A rxe 2>&1); rc=$?
  expect "rxe: no rdma_rxe, bed=host" 3 $rc "$out" 'bed=host but kernel .* has no loadable rdma_rxe'
  printf '#!/bin/sh\nexit 0\n' >"$tmp/stub/modprobe"
  out=$(PATH=$tmp/stub:$PATH RDMABENCH_BED=auto RDMABENCH_IFACE=eth9 $A rxe 2>&1); rc=$?
  expect "rxe: rdma link add fails" 0 $rc "$out" "'rdma link add rxe0 type rxe netdev eth9' failed: falling back.*bed=vm"
  out=$(RDMABENCH_BED=vm $A rxe 2>&1); rc=$?
  expect "rxe: bed=vm" 0 $rc "$out" 'bed=vm'
  out=$(RDMABENCH_BED=cloud $A rxe 2>&1); rc=$?
  expect "rxe: bad bed" 2 $rc "$out" 'bed wants auto, host or vm, got: cloud'
fi

# --- action.yml calls what the script has ------------------------------------------------------
subs=$(grep -o 'ci-action.sh"\? [a-z]\+' action.yml | awk '{ print $2 }' | sort -u | tr '\n' ' ')
[[ $subs == "gate install run rxe " ]] && ok "action.yml runs: $subs" || bad "action.yml runs '$subs', want gate install run rxe"
# shellcheck disable=SC2013 # the names are single words
for v in $(grep -o 'RDMABENCH_[A-Z_]*' action.yml | sort -u); do
  grep -q "\${$v\b\|\${$v:" "$A" || bad "action.yml sets $v, which $A never reads"
done

# docs/ci.md's workflow is the example workflow file (less its comment header).
if diff <(sed -n '/^```yaml\( norun\)\{0,1\}$/,/^```$/p' docs/ci.md | sed '1d;$d') \
        <(sed '/^#/d' .github/workflows/rdmabench-softroce.yml | sed '/./,$!d') >"$tmp/wf.diff"; then
  ok "docs/ci.md's workflow is .github/workflows/rdmabench-softroce.yml"
else
  bad "docs/ci.md's workflow differs from .github/workflows/rdmabench-softroce.yml: $(cat "$tmp/wf.diff")"
fi

# --- the VM bed end to end (optional: a guest boot) ---------------------------------------------
if [[ ${CI_ACTION_VM:-0} == 1 ]]; then
  out=$(RDMABENCH_BED=vm RDMABENCH_RESULT=$tmp/vm.json RDMABENCH_ARGS='--op send --mode lat --size 2 --iters 2000' \
        $A run 2>&1); rc=$?
  expect "run: bed=vm in the qemu guest" 0 $rc "$out" "result=$tmp/vm.json"
  out=$(RDMABENCH_BASELINE=$tmp/vm.json RDMABENCH_RESULT=$tmp/vm.json $A gate 2>&1); rc=$?
  expect "gate: the guest's result against itself" 0 $rc "$out" 'no regressions'
fi

if ((fails)); then
  echo "$PROG: $fails check(s) failed" >&2
  exit 1
fi
echo "$PROG: all checks passed"
