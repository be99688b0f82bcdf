#!/usr/bin/env bash
# vm-accel-test.sh: the accelerator choice of vm-run.sh, vm-pair.sh and vm-mesh.sh
# (vm_accel in vm-lib.sh) without booting a test guest. Every case but the last two runs
# on any host, whatever its own KVM does: a stub qemu-system-x86_64 first on PATH, a
# regular file as the KVM device (RDMABENCH_KVM_DEV) and a private cache
# (RDMABENCH_CACHE), so the host's real cache is untouched:
#   KVM works      the stub prints what the probe's /init prints: KVM; cached, the
#                  second call runs no probe; a verdict older than a day is probed again;
#   KVM stalls     the stub hangs: the probe times out (RDMABENCH_KVM_PROBE_TIMEOUT=1),
#                  TCG; the stall is cached, the second call runs no probe;
#   KVM aborts     the stub exits 134 with qemu's "kvm_buf_set_msrs: Assertion ...
#                  failed": TCG naming exit and message; not cached (by design, see
#                  vm_accel), the second call probes again;
#   no KVM         no device, a device that does not open: TCG, no probe;
# and RDMABENCH_ACCEL=tcg/kvm/bogus, a bad probe timeout. Then the real /dev/kvm where
# there is one (whatever it does: a valid verdict, cached as the rules say) and this
# host as vm-run.sh sees it. Each case checks the "accelerator: ..." line and how often
# the stub ran. Host stage of make test; about 2 s (plus one real probe boot, at most
# 20 s, on a host with /dev/kvm whose verdict is not cached yet).
set -euo pipefail
PROG=vm-accel-test.sh
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/vm-lib.sh
. "$SCRIPT_DIR/vm-lib.sh"

fails=0
check() { # check NAME WANT_REGEX GOT
  if [[ $3 =~ $2 ]]; then
    printf '%s: ok: %s: %s\n' "$PROG" "$1" "$3"
  else
    printf '%s: FAIL: %s: got %q, want /%s/\n' "$PROG" "$1" "$3" "$2" >&2
    fails=$((fails + 1))
  fi
}
# accel_of ENV...: run vm_accel with ENV in a subshell; prints its stderr line,
# then "args=<accel_args>" or "exit=<status>". Kernel: $KVER $VERSION $vmlinuz.
accel_of() {
  (
    exec 3>&1
    # shellcheck disable=SC2016 # expanded by the inner bash
    { env "$@" bash -c '
        PROG=vm-run.sh; set -euo pipefail; . "$1"; tmp=$2 KVER=$3 VERSION=$4 vmlinuz=$5
        vm_accel; echo "args=${accel_args[*]}" >&3' _ "$SCRIPT_DIR/vm-lib.sh" "$tmp" "$KVER" "$VERSION" "$vmlinuz" \
        || echo "exit=$?" >&3; } 2>&1
  ) | tr '\n' ' '
}
# probes: how many probe boots the stub has seen.
probes() { grep -c -- '-accel kvm' "$stublog" 2>/dev/null || true; }

vm_check_tools
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- stubs: any host ------------------------------------------------------------
mkdir -p "$tmp/stub"
stublog=$tmp/stub.log
# The stub qemu: --version answers; a run is logged, then does what QEMU_STUB says.
cat >"$tmp/stub/qemu-system-x86_64" <<'EOF'
#!/usr/bin/env bash
[[ ${1:-} == --version ]] && { echo "QEMU emulator version 0.0.0 (vm-accel-test stub)"; exit 0; }
printf '%s\n' "$*" >>"$QEMU_STUB_LOG"
case $QEMU_STUB in
  ok) # print what the probe's /init prints: its echo line, read from the initrd
    prev='' initrd=''
    for a; do [[ $prev == -initrd ]] && initrd=$a; prev=$a; done
    gzip -dc "$initrd" | cpio -i --quiet --to-stdout init | sed -n 's/^echo \([^ ]*\) .*/\1/p' ;;
  hang) exec sleep 60 ;;
  abort)
    echo "qemu-system-x86_64: ../../target/i386/kvm/kvm.c:2999: kvm_buf_set_msrs: Assertion \`ret == cpu->kvm_msr_buf->nmsrs' failed." >&2
    exit 134 ;;
  *) echo "QEMU_STUB unset" >&2; exit 1 ;;
esac
EOF
chmod 755 "$tmp/stub/qemu-system-x86_64"
fake=$tmp/fake-kvm # opens read-write like a working /dev/kvm
: >"$fake"
KVER=0.0-stub VERSION=stub vmlinuz=$tmp/vmlinuz-stub
: >"$vmlinuz"
# stub ENV...: vm_accel with the stub qemu, the fake device and a private cache.
stub() {
  accel_of PATH="$tmp/stub:$PATH" QEMU_STUB_LOG="$stublog" RDMABENCH_KVM_DEV="$fake" \
    RDMABENCH_CACHE="$tmp/cache" XDG_CACHE_HOME="$tmp/xdg" "$@"
}
fresh() { rm -rf "$tmp/cache" "$tmp/xdg" "$stublog"; : >"$stublog"; }

kvm_re='accelerator: KVM \(ok: a probe boot under -accel kvm reached /init in [0-9]+ s'
fresh
check "KVM works: KVM" "^vm-run\.sh: $kvm_re\) args=-accel kvm -cpu max $" "$(stub QEMU_STUB=ok)"
check "KVM works: the probe ran once" '^1$' "$(probes)"
check "KVM works: cached" "^vm-run\.sh: $kvm_re, cached in $tmp/cache/accel/kvm-[0-9a-f]{16}\) args=-accel kvm -cpu max $" \
  "$(stub QEMU_STUB=ok)"
check "KVM works: no second probe" '^1$' "$(probes)"
touch -d '2 days ago' "$tmp"/cache/accel/kvm-*
check "KVM works: a verdict older than a day is probed again" "^vm-run\.sh: $kvm_re\) args=-accel kvm" "$(stub QEMU_STUB=ok)"
check "KVM works: probed again" '^2$' "$(probes)"

stall_re='accelerator: TCG \(a probe boot under -accel kvm did not reach /init in 1 s'
fresh
t0=$SECONDS
check "KVM stalls: TCG after the probe timeout" "^vm-run\.sh: $stall_re\) args=-accel tcg -cpu max $" \
  "$(stub QEMU_STUB=hang RDMABENCH_KVM_PROBE_TIMEOUT=1)"
check "KVM stalls: the probe ended within its timeout (+2 s kill grace)" '^[0-3]$' "$((SECONDS - t0))"
check "KVM stalls: cached" "^vm-run\.sh: $stall_re, cached in $tmp/cache/accel/kvm-[0-9a-f]{16}\) args=-accel tcg -cpu max $" \
  "$(stub QEMU_STUB=hang RDMABENCH_KVM_PROBE_TIMEOUT=1)"
check "KVM stalls: no second probe" '^1$' "$(probes)"
check "KVM stalls: a stall under another timeout is not reused" "^vm-run\.sh: accelerator: KVM" \
  "$(stub QEMU_STUB=ok RDMABENCH_KVM_PROBE_TIMEOUT=2)"

abort_re='accelerator: TCG \(qemu -accel kvm failed \(exit 134\): qemu-system-x86_64: .*kvm_buf_set_msrs: Assertion .* failed\.\) args=-accel tcg -cpu max $'
fresh
check "KVM aborts: TCG, saying why" "^vm-run\.sh: $abort_re" "$(stub QEMU_STUB=abort)"
check "KVM aborts: not cached, probed again" "^vm-run\.sh: $abort_re" "$(stub QEMU_STUB=abort)"
check "KVM aborts: two probes" '^2$' "$(probes)"
check "KVM aborts: no verdict file" '^$' "$(find "$tmp/cache" "$tmp/xdg" -type f 2>/dev/null)"
check "KVM aborts, RDMABENCH_ACCEL=kvm: exit 2" \
  'RDMABENCH_ACCEL=kvm but KVM does not work here: qemu -accel kvm failed \(exit 134\): .*kvm_buf_set_msrs.* exit=2 $' \
  "$(stub QEMU_STUB=abort RDMABENCH_ACCEL=kvm)"

fresh
check "no KVM device: TCG" '^vm-run\.sh: accelerator: TCG \(no /nonexistent/kvm\) args=-accel tcg -cpu max $' \
  "$(stub QEMU_STUB=ok RDMABENCH_KVM_DEV=/nonexistent/kvm)"
# a directory does not open read-write, for root too
check "a KVM device that does not open: TCG" \
  "^vm-run\.sh: accelerator: TCG \(${tmp//./\\.}/stub is not readable and writable by [^)]+\) args=-accel tcg -cpu max $" \
  "$(stub QEMU_STUB=ok RDMABENCH_KVM_DEV="$tmp/stub")"
check "RDMABENCH_ACCEL=tcg: TCG" '^vm-run\.sh: accelerator: TCG \(RDMABENCH_ACCEL=tcg\) args=-accel tcg -cpu max $' \
  "$(stub QEMU_STUB=ok RDMABENCH_ACCEL=tcg)"
check "no KVM, RDMABENCH_ACCEL=tcg: no probe" '^0$' "$(probes)"
check "RDMABENCH_ACCEL=kvm without KVM: exit 2" \
  'RDMABENCH_ACCEL=kvm but KVM does not work here: no /nonexistent/kvm exit=2 $' \
  "$(stub RDMABENCH_ACCEL=kvm RDMABENCH_KVM_DEV=/nonexistent/kvm)"
check "RDMABENCH_ACCEL=bogus: exit 2" 'RDMABENCH_ACCEL wants auto, kvm or tcg, got: bogus exit=2 $' \
  "$(stub RDMABENCH_ACCEL=bogus)"
check "RDMABENCH_KVM_PROBE_TIMEOUT=0: exit 2" \
  'RDMABENCH_KVM_PROBE_TIMEOUT wants whole seconds from 1 to 9999, got: 0 exit=2 $' \
  "$(stub QEMU_STUB=ok RDMABENCH_KVM_PROBE_TIMEOUT=0)"
# Where $CACHE is not writable the verdict goes to ~/.cache (XDG_CACHE_HOME).
fresh
mkdir -p "$tmp/cache"
: >"$tmp/cache/accel" # a file: no directory can be made there, for root too
check "cache not writable: XDG_CACHE_HOME" "^vm-run\.sh: $kvm_re\) args=-accel kvm" "$(stub QEMU_STUB=ok)"
check "cache not writable: cached in XDG_CACHE_HOME" "cached in $tmp/xdg/rdmabench/accel/kvm-" "$(stub QEMU_STUB=ok)"

# --- this host ------------------------------------------------------------------
# The real qemu and kernel, and the real cache, as vm-run.sh would use them.
vm_load_kernel
if [[ -e /dev/kvm ]]; then
  # whatever this host's KVM does: one of the verdicts vm_accel can give
  want='^vm-run\.sh: accelerator: (KVM \(ok: a probe boot under -accel kvm reached /init in [0-9]+ s(, cached in [^)]+)?\) args=-accel kvm'
  want+='|TCG \((a probe boot under -accel kvm did not reach /init in [0-9]+ s(, cached in [^)]+)?'
  want+='|qemu -accel kvm failed \(exit [0-9]+\): .*|/dev/kvm is not readable and writable by .+)\) args=-accel tcg)'
  first=$(accel_of RDMABENCH_KVM_DEV=/dev/kvm)
  check "probe (/dev/kvm)" "$want" "$first"
  if [[ $first == *'qemu -accel kvm failed'* ]]; then
    check "/dev/kvm: a quick failure is not cached" '^vm-run\.sh: accelerator: TCG \(qemu -accel kvm failed \(exit [0-9]+\): ' \
      "$(accel_of RDMABENCH_KVM_DEV=/dev/kvm | grep -v 'cached in' || true)"
  elif [[ $first == *'a probe boot'* && -n $(vm_accel_cache) ]]; then
    check "/dev/kvm: the verdict is cached" ', cached in .*/accel/kvm-' "$(accel_of RDMABENCH_KVM_DEV=/dev/kvm)"
  fi
fi
check "this host" 'accelerator: (KVM|TCG) \(.+\) args=' "$(accel_of)"

if ((fails)); then
  echo "$PROG: $fails check(s) failed" >&2
  exit 1
fi
echo "$PROG: all checks passed"
