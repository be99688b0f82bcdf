#!/usr/bin/env bash
# ci-action.sh: the steps of rdmabench's GitHub Action (action.yml at the repository
# root), for CI in other repositories; docs/ci.md has the workflow.
#   install  install a released rdmabench: its .deb from the GitHub release (default),
#            'go install ...@VERSION', or none (rdmabench already on PATH)
#   rxe      SoftRoCE on this host: modprobe rdma_rxe (installing Ubuntu's
#            linux-modules-extra-$(uname -r) if the module is missing), then
#            'rdma link add rxe0 type rxe netdev IFACE'; says bed=host, or bed=vm when the
#            kernel has no rdma_rxe (or modprobe is not allowed, as in a container)
#   run      rdmabench loopback ARGS --json RESULT: on the host's rxe0 (bed=host), or in
#            the project's qemu guest (bed=vm: scripts/vmexec, built here with Go, boots
#            Debian's kernel, fetched with install-deps.sh --kernel-only, which needs a
#            Debian host or container; rxe0 on the guest's lo, KVM when /dev/kvm works,
#            else TCG)
#   gate     rdmabench compare --baseline BASELINE RESULT --max-regress LIMITS; the
#            table also goes to $GITHUB_STEP_SUMMARY; no baseline file: a note, exit 0
# Settings come from the environment (action.yml sets them from its inputs):
#   RDMABENCH_VERSION   release, 1.2.3 or v1.2.3 ('latest' with install=go only)
#   RDMABENCH_INSTALL   deb | go | none                        (default deb)
#   RDMABENCH_DEB_URL   a .deb URL or file instead of the release's
#   RDMABENCH_IFACE     netdev for rxe0                        (default lo)
#   RDMABENCH_BED       auto | host | vm                       (default auto)
#   RDMABENCH_ARGS      loopback arguments (default: --mode lat,bw --size 2,4K --iters 20000)
#   RDMABENCH_RESULT    the new result file                    (default rdmabench-result.json)
#   RDMABENCH_BASELINE  the committed baseline                 (default bench/baseline.json)
#   RDMABENCH_MAX_REGRESS  gate limits                         (default p99=10%,bw=5%)
#   RDMABENCH_BIN       the rdmabench to run (default: rdmabench on PATH)
# Outputs (bin=, bed=, result=) are appended to $GITHUB_OUTPUT when it is set.
# Exit status: 0 ok; 1 a regression (gate); 2 bad settings or a failed setup; 3 bed=host
# but no rdma_rxe; else rdmabench's own exit status.
set -euo pipefail

readonly PROG=${0##*/}
ACTION_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly ACTION_DIR
readonly REPO=github.com/rdmabench/rdmabench

log() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit "${2:-2}"; }
output() { # output KEY VALUE: a step output, and on stdout
  printf '%s=%s\n' "$1" "$2"
  [[ -z ${GITHUB_OUTPUT:-} ]] || printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
}
SUDO=''
[[ $(id -u) -eq 0 ]] || SUDO=sudo

apt_install() {
  command -v apt-get >/dev/null || die "apt-get not found: install $* yourself (Debian/Ubuntu names)"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get update -qq >/dev/null || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null \
    || die "apt-get install $* failed"
}

rdmabench_bin() {
  local b=${RDMABENCH_BIN:-}
  [[ -n $b ]] || b=$(command -v rdmabench || true)
  [[ -n $b && -x $b ]] || die "no rdmabench binary (install step, RDMABENCH_BIN or PATH)"
  printf '%s\n' "$b"
}

cmd_install() {
  local how=${RDMABENCH_INSTALL:-deb} v=${RDMABENCH_VERSION:-} url tmp bin
  case $how in
    deb)
      [[ -n $v || -n ${RDMABENCH_DEB_URL:-} ]] || die "install=deb needs a version (input 'version', e.g. 1.2.3)"
      [[ $v != latest ]] || die "install=deb needs a release number, not 'latest' (or use install: go)"
      v=${v#v}
      url=${RDMABENCH_DEB_URL:-https://$REPO/releases/download/v$v/rdmabench_${v}_amd64.deb}
      tmp=$(mktemp -d)
      if [[ -f $url ]]; then
        cp "$url" "$tmp/rdmabench.deb"
      else
        log "downloading $url"
        curl -fsSL --retry 3 -o "$tmp/rdmabench.deb" "$url" || die "downloading $url failed"
      fi
      # apt resolves the .deb's dependencies (libibverbs1, librdmacm1); the rest is
      # what rxe and the VM bed need on the host.
      apt_install "$tmp/rdmabench.deb" ibverbs-providers rdma-core ibverbs-utils iproute2 kmod
      rm -rf "$tmp"
      bin=/usr/bin/rdmabench ;;
    go)
      command -v go >/dev/null || die "install=go needs Go on PATH (actions/setup-go, go >= 1.26)"
      apt_install gcc pkg-config libibverbs-dev librdmacm-dev ibverbs-providers rdma-core ibverbs-utils iproute2 kmod
      [[ -z $v || $v == latest || $v == v* ]] || v=v$v
      log "go install $REPO/cmd/rdmabench@${v:-latest}"
      go install "$REPO/cmd/rdmabench@${v:-latest}" || die "go install failed"
      bin=$(go env GOPATH)/bin/rdmabench
      [[ -z ${GITHUB_PATH:-} ]] || dirname "$bin" >>"$GITHUB_PATH" ;;
    none) bin=$(rdmabench_bin) ;;
    *) die "install wants deb, go or none, got: $how" ;;
  esac
  "$bin" --version >&2 || die "$bin --version failed"
  output bin "$bin"
}

cmd_rxe() {
  local bed=${RDMABENCH_BED:-auto} iface=${RDMABENCH_IFACE:-lo} i why=''
  case $bed in auto|host|vm) ;; *) die "bed wants auto, host or vm, got: $bed" ;; esac
  if [[ $bed == vm ]]; then
    log "bed=vm: the benchmark runs in the project's qemu guest"
    output bed vm
    return 0
  fi
  if [[ ! -e /sys/class/infiniband/rxe0 ]]; then
    if [[ ! -e /sys/module/rdma_rxe ]] && ! $SUDO modprobe rdma_rxe 2>/dev/null; then
      # Ubuntu's cloud kernels keep rdma_rxe in linux-modules-extra.
      if command -v apt-get >/dev/null && apt-cache show "linux-modules-extra-$(uname -r)" >/dev/null 2>&1; then
        log "modprobe rdma_rxe failed: installing linux-modules-extra-$(uname -r)"
        apt_install "linux-modules-extra-$(uname -r)"
      fi
      $SUDO modprobe rdma_rxe 2>/dev/null || why="kernel $(uname -r) has no loadable rdma_rxe (or modprobe is not allowed here)"
    fi
    if [[ -z $why ]]; then
      command -v rdma >/dev/null || die "no 'rdma' tool (iproute2)"
      $SUDO rdma link add rxe0 type rxe netdev "$iface" \
        || why="'rdma link add rxe0 type rxe netdev $iface' failed"
    fi
    if [[ -n $why ]]; then
      [[ $bed == auto ]] || die "bed=host but $why" 3
      log "$why: falling back to the VM bed (the benchmark runs in a qemu guest with rxe0)"
      output bed vm
      return 0
    fi
  fi
  for ((i = 0; i < 100; i++)); do
    grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null && break
    sleep 0.1
  done
  grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null || die "rxe0 port 1 is not ACTIVE"
  log "rxe0 on $iface is ACTIVE"
  output bed host
}

cmd_run() {
  local bed=${RDMABENCH_BED:-auto} bin result=${RDMABENCH_RESULT:-rdmabench-result.json} out rc=0
  local args=${RDMABENCH_ARGS:---mode lat,bw --size 2,4K --iters 20000}
  bin=$(rdmabench_bin)
  [[ $bed != auto ]] || bed=$(cmd_rxe | sed -n 's/^bed=//p')
  # shellcheck disable=SC2086 # ARGS is a word list by design
  set -- $args
  case $bed in
    host)
      # Registered memory counts against RLIMIT_MEMLOCK: raise it in a root shell.
      $SUDO bash -c 'ulimit -l unlimited && exec "$@"' _ "$bin" loopback "$@" --json "$result" || rc=$?
      [[ -z $SUDO || ! -f $result ]] || $SUDO chown "$(id -u):$(id -g)" "$result" ;;
    vm)
      out=$(mktemp -d)
      vm_prepare
      # the guest sees this host's files (read-only): $bin runs there as it is
      $SUDO "$out/vmexec" run --timeout "${RDMABENCH_VM_TIMEOUT:-900}" --outdir "$out/o" \
        -- "$(command -v "$bin" || echo "$bin")" loopback "$@" --json /out/result.json || rc=$?
      [[ ! -f $out/o/result.json ]] || $SUDO mv "$out/o/result.json" "$out/result.json"
      [[ ! -f $out/result.json ]] || $SUDO cp "$out/result.json" "$result"
      [[ -z $SUDO || ! -f $result ]] || $SUDO chown "$(id -u):$(id -g)" "$result"
      $SUDO rm -rf "$out" ;;
    *) die "bed wants host or vm (from the rxe step), got: $bed" ;;
  esac
  ((rc == 0)) || die "rdmabench loopback failed (exit $rc)" "$rc"
  output result "$result"
}

# vm_prepare: what scripts/vmexec needs on the host: Debian packages, Debian's kernel
# (install-deps.sh --kernel-only, which resolves linux-image-amd64 with apt), and Go to
# build vmexec (static) into $out/vmexec.
vm_prepare() {
  if [[ ! -f /etc/debian_version ]] || ! apt-cache show linux-image-amd64 >/dev/null 2>&1; then
    die "the VM bed boots Debian's kernel and needs a Debian host or container (e.g. 'container: debian:12'); this host has neither rdma_rxe nor Debian's linux-image-amd64"
  fi
  command -v go >/dev/null || die "the VM bed builds scripts/vmexec and needs Go on PATH (actions/setup-go)"
  apt_install qemu-system-x86 kmod ibverbs-providers rdma-core ibverbs-utils \
    perftest iproute2 xz-utils zstd ca-certificates
  $SUDO "$ACTION_DIR/scripts/install-deps.sh" --kernel-only >&2 || die "fetching the guest kernel failed"
  (cd "$ACTION_DIR" && CGO_ENABLED=0 go build -o "$out/vmexec" ./scripts/vmexec) >&2 || die "building scripts/vmexec failed"
}

cmd_gate() {
  local bin base=${RDMABENCH_BASELINE:-bench/baseline.json} result=${RDMABENCH_RESULT:-rdmabench-result.json}
  local limits=${RDMABENCH_MAX_REGRESS:-p99=10%,bw=5%} rc=0
  bin=$(rdmabench_bin)
  [[ -f $result ]] || die "no result file $result (run step)"
  if [[ ! -f $base ]]; then
    log "no baseline $base: nothing to gate; commit $result (the job's artifact) as $base to start"
    return 0
  fi
  "$bin" compare --baseline "$base" "$result" --max-regress "$limits" --format markdown >"$result.gate.md" || rc=$?
  cat "$result.gate.md"
  [[ -z ${GITHUB_STEP_SUMMARY:-} ]] || cat "$result.gate.md" >>"$GITHUB_STEP_SUMMARY"
  rm -f "$result.gate.md"
  return "$rc"
}

case ${1:-} in
  install) cmd_install ;;
  rxe) cmd_rxe ;;
  run) cmd_run ;;
  gate) cmd_gate ;;
  -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" ;;
  *) printf 'usage: %s install|rxe|run|gate (see --help)\n' "$PROG" >&2; exit 2 ;;
esac
