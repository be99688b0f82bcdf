# shellcheck shell=bash
# vm-lib.sh: the guest-building parts shared by vm-run.sh (one guest) and vm-pair.sh
# (two guests on a virtual wire): kernel lookup, the cached base initramfs, the
# per-run archive with its /init, and the console parser.
# Sourced, not run. The caller sets PROG and SCRIPT_DIR and runs under
# 'set -euo pipefail'. docs/testbed.md describes the recipe.
# The functions read settings from the sourcing script's globals (tmp, bins, files,
# envs, outdir, token, siw_mode, console, ...):
# shellcheck disable=SC2154

CACHE=${RDMABENCH_CACHE:-/var/cache/rdmabench}
# Bump when the layout of the cached base archive changes.
readonly BASE_FORMAT=2
# rxe1's address on dummy0 in the guest, for rdma_cm (which rejects loopback).
readonly CM_ADDR=192.0.2.1
# siw1's address on dummy1 (siw must not share a netdev with rxe: rdma_cm would
# resolve the address to the rxe device).
readonly SIW_ADDR=203.0.113.1
# eth0's subnet between two guests (vm-pair.sh): guest N has 198.51.100.N.
readonly PAIR_NET=198.51.100
# TCP port of the flag server (busybox httpd) behind pair-signal/pair-wait.
readonly PAIR_FLAG_PORT=7799

err() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { err "error: $*"; exit 2; }

# --- options the guest scripts share -----------------------------------------
# vm_guest_opt ARGS...: one option that vm-run.sh, vm-pair.sh and vm-mesh.sh all
# take (--bin --dir --file --env --outdir --timeout --mem --smp --append --siw
# --console; with vm_multi=1 also --grace --port --logdir), into the caller's
# variables of those names (--append: append_extra, --siw: siw_opt). Sets
# vm_shift to the words it took; returns 1 when $1 is none of them.
# shellcheck disable=SC2034 # the caller's variables
vm_guest_opt() {
  vm_shift=2
  case $1 in
    --console) console=1; vm_shift=1; return 0 ;;
    --bin|--dir|--file|--env|--outdir|--timeout|--mem|--smp|--append|--siw) ;;
    --grace|--port|--logdir) ((${vm_multi:-0})) || return 1 ;;
    *) return 1 ;;
  esac
  (($# >= 2)) || die "$1 needs an argument (see -h)"
  case $1 in
    --bin) bins+=("$2") ;;
    --dir) dirs+=("$2") ;;
    --file) files+=("$2") ;;
    --env) envs+=("$2") ;;
    --outdir) outdir=$2 ;;
    --timeout) timeout=$2 ;;
    --mem) mem=$2 ;;
    --smp) smp=$2 ;;
    --append) append_extra=$2 ;;
    --siw) siw_opt=$2 ;;
    --grace) grace=$2 ;;
    --port) port=$2 ;;
    --logdir) logdir=$2 ;;
  esac
}

# vm_check_guest_opts [PORT-KIND]: dies on a bad value of the shared options;
# with vm_multi=1 also --grace and --port (PORT-KIND names the port: TCP, UDP).
vm_check_guest_opts() {
  local v kv
  for v in timeout mem smp; do
    [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "--$v must be a positive integer"
  done
  for kv in ${envs[@]+"${envs[@]}"}; do
    [[ $kv =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "--env wants K=V with K a shell name, got: $kv"
  done
  ((${vm_multi:-0})) || return 0
  [[ $grace =~ ^[0-9]+$ ]] || die "--grace must be a whole number of seconds"
  [[ -z $port || ($port =~ ^[1-9][0-9]*$ && $port -lt 65536) ]] || die "--port must be a ${1:-TCP} port"
}

# vm_check_tools [TOOL...]: the host tools every guest needs, and TOOL...
# shellcheck disable=SC2120 # vm-run.sh needs no extra tools
vm_check_tools() {
  local t
  for t in qemu-system-x86_64 cpio gzip ldd busybox base64 tar timeout "$@"; do
    command -v "$t" >/dev/null || die "$t not found: run scripts/install-deps.sh as root"
  done
}

# vm_siw_mode VALUE: normalize an --siw / RDMABENCH_SIW value to off|auto|require.
vm_siw_mode() {
  case ${1,,} in
    ''|off|no|0|false) echo off ;;
    auto|on|yes|1|true) echo auto ;;
    require|required|must) echo require ;;
    *) die "--siw (or RDMABENCH_SIW) wants off, auto or require, got: $1" ;;
  esac
}

# --- kernel ---------------------------------------------------------------------
# vm_load_kernel: sets kdir KVER VMLINUZ VERSION vmlinuz moddir, fetching the
# kernel with install-deps.sh --kernel-only if the cache has none yet.
vm_load_kernel() {
  kdir=$CACHE/kernel/current
  if [[ ! -f $kdir/.rdmabench-kernel ]]; then
    if [[ -w $CACHE || (! -e $CACHE && $(id -u) -eq 0) ]]; then
      err "no kernel in $CACHE yet: fetching it with install-deps.sh --kernel-only"
      "$SCRIPT_DIR/install-deps.sh" --kernel-only >&2 || die "kernel fetch failed"
    else
      die "no kernel in $CACHE: run 'sudo scripts/install-deps.sh' (or set RDMABENCH_CACHE)"
    fi
  fi
  KVER='' VMLINUZ='' VERSION=''
  local k v
  while IFS='=' read -r k v; do
    case $k in KVER) KVER=$v ;; VMLINUZ) VMLINUZ=$v ;; VERSION) VERSION=$v ;; esac
  done <"$kdir/.rdmabench-kernel"
  vmlinuz=$kdir/$VMLINUZ
  moddir=$kdir/lib/modules/$KVER
  [[ -n $KVER && -r $vmlinuz && -d $moddir ]] || die "broken kernel cache in $kdir: rerun install-deps.sh"
  # soft-iWARP, built by install-deps.sh for this kernel release (Debian ships none).
  siw_ko=''
  if [[ -s $CACHE/siw/$KVER/siw.ko ]] \
     && grep -qxF "KERNEL_VERSION=$VERSION" "$CACHE/siw/$KVER/.rdmabench-siw" 2>/dev/null; then
    siw_ko=$CACHE/siw/$KVER/siw.ko
  fi
}

# vm_siw_check MODE: say (or fail, for 'require') when the guest cannot get siw1.
vm_siw_check() {
  [[ $1 == off || -n $siw_ko ]] && return 0
  local why="no siw.ko for kernel $KVER in $CACHE/siw (build it with: sudo scripts/install-deps.sh --siw-only)"
  [[ $1 == require ]] && die "siw required but $why"
  err "note: $why: the guest gets rxe only, no siw1"
}

# --- accelerator ------------------------------------------------------------------
# vm_accel: choose qemu's accelerator after vm_load_kernel (needs $tmp, vmlinuz):
# sets accel_args (-accel, -cpu) and prints which accelerator on stderr, with
# the reason for TCG. KVM when /dev/kvm opens read-write and a probe boot of the guest
# kernel under -accel kvm reaches its /init in time (RDMABENCH_KVM_PROBE_TIMEOUT
# seconds, default 20): some hosts have a /dev/kvm on which this kernel stalls right
# after decompression, or on which qemu aborts at once on an MSR
# ("kvm_buf_set_msrs: Assertion ... failed", exit 134). Else TCG. The four cases:
#   KVM works      KVM; the verdict is cached.
#   KVM stalls     TCG once the probe times out; the stall is cached, so such a host
#                  pays the timeout once a day, not once per guest.
#   qemu fails     TCG, with qemu's exit status and last stderr line; not cached: it
#                  cost well under a second, and the cause (a busy or misconfigured
#                  device, a qemu about to be upgraded) may be gone next time.
#   no KVM         TCG (no device, or one this user cannot open read-write); no probe.
# The cache ($CACHE/accel, else ~/.cache/rdmabench/accel when $CACHE is not writable)
# keeps a verdict for a day, keyed by host kernel, guest kernel, qemu and device.
# RDMABENCH_ACCEL=tcg skips the probe; RDMABENCH_ACCEL=kvm fails (exit 2) without KVM.
# RDMABENCH_KVM_DEV (default /dev/kvm) is the device checked (for tests).
# shellcheck disable=SC2034 # accel_args: read by the sourcing script
vm_accel() {
  local want=${RDMABENCH_ACCEL:-auto} dev=${RDMABENCH_KVM_DEV:-/dev/kvm} why=''
  local tmo=${RDMABENCH_KVM_PROBE_TIMEOUT:-20}
  case $want in auto|kvm|tcg) ;; *) die "RDMABENCH_ACCEL wants auto, kvm or tcg, got: $want" ;; esac
  [[ $tmo =~ ^[1-9][0-9]{0,3}$ ]] \
    || die "RDMABENCH_KVM_PROBE_TIMEOUT wants whole seconds from 1 to 9999, got: $tmo"
  if [[ $want == tcg ]]; then
    why="RDMABENCH_ACCEL=tcg"
  elif [[ ! -e $dev ]]; then
    why="no $dev"
  elif ! { : <>"$dev"; } 2>/dev/null; then
    why="$dev is not readable and writable by $(id -un)"
  else
    why=$(vm_kvm_probe "$dev" "$tmo") || true
  fi
  if [[ $why == ok* ]]; then
    accel_args=(-accel kvm -cpu max)
    err "accelerator: KVM (${why#ok })"
    return 0
  fi
  [[ $want != kvm ]] || die "RDMABENCH_ACCEL=kvm but KVM does not work here: $why"
  accel_args=(-accel tcg -cpu max)
  err "accelerator: TCG ($why)"
}

# vm_accel_cache: prints the directory for probe verdicts, or nothing if none is writable.
vm_accel_cache() {
  local d
  for d in "$CACHE/accel" "${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/rdmabench/accel"; do
    if mkdir -p "$d" 2>/dev/null && [[ -w $d ]]; then
      printf '%s\n' "$d"
      return 0
    fi
  done
}

# vm_kvm_probe DEV TIMEOUT: boot the guest kernel under KVM with a tiny initramfs whose
# /init prints a marker and powers off, for at most TIMEOUT seconds; prints "ok ..." or
# why KVM is not usable. Caches the verdict as vm_accel says.
vm_kvm_probe() {
  local dev=$1 tmo=$2 key cdir cachef='' qv verdict d=$tmp/kvmprobe rc=0 t0 keyx=()
  qv=$(qemu-system-x86_64 --version 2>/dev/null | head -n1)
  # The timeout joins the key only when it is not the default, so that keys made
  # before it was configurable stay valid.
  [[ $tmo == 20 ]] || keyx=("probe-timeout=$tmo")
  key=$(printf '%s\n' "$(uname -r)" "$KVER" "$VERSION" "$qv" "$dev" ${keyx[@]+"${keyx[@]}"} | sha256sum | cut -c1-16)
  cdir=$(vm_accel_cache)
  if [[ -n $cdir ]]; then
    cachef=$cdir/kvm-$key
    find "$cdir" -type f -mtime +0 -delete 2>/dev/null || true
    if [[ -s $cachef ]]; then
      printf '%s, cached in %s\n' "$(<"$cachef")" "$cachef"
      return 0
    fi
  fi
  mkdir -p "$d/root/dev"
  : >"$d/manifest"
  add_bin "$d/manifest" "$(command -v busybox)" /bin/busybox
  stage "$d/manifest" "$d/root"
  printf '%s\n' '#!/bin/busybox sh' '/bin/busybox mount -t devtmpfs devtmpfs /dev' \
    'echo rdmabench-kvm-probe-ok >/dev/console' '/bin/busybox poweroff -f' >"$d/root/init"
  chmod 755 "$d/root/init"
  mkcpio "$d/root" "$d/initrd.gz" 1
  t0=$SECONDS
  timeout -k 2 "$tmo" qemu-system-x86_64 -accel kvm -cpu max -smp 1 -m 256 -nographic -no-reboot -nic none \
    -kernel "$vmlinuz" -initrd "$d/initrd.gz" -append "console=ttyS0 panic=-1 quiet tsc=reliable no_timer_check" \
    </dev/null >"$d/console" 2>"$d/qemu.err" || rc=$?
  if grep -q rdmabench-kvm-probe-ok "$d/console"; then
    verdict="ok: a probe boot under -accel kvm reached /init in $((SECONDS - t0)) s"
  elif ((rc == 124 || rc == 137)); then
    verdict="a probe boot under -accel kvm did not reach /init in $tmo s"
  else
    verdict="qemu -accel kvm failed (exit $rc): $(grep -v '^[[:space:]]*$' "$d/qemu.err" | tail -n1)"
  fi
  rm -rf "$d"
  # Keep what cost a boot (ok, or a stall); a quick failure is cheap to probe again.
  [[ -z $cachef || $verdict == qemu* ]] || printf '%s\n' "$verdict" >"$cachef"
  printf '%s\n' "$verdict"
}

# --- helpers to collect files -----------------------------------------------------
# A manifest line is "GUESTPATH<TAB>HOSTPATH"; the staged tree is built from it.
# Guest libraries live under /usr (the guest has /lib -> usr/lib, /lib64 -> usr/lib64).
declare -A realdirs=()
guest_path() {
  local p=$1 d
  d=${p%/*}
  [[ -n ${realdirs[$d]:-} ]] || realdirs[$d]=$(readlink -f "${d:-/}")
  p=${realdirs[$d]%/}/${p##*/}
  case $p in
    /lib/*|/lib64/*) p=/usr$p ;;
  esac
  printf '%s\n' "$p"
}

# add_libs MANIFEST FILE: append the shared libraries (and loader) FILE needs.
# The answer is kept in $ldd_cache (if set) under a key of FILE's and dpkg's status
# (size, mtime): ldd costs about 0.3 s a binary on a busy machine, 5 s a run.
add_libs() {
  local manifest=$1 f=$2 out line lib real g key='' cf=''
  if [[ -n ${ldd_cache:-} ]]; then
    key=$(stat -L -c '%n %s %Y' "$f" /var/lib/dpkg/status 2>/dev/null | sha256sum) || key=''
    cf=$ldd_cache/${key:0:24}
    if [[ -n $key && -f $cf ]]; then
      cat "$cf" >>"$manifest"
      return 0
    fi
  fi
  local libs=$tmp/libs.$$
  : >"$libs"
  out=$(LC_ALL=C ldd "$f" 2>&1) || true
  case $out in
    *"not a dynamic executable"*|*"statically linked"*) out='' ;;
  esac
  while IFS= read -r line; do
    line=${line#"${line%%[![:space:]]*}"}
    case $line in
      *"=> not found"*) die "$f: missing library: ${line%% *}" ;;
      *" => "/*) lib=${line#* => }; lib=${lib%% (*} ;;
      /*) lib=${line%% (*} ;;
      *) continue ;;
    esac
    printf '%s\t%s\n' "$(guest_path "$lib")" "$lib" >>"$libs"
    case $lib in
      # also under the versioned file name, which tells the rdma-core release
      */libibverbs.so.*|*/librdmacm.so.*)
        real=$(readlink -f "$lib")
        g=$(guest_path "$lib")
        printf '%s\t%s\n' "${g%/*}/${real##*/}" "$real" >>"$libs" ;;
    esac
  done <<<"$out"
  cat "$libs" >>"$manifest"
  if [[ -n $cf ]]; then
    if ! { cp "$libs" "$cf.$$" 2>/dev/null && mv -f "$cf.$$" "$cf" 2>/dev/null; }; then
      rm -f "$cf.$$"
    fi
  fi
  rm -f "$libs"
}

# vm_ldd_cache DIR: where add_libs keeps its answers (DIR/ldd), if DIR is writable.
vm_ldd_cache() {
  ldd_cache=''
  if mkdir -p "$1/ldd" 2>/dev/null && [[ -w $1/ldd ]]; then
    ldd_cache=$1/ldd
    # forget answers for binaries not seen for a week (old builds of --bin files)
    find "$ldd_cache" -type f -mtime +7 -delete 2>/dev/null || true
  fi
}

add_bin() {
  local manifest=$1 f=$2 dest=$3
  printf '%s\t%s\n' "$dest" "$f" >>"$manifest"
  add_libs "$manifest" "$f"
}

# stage MANIFEST DIR [SKIP]: copy the manifest's files into DIR (first entry for a
# path wins), leaving out guest paths that manifest SKIP already has.
stage() {
  local manifest=$1 dir=$2 skip=${3:-} g h
  local -A seen=()
  if [[ -n $skip ]]; then
    while IFS=$'\t' read -r g h; do seen[$g]=$h; done <"$skip"
  fi
  while IFS=$'\t' read -r g h; do
    [[ -n ${seen[$g]:-} ]] && continue
    seen[$g]=1
    mkdir -p "$dir$(dirname "$g")"
    if [[ -d $h ]]; then
      cp -a "$h" "$dir$g"
    else
      cp -L --preserve=mode "$h" "$dir$g"
    fi
  done <"$manifest"
}

mkcpio() { # mkcpio DIR OUT GZIPLEVEL
  (cd "$1" && find . -print0 | LC_ALL=C sort -z \
     | cpio --null -o -H newc -R 0:0 --quiet) | gzip "-$3" >"$2"
}

quote() { # single-quote for sh
  local s=${1//\'/\'\\\'\'}
  printf "'%s'" "$s"
}

# vm_modules OUTFILE MODULE...: the module files MODULE... need, in insmod order
# (modprobe resolves it from the depmod'ed tree), appended to OUTFILE unless
# already there; dies if a module is missing.
vm_modules() {
  local out=$1 m verb path
  shift
  for m in "$@"; do
    modprobe -d "$kdir" -S "$KVER" --show-depends "$m" >"$tmp/moddeps" \
      || die "kernel $KVER has no $m module"
    while read -r verb path _; do
      [[ $verb == insmod ]] || continue
      grep -qxF "$path" "$out" 2>/dev/null || printf '%s\n' "$path" >>"$out"
    done <"$tmp/moddeps"
  done
}

# --- base archive (fixed parts, cached per kernel and host package state) ---------
# vm_build_base: needs $tmp and vm_load_kernel; sets base (the cached base archive)
# and base_manifest. The base holds everything any guest may use: rxe, siw (when
# built), the virtio-net chain and sch_netem for vm-pair.sh, 8021q for VLAN tests, iproute2's tc. Which
# of these /init sets up is decided per run (see vm_write_init).
vm_build_base() {
  base_manifest=$tmp/base.manifest
  : >"$base_manifest"
  vm_ldd_cache "$CACHE/initramfs"
  [[ -n $ldd_cache ]] || vm_ldd_cache "${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/rdmabench/initramfs"
  local busybox_bin p b d f provider siwprov='' tcbin
  busybox_bin=$(command -v busybox)
  add_bin "$base_manifest" "$busybox_bin" /bin/busybox
  for b in rdma ibv_devinfo ibv_devices ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong \
           ibv_srq_pingpong rping \
           ib_send_lat ib_send_bw ib_write_lat ib_write_bw ib_read_lat ib_read_bw \
           ib_atomic_lat ib_atomic_bw; do
    p=$(command -v "$b" || true)
    if [[ -z $p ]]; then
      case $b in
        rdma|ibv_devinfo|ibv_devices|ib_send_lat|ib_send_bw|ib_write_lat|ib_write_bw|\
        ib_read_lat|ib_read_bw|ib_atomic_lat) die "$b not found: run scripts/install-deps.sh" ;;
      esac
      continue
    fi
    add_bin "$base_manifest" "$p" "/usr/bin/$b"
  done
  # iproute2's tc: busybox's tc applet knows no netem.
  tcbin=$(command -v tc || true)
  [[ -n $tcbin ]] || { [[ -x /usr/sbin/tc ]] && tcbin=/usr/sbin/tc; }
  [[ -n $tcbin ]] || die "tc not found: install iproute2"
  add_bin "$base_manifest" "$tcbin" /usr/sbin/tc
  [[ -d /etc/iproute2 ]] && printf '%s\t%s\n' /etc/iproute2 /etc/iproute2 >>"$base_manifest"
  for f in /usr/lib/x86_64-linux-gnu/tc/*.dist /usr/lib/tc/*.dist; do
    [[ -f $f ]] && printf '%s\t%s\n' "$(guest_path "$f")" "$f" >>"$base_manifest"
  done
  provider=''
  for d in /usr/lib/x86_64-linux-gnu/libibverbs /usr/lib64/libibverbs /usr/lib/libibverbs; do
    for f in "$d"/librxe-rdmav*.so; do
      [[ -f $f ]] && { provider=$f; break 2; }
    done
  done
  [[ -n $provider ]] || die "rxe provider (librxe-rdmav*.so) not found: install ibverbs-providers"
  [[ -f /etc/libibverbs.d/rxe.driver ]] || die "/etc/libibverbs.d/rxe.driver not found: install ibverbs-providers"
  add_bin "$base_manifest" "$provider" "$(guest_path "$provider")"
  printf '%s\t%s\n' /etc/libibverbs.d/rxe.driver /etc/libibverbs.d/rxe.driver >>"$base_manifest"
  # The siw provider goes next to rxe's; its .driver file waits in /etc/rdmabench and
  # /init copies it to /etc/libibverbs.d only when it brings up siw1, so that guests
  # without siw see exactly the providers they always did.
  if [[ -n $siw_ko ]]; then
    for f in "${provider%/*}"/libsiw-rdmav*.so; do [[ -f $f ]] && siwprov=$f; done
    if [[ -n $siwprov && -f /etc/libibverbs.d/siw.driver ]]; then
      add_bin "$base_manifest" "$siwprov" "$(guest_path "$siwprov")"
      printf '%s\t%s\n' /etc/rdmabench/siw.driver /etc/libibverbs.d/siw.driver >>"$base_manifest"
    else
      err "note: siw provider (libsiw-rdmav*.so, /etc/libibverbs.d/siw.driver) not found: no siw in the guest"
      siw_ko=''
    fi
  fi

  # Kernel modules in dependency order, in lists that /init inserts as needed.
  : >"$tmp/mods.rdma"
  if modprobe -d "$kdir" -S "$KVER" --show-depends crc32_generic >/dev/null 2>&1; then
    vm_modules "$tmp/mods.rdma" crc32_generic
  else
    err "note: no crc32_generic module in $KVER (fine if crc32 is built in)"
  fi
  vm_modules "$tmp/mods.rdma" ib_uverbs rdma_ucm rdma_rxe dummy
  : >"$tmp/mods.siw"
  if [[ -n $siw_ko ]]; then
    # Only these two: libcrc32c's soft dependency would also pull crc32c-intel.
    vm_modules "$tmp/mods.siw" crc32c_generic
    modprobe -d "$kdir" -S "$KVER" --show-depends libcrc32c \
      | awk '$1 == "insmod" && $2 ~ /\/libcrc32c\.ko/ { print $2 }' >>"$tmp/mods.siw"
    printf '%s\n' "$siw_ko" >>"$tmp/mods.siw"
  fi
  : >"$tmp/mods.net"
  vm_modules "$tmp/mods.net" virtio_pci virtio_net sch_netem
  # 802.1Q VLANs, inserted by the tests that build a VLAN netdev under rxe
  : >"$tmp/mods.vlan"
  vm_modules "$tmp/mods.vlan" 8021q

  local base_key basename_ basedir root a m name list
  base_key=$( {
    printf 'format=%s kver=%s version=%s\n' "$BASE_FORMAT" "$KVER" "$VERSION"
    declare -f vm_write_guest_tools
    cat "$base_manifest" "$tmp/mods.rdma" "$tmp/mods.siw" "$tmp/mods.net" "$tmp/mods.vlan"
    { cut -f2 "$base_manifest"; cat "$tmp/mods.siw"; } | xargs -d '\n' stat -L -c '%n %s %Y' --
  } | sha256sum | cut -c1-16)

  # Use the shared cache if it has this base or is writable, else a per-user cache,
  # else build into the temp dir (no caching).
  basename_=base-$KVER-$base_key.cpio.gz
  basedir=$CACHE/initramfs
  if [[ ! -r $basedir/$basename_ ]] && ! { mkdir -p "$basedir" 2>/dev/null && [[ -w $basedir ]]; }; then
    basedir=${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/rdmabench/initramfs
    if [[ ! -r $basedir/$basename_ ]] && ! { mkdir -p "$basedir" 2>/dev/null && [[ -w $basedir ]]; }; then
      basedir=$tmp
    fi
  fi
  base=$basedir/$basename_
  [[ -s $base ]] && return 0
  if [[ $basedir == "$tmp" ]]; then
    err "building base initramfs for $KVER (not cached: no writable cache dir)"
  else
    err "building base initramfs for $KVER (cached as $base)"
  fi
  root=$tmp/base
  mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,usr/lib/x86_64-linux-gnu,usr/lib64,etc,proc,sys,dev,tmp,work,out,root,run,var}
  ln -s usr/lib "$root/lib"
  ln -s usr/lib64 "$root/lib64"
  stage "$base_manifest" "$root"
  ln -s /usr/sbin/tc "$root/sbin/tc" # before busybox's applet can take the name
  # busybox applets, without shadowing real tools
  while IFS= read -r a; do
    [[ -e $root/$a || -L $root/$a ]] && continue
    mkdir -p "$root/$(dirname "$a")"
    ln -s /bin/busybox "$root/$a"
  done < <("$busybox_bin" --list-full | grep -v '^linuxrc$')
  mkdir -p "$root/usr/lib/modules/$KVER"
  for list in rdma siw net vlan; do
    # the rxe list keeps its old name: guest scripts may read it
    local lf=$root/etc/rdmabench-modules
    [[ $list == rdma ]] || lf=$lf-$list
    : >"$lf"
    while IFS= read -r m; do
      name=${m##*/}
      case $name in
        *.ko) cp "$m" "$root/usr/lib/modules/$KVER/$name" ;;
        *.ko.xz) name=${name%.xz}; xz -dc "$m" >"$root/usr/lib/modules/$KVER/$name" ;;
        *.ko.zst) name=${name%.zst}; zstd -qdc "$m" >"$root/usr/lib/modules/$KVER/$name" ;;
        *.ko.gz) name=${name%.gz}; gzip -dc "$m" >"$root/usr/lib/modules/$KVER/$name" ;;
        *) die "unknown module format: $m" ;;
      esac
      printf '/lib/modules/%s/%s\n' "$KVER" "$name" >>"$lf"
    done <"$tmp/mods.$list"
  done
  vm_write_guest_tools "$root"
  printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
  printf 'root:x:0:\n' >"$root/etc/group"
  printf '127.0.0.1\tlocalhost\n::1\tlocalhost\n' >"$root/etc/hosts"
  if [[ $(id -u) -eq 0 ]]; then
    mknod -m 600 "$root/dev/console" c 5 1
    mknod -m 666 "$root/dev/null" c 1 3
  fi
  chmod 1777 "$root/tmp"
  chmod 755 "$root"
  mkcpio "$root" "$tmp/base.cpio.gz" 6
  mv "$tmp/base.cpio.gz" "$base"
  rm -rf "$root"
  # drop stale bases (other keys) not used for a day
  find "$basedir" -maxdepth 1 -name 'base-*.cpio.gz' ! -name "${base##*/}" -mtime +0 -delete 2>/dev/null || true
}

# vm_write_guest_tools ROOT: small helpers in the guest's /bin for payloads that
# must wait for each other (vm-pair.sh) or for a local server.
vm_write_guest_tools() {
  local root=$1
  cat >"$root/bin/wait-listen" <<'EOF'
#!/bin/sh
# wait-listen PORT [SECS]: wait until a local TCP socket listens on PORT (read from
# /proc/net/tcp*, so no connection is made: perftest's server takes only one).
[ $# -ge 1 ] || { echo "usage: wait-listen PORT [SECS]" >&2; exit 2; }
hex=$(printf ':%04X' "$1")
end=$(( $(date +%s) + ${2:-60} ))
while :; do
  cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v p="$hex" '$2 ~ p"$" && $4 == "0A" { f = 1 } END { exit !f }' && exit 0
  [ "$(date +%s)" -ge "$end" ] && { echo "wait-listen: nothing listens on port $1 after ${2:-60} s" >&2; exit 1; }
  sleep 0.2
done
EOF
  cat >"$root/bin/pair-signal" <<'EOF'
#!/bin/sh
# pair-signal NAME: raise flag NAME, which the other guest's 'pair-wait NAME' sees.
[ $# -eq 1 ] || { echo "usage: pair-signal NAME" >&2; exit 2; }
mkdir -p /tmp/pair-flags && echo "$1" >"/tmp/pair-flags/$1"
EOF
  cat >"$root/bin/pair-wait" <<'EOF'
#!/bin/sh
# pair-wait NAME [SECS]: wait until the other guest has run 'pair-signal NAME'
# (fetched from the flag server on its eth0 address).
[ $# -ge 1 ] || { echo "usage: pair-wait NAME [SECS]" >&2; exit 2; }
[ -n "${RDMABENCH_PEER:-}" ] || { echo "pair-wait: no peer (RDMABENCH_PEER unset: not a vm-pair.sh guest)" >&2; exit 2; }
end=$(( $(date +%s) + ${2:-120} ))
while :; do
  timeout 5 wget -q -O /dev/null "http://$RDMABENCH_PEER:${RDMABENCH_FLAG_PORT:-7799}/$1" 2>/dev/null && exit 0
  [ "$(date +%s)" -ge "$end" ] && { echo "pair-wait: no flag '$1' from $RDMABENCH_PEER after ${2:-120} s" >&2; exit 1; }
  sleep 0.5
done
EOF
  chmod 755 "$root/bin/wait-listen" "$root/bin/pair-signal" "$root/bin/pair-wait"
}

# --- per-run archive ----------------------------------------------------------------
# vm_stage_payload RUNDIR: --bin, --dir and --file (arrays bins, dirs, files) into
# RUNDIR. --bin FILE[:DEST]: an executable (found on PATH if FILE has no '/') in
# /bin, or at the absolute guest path DEST, with its shared libraries. --dir
# SRC[:DEST]: every file under SRC (symlinks followed) under DEST (default SRC),
# each with its shared libraries: a plugin directory, say (dirs is optional).
vm_stage_payload() {
  local run=$1 b p spec src dest f
  mkdir -p "$run/etc/rdmabench" "$run/bin" "$run/work"
  local run_manifest=$tmp/run.manifest
  local -a execs=()
  : >"$run_manifest"
  for b in "${bins[@]}"; do
    p=$b dest=''
    if [[ ! -e $p && $p == *:* ]]; then
      p=${b%%:*} dest=${b#*:}
      [[ $dest == /* && $dest != */ ]] || die "--bin $b: DEST must be an absolute file path"
    fi
    [[ $p == */* || -e $p ]] || p=$(command -v "$p" || true)
    [[ -n $p && -f $p ]] || die "--bin $b: no such file"
    dest=${dest:-/bin/${p##*/}}
    add_bin "$run_manifest" "$p" "$dest"
    execs+=("$dest")
  done
  for spec in ${dirs[@]+"${dirs[@]}"}; do
    src=${spec%%:*} dest=${spec#*:}
    [[ $spec == *:* ]] || dest=$src
    src=${src%/} dest=${dest%/}
    [[ -d $src ]] || die "--dir $spec: no such directory: $src"
    [[ $dest == /* ]] || die "--dir $spec: DEST must be an absolute path"
    while IFS= read -r -d '' f; do
      # the real file: add_libs's cache keys on its path
      add_bin "$run_manifest" "$(readlink -f "$f")" "$dest${f#"$src"}"
    done < <(find -L "$src" -type f -print0 | LC_ALL=C sort -z)
  done
  stage "$run_manifest" "$run" "$base_manifest" # libraries the base has are not sent again
  for b in "${execs[@]}"; do chmod 755 "$run$b"; done
  for spec in "${files[@]}"; do
    if [[ -e $spec || $spec != *:* ]]; then
      src=$spec dest=''
    else
      src=${spec%:*} dest=${spec##*:}
    fi
    [[ -e $src ]] || die "--file $spec: no such file: $src"
    src=${src%/}
    [[ -n $src ]] || src=/
    case $dest in
      '') dest=/work/${src##*/} ;;
      */) dest=$dest${src##*/} ;;
    esac
    [[ $dest == /* ]] || dest=/work/$dest
    mkdir -p "$run$(dirname "$dest")"
    cp -a "$src" "$run$dest"
  done
}

# vm_write_cmd RUNDIR ARGV...: the payload as an exec of ARGV (vm-run.sh).
# vm_write_cmd RUNDIR -s SCRIPT: the payload as a shell script body (vm-pair.sh).
# envs (array of K=V) are exported first.
vm_write_cmd() {
  local run=$1 kv a
  shift
  {
    printf 'cd /work || exit 125\n'
    for kv in "${envs[@]}"; do
      printf 'export %s=%s\n' "${kv%%=*}" "$(quote "${kv#*=}")"
    done
    if [[ $1 == -s ]]; then
      printf '%s\n' "$2"
    else
      printf 'exec'
      for a in "$@"; do printf ' %s' "$(quote "$a")"; done
      printf '\n'
    fi
  } >"$run/etc/rdmabench/cmd.sh"
}

# vm_write_init RUNDIR: the guest's /init. Uses token, outdir (non-empty: send /out
# back), siw_mode (off|auto|require), and for vm-pair.sh pair_self (1 or 2: eth0
# gets $PAIR_NET.N and rxe2) and pair_name (a|b); pair_self empty for one guest.
# vm-mesh.sh also sets pair_peer (RDMABENCH_PEER: guest 1's address) and init_extra
# (sh text run after the wire is up).
vm_write_init() {
  local run=$1
  # Markers are assembled at run time so that the init script's text (if CMD prints it)
  # never contains a whole marker.
  cat >"$run/init" <<EOF
#!/bin/sh
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/root TERM=dumb # the console is a log, not a screen
M="@@rdmabench-$token"
OUTDIR=$((${#outdir} > 0 ? 1 : 0))
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
fail() {
  echo "\${M}-setupfail: \$*"
  stty -F /dev/console -echo 2>/dev/null; sleep 1; poweroff -f
}
mount -t proc proc /proc || fail "mount /proc"
mount -t sysfs sysfs /sys || fail "mount /sys"
mount -t tmpfs -o mode=1777 tmpfs /tmp || fail "mount tmpfs on /tmp"
mkdir -p /dev/pts /dev/shm && mount -t tmpfs tmpfs /dev/shm
for m in \$(cat /etc/rdmabench-modules); do
  n=\${m##*/}; n=\${n%.ko}
  grep -q "^\$n " /proc/modules || insmod "\$m" || fail "insmod \$n"
done
ip link set lo up || fail "ip link set lo up"
[ -w /proc/sys/net/ipv4/conf/all/accept_local ] && echo 1 >/proc/sys/net/ipv4/conf/all/accept_local
ulimit -l unlimited || fail "ulimit -l unlimited"
rdma link add rxe0 type rxe netdev lo || fail "rdma link add rxe0 type rxe netdev lo"
i=0
until grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null; do
  i=\$((i + 1)); [ \$i -gt 50 ] && fail "rxe0 port 1 not ACTIVE (\$(cat /sys/class/infiniband/rxe0/ports/1/state 2>&1))"
  sleep 0.1
done
[ -e /dev/infiniband/uverbs0 ] || fail "no /dev/infiniband/uverbs0"
# rdma_cm cannot resolve loopback addresses: rxe1 on dummy0 carries a
# non-loopback address for it (TEST-NET-1; MTU 9000 gives an IB MTU of 4096).
ip link add dummy0 type dummy 2>/dev/null || ip link show dummy0 >/dev/null 2>&1 || fail "ip link add dummy0"
ip link set dummy0 mtu 9000 up && ip addr add $CM_ADDR/24 dev dummy0 || fail "dummy0 address"
rdma link add rxe1 type rxe netdev dummy0 || fail "rdma link add rxe1 type rxe netdev dummy0"
i=0
until grep -q ACTIVE /sys/class/infiniband/rxe1/ports/1/state 2>/dev/null && [ -e /dev/infiniband/uverbs1 ]; do
  i=\$((i + 1)); [ \$i -gt 50 ] && fail "rxe1 port 1 not ACTIVE"
  sleep 0.1
done
EOF
  if [[ -n ${pair_self:-} ]]; then
    local addr=$PAIR_NET.$pair_self peer=${pair_peer:-$PAIR_NET.$((3 - pair_self))}
    cat >>"$run/init" <<EOF
# The wire to the other guest (vm-pair.sh): virtio-net eth0, rxe2 on it.
for m in \$(cat /etc/rdmabench-modules-net); do
  n=\${m##*/}; n=\${n%.ko}
  grep -q "^\$n " /proc/modules || insmod "\$m" || fail "insmod \$n"
done
i=0
until [ -e /sys/class/net/eth0 ]; do
  i=\$((i + 1)); [ \$i -gt 100 ] && fail "no eth0 (virtio-net)"
  sleep 0.1
done
ip link set eth0 mtu 9000 || fail "eth0 mtu 9000"
ip link set eth0 up && ip addr add $addr/24 dev eth0 || fail "eth0 address $addr"
i=0
until grep -q 1 /sys/class/net/eth0/carrier 2>/dev/null; do
  i=\$((i + 1)); [ \$i -gt 100 ] && { echo "\${M}-note: eth0 has no carrier after 10 s (is the other guest up?)"; break; }
  sleep 0.1
done
rdma link add rxe2 type rxe netdev eth0 || fail "rdma link add rxe2 type rxe netdev eth0"
i=0
until grep -q ACTIVE /sys/class/infiniband/rxe2/ports/1/state 2>/dev/null; do
  i=\$((i + 1)); [ \$i -gt 100 ] && fail "rxe2 port 1 not ACTIVE (\$(cat /sys/class/infiniband/rxe2/ports/1/state 2>&1))"
  sleep 0.1
done
mkdir -p /tmp/pair-flags
httpd -p $addr:$PAIR_FLAG_PORT -h /tmp/pair-flags || fail "flag server (httpd) on $addr:$PAIR_FLAG_PORT"
export RDMABENCH_GUEST=$pair_name RDMABENCH_ADDR=$addr RDMABENCH_PEER=$peer RDMABENCH_FLAG_PORT=$PAIR_FLAG_PORT
EOF
  fi
  # vm-mesh.sh: its own setup (host names, the ssh agent), after the wire is up.
  [[ -z ${init_extra:-} ]] || printf '%s\n' "$init_extra" >>"$run/init"
  if [[ $siw_mode != off ]]; then
    cat >>"$run/init" <<EOF
# soft-iWARP: siw1 on its own dummy1 (sharing a netdev with rxe would let rdma_cm
# resolve the address to the rxe device).
SIW_MODE=$siw_mode
nosiw() {
  [ "\$SIW_MODE" = require ] && fail "siw: \$*"
  echo "\${M}-note: siw: \$*: no siw1, continuing with rxe only"
}
siw_up() {
  for m in \$(cat /etc/rdmabench-modules-siw 2>/dev/null); do
    n=\${m##*/}; n=\${n%.ko}
    grep -q "^\$n " /proc/modules || insmod "\$m" || { nosiw "insmod \$n failed"; return; }
  done
  grep -q '^siw ' /proc/modules || { nosiw "siw.ko is not in this guest (not built on the host: scripts/install-deps.sh --siw-only)"; return; }
  cp /etc/rdmabench/siw.driver /etc/libibverbs.d/siw.driver || { nosiw "no siw provider"; return; }
  ip link add dummy1 type dummy 2>/dev/null || ip link show dummy1 >/dev/null 2>&1 || { nosiw "ip link add dummy1 failed"; return; }
  ip link set dummy1 mtu 9000 up && ip addr add $SIW_ADDR/24 dev dummy1 || { nosiw "dummy1 address failed"; return; }
  rdma link add siw1 type siw netdev dummy1 || { nosiw "rdma link add siw1 type siw netdev dummy1 failed"; return; }
  i=0
  until grep -q ACTIVE /sys/class/infiniband/siw1/ports/1/state 2>/dev/null; do
    i=\$((i + 1)); [ \$i -gt 50 ] && { nosiw "siw1 port 1 not ACTIVE"; return; }
    sleep 0.1
  done
  export RDMABENCH_SIW_DEVICE=siw1 RDMABENCH_SIW_ADDR=$SIW_ADDR
}
siw_up
EOF
  fi
  cat >>"$run/init" <<EOF
echo "\${M}-begin"
sh /etc/rdmabench/cmd.sh </dev/null
rc=\$?
echo "\${M}-end:\$rc"
if [ "\$OUTDIR" = 1 ]; then
  if tar -C /out -czf /tmp/.rdmabench-out.tgz . ; then
    echo "\${M}-out-begin"
    base64 /tmp/.rdmabench-out.tgz
    echo "\${M}-out-end"
  else
    echo "\${M}-out-fail"
  fi
fi
echo "\${M}-done"
stty -F /dev/console -echo 2>/dev/null
EOF
  if [[ -n ${pair_self:-} ]]; then
    # Stay up (flag server and all) until vm-pair.sh stops this guest once the other
    # guest's payload has ended too: a 'pair-wait' there may still ask for our flags.
    printf 'while :; do sleep 60; done\n' >>"$run/init"
  else
    printf 'sleep 1\npoweroff -f\n' >>"$run/init"
  fi
  chmod 755 "$run/init" "$run/etc/rdmabench/cmd.sh"
  chmod 755 "$run"
}

# vm_initrd RUNDIR OUT: the per-run archive appended to the cached base.
vm_initrd() {
  mkcpio "$1" "$1.cpio.gz" 1
  cat "$base" "$1.cpio.gz" >"$2"
  rm -rf "$1" "$1.cpio.gz"
}

# The guest kernel would pick the emulated HPET as its clocksource, where every
# clock_gettime costs about 1 us; real hosts read the TSC through the vDSO (tens of
# ns). tsc=reliable gives the guest the TSC, so timestamps cost what they do on hardware.
# no_timer_check: a loaded host can starve the emulated 8254 during boot, and the
# kernel then panics "IO-APIC + timer doesn't work" (seen with two guests on 2 cores).
# vm_numa_args NODES SMP MEM: qemu arguments for a guest with NODES NUMA
# nodes: the MEM MiB split among them (the last takes the remainder), the
# SMP CPUs dealt out in blocks (node i gets CPUs i*SMP/NODES..). One node:
# nothing. Prints one argument per line.
vm_numa_args() {
  local nodes=$1 smp=$2 mem=$3 i size lo hi
  ((nodes > 1)) || return 0
  ((smp >= nodes)) || die "--numa $nodes needs at least $nodes CPUs (--smp $smp)"
  ((mem >= 64 * nodes)) || die "--numa $nodes needs at least $((64 * nodes)) MB (--mem $mem)"
  for ((i = 0; i < nodes; i++)); do
    size=$((mem / nodes))
    ((i < nodes - 1)) || size=$((mem - (nodes - 1) * (mem / nodes)))
    lo=$((i * smp / nodes)) hi=$(((i + 1) * smp / nodes - 1))
    printf '%s\n' -object "memory-backend-ram,size=${size}M,id=m$i" -numa "node,nodeid=$i,cpus=$lo-$hi,memdev=m$i"
  done
}

vm_append() {
  printf '%s\n' "console=ttyS0 panic=-1 quiet tsc=reliable no_timer_check${append_extra:+ $append_extra}"
}

# --- console ------------------------------------------------------------------------
# vm_parse_console FIFO LOG OUTB64 PREFIX [BEGINFILE]: read the serial console from
# FIFO until the guest is done; CMD's lines go to stdout and kernel messages to stderr,
# each behind PREFIX; the raw console goes to LOG, /out's base64 to OUTB64; BEGINFILE
# (if given) is created when CMD starts and BEGINFILE.end (holding CMD's status) when
# it ends. Sets state (boot,
# cmd, post, out, finished), rc, setupfail, outstate. Uses M (the marker) and console.
vm_parse_console() {
  local fifo=$1 log=$2 outb64=$3 prefix=$4 beginfile=${5:-} line
  local kmsg_re='^\[ *[0-9]+\.[0-9]+\] '
  state=boot rc='' setupfail='' outstate=''
  exec 5>"$log" 6>"$outb64"
  while IFS= read -r line || [[ -n $line ]]; do
    line=${line//$'\r'/}
    printf '%s\n' "$line" >&5
    ((console)) && printf '%s%s\n' "$prefix" "$line" >&2
    case $state in
      boot)
        case $line in
          *"$M-begin") state=cmd; [[ -z $beginfile ]] || : >"$beginfile" ;;
          *"$M-setupfail: "*) setupfail=${line#*"$M-setupfail: "}; break ;;
          *"$M-note: "*) err "${prefix}guest: ${line#*"$M-note: "}" ;;
        esac
        ;;
      cmd)
        if [[ $line =~ ^(.*)"$M-end:"([0-9]+)$ ]]; then
          [[ -n ${BASH_REMATCH[1]} ]] && printf '%s%s\n' "$prefix" "${BASH_REMATCH[1]}"
          rc=${BASH_REMATCH[2]}
          state=post
          [[ -z $beginfile ]] || printf '%s\n' "$rc" >"$beginfile.end"
        elif [[ $line =~ $kmsg_re ]]; then
          printf '%s%s\n' "$prefix" "$line" >&2 # kernel message: keep it out of CMD's stdout
        else
          printf '%s%s\n' "$prefix" "$line"
        fi
        ;;
      post)
        case $line in
          "$M-out-begin") outstate=reading; state=out ;;
          "$M-out-fail") outstate=failed ;;
          "$M-done") state=finished; break ;;
        esac
        ;;
      out)
        if [[ $line == "$M-out-end" ]]; then
          outstate=complete state=post
        else
          printf '%s\n' "$line" >&6
        fi
        ;;
    esac
  done <"$fifo"
  exec 5>&- 6>&-
}

# vm_show_tail LOG QEMUERR [WHO]: the last console lines and qemu's stderr.
vm_show_tail() {
  local who=${3:+$3: }
  err "---- ${who}last console lines ----"
  tail -n 60 "$1" >&2 || true
  if [[ -s $2 ]]; then
    err "---- ${who}qemu stderr ----"
    cat "$2" >&2
  fi
  err "----------------------------"
}

# vm_outcome LOG QEMUERR QRC TIMEOUT OUTDIR OUTB64 [WHO]: after the console parser
# (state rc setupfail outstate) and qemu (exit QRC) ended, explain a failure and
# unpack /out; returns CMD's status, 124 on timeout, 125 if the guest failed.
vm_outcome() {
  local log=$1 qerr=$2 qrc=$3 tmo=$4 odir=$5 outb64=$6 who=${7:-}
  local w=${who:+$who: }
  if [[ -n $setupfail ]]; then
    vm_show_tail "$log" "$qerr" "$who"
    err "error: ${w}guest setup (rxe, siw, network) failed at step: $setupfail"
    return 125
  fi
  if [[ -z $rc ]]; then
    vm_show_tail "$log" "$qerr" "$who"
    if ((qrc == 124 || qrc == 137)); then
      err "error: ${w}timed out after ${tmo}s ($([[ $state == boot ]] && echo 'guest still booting' || echo 'command still running'))"
      return 124
    fi
    if grep -q 'Kernel panic' "$log"; then
      err "error: ${w}guest kernel panicked (qemu exit $qrc)"
    elif [[ $state == boot ]]; then
      err "error: ${w}guest died before the command started (qemu exit $qrc)"
    else
      err "error: ${w}guest died while the command was running (qemu exit $qrc)"
    fi
    return 125
  fi
  if [[ -n $odir ]]; then
    if [[ $outstate != complete ]]; then
      vm_show_tail "$log" "$qerr" "$who"
      if ((qrc == 124 || qrc == 137)); then
        err "error: ${w}timed out after ${tmo}s while copying /out back"
        return 124
      fi
      err "error: ${w}could not copy /out back from the guest (${outstate:-no output received})"
      return 125
    fi
    mkdir -p "$odir"
    if ! base64 -d "$outb64" | tar -xzf - -C "$odir"; then
      err "error: ${w}unpacking the guest's /out into $odir failed"
      return 125
    fi
  fi
  return "$rc"
}
