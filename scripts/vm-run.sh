#!/usr/bin/env bash
# vm-run.sh: boot Debian's kernel under qemu (TCG) with SoftRoCE (rdma_rxe on lo)
# from an initramfs, run one command in it, and stream its output back.
# See /work/shared/softroce-vm.md for the recipe this follows.
set -euo pipefail

readonly PROG=${0##*/}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly SCRIPT_DIR
CACHE=${RDMABENCH_CACHE:-/var/cache/rdmabench}
# Bump when the layout of the cached base archive changes.
readonly BASE_FORMAT=1
# rxe1's address on dummy0 in the guest, for rdma_cm (which rejects loopback).
readonly CM_ADDR=192.0.2.1

usage() {
  cat <<EOF
Usage: $PROG [--bin FILE]... [--file SRC[:DEST]]... [--env K=V]... [--outdir HOSTDIR]
             [--timeout SECS] [--mem MB] [--smp N] [--append ARGS] [--console]
             -- CMD [ARGS...]

Boots Debian's kernel (from \${RDMABENCH_CACHE:-/var/cache/rdmabench}, see install-deps.sh)
in qemu (-accel tcg -cpu max), loads rdma_rxe, runs 'rdma link add rxe0 type rxe
netdev lo' (and rxe1 on a dummy0 with $CM_ADDR/24 for rdma_cm, which cannot
use loopback addresses), then runs CMD in /work with 'ulimit -l unlimited'. CMD's stdout and stderr
stream to this script's stdout; the exit status is CMD's.

Options:
  --bin FILE          copy executable FILE into the guest's /bin with the libraries ldd lists
  --file SRC[:DEST]   copy a file or directory into the guest (default DEST /work/BASENAME;
                      a relative DEST is taken relative to /work; DEST/ puts SRC inside DEST)
  --env K=V           export K=V in the guest before CMD runs
  --outdir HOSTDIR    after CMD ends, copy the guest's /out into HOSTDIR (tar+gzip+base64
                      over the serial console)
  --timeout SECS      give up after SECS seconds, boot included (default 600)
  --mem MB            guest memory (default 2048)
  --smp N             guest CPUs (default 2)
  --append ARGS       extra kernel command line arguments
  --console           also copy the raw serial console to stderr (debugging)
  -h, --help          show this help

Always in the guest: busybox applets, rdma, ibv_devinfo, ibv_devices, ibv_*_pingpong,
rping, perftest's ib_{send,write,read,atomic}_{lat,bw}, libibverbs + librdmacm + the rxe
provider. /tmp is tmpfs, /out exists, PATH=/bin:/sbin:/usr/bin:/usr/sbin. On lo, use
GID index 1 (::ffff:127.0.0.1), e.g. 'ib_send_lat -d rxe0 -x 1'. Kernel console messages
('[ 12.345678] ...') seen while CMD runs go to stderr. /out travels at about 0.4 MB/s.

Exit status: CMD's; 124 on timeout; 125 if the guest failed (boot, panic, rxe setup,
lost output); 2 on bad usage or a missing prerequisite on the host.
EOF
}

err() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { err "error: $*"; exit 2; }

# --- arguments ------------------------------------------------------------------
bins=() files=() envs=() outdir='' timeout=600 mem=2048 smp=2 append_extra='' console=0
need_arg() { (($2 >= 2)) || die "$1 needs an argument (see -h)"; }
while (($#)); do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    --*=*) opt=${1%%=*} val=${1#*=}; shift; set -- "$opt" "$val" "$@"; continue ;;
    --bin) need_arg "$1" $#; bins+=("$2"); shift 2 ;;
    --file) need_arg "$1" $#; files+=("$2"); shift 2 ;;
    --env) need_arg "$1" $#; envs+=("$2"); shift 2 ;;
    --outdir) need_arg "$1" $#; outdir=$2; shift 2 ;;
    --timeout) need_arg "$1" $#; timeout=$2; shift 2 ;;
    --mem) need_arg "$1" $#; mem=$2; shift 2 ;;
    --smp) need_arg "$1" $#; smp=$2; shift 2 ;;
    --append) need_arg "$1" $#; append_extra=$2; shift 2 ;;
    --console) console=1; shift ;;
    -*) err "unknown option: $1"; usage >&2; exit 2 ;;
    *) break ;;
  esac
done
(($#)) || { err "no command given"; usage >&2; exit 2; }
[[ $timeout =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive integer"
[[ $mem =~ ^[1-9][0-9]*$ ]] || die "--mem must be a positive integer"
[[ $smp =~ ^[1-9][0-9]*$ ]] || die "--smp must be a positive integer"
for kv in "${envs[@]}"; do
  [[ $kv =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "--env wants K=V with K a shell name, got: $kv"
done

for t in qemu-system-x86_64 cpio gzip ldd busybox base64 tar timeout; do
  command -v "$t" >/dev/null || die "$t not found: run scripts/install-deps.sh as root"
done

# --- kernel ---------------------------------------------------------------------
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
while IFS='=' read -r k v; do
  case $k in KVER) KVER=$v ;; VMLINUZ) VMLINUZ=$v ;; VERSION) VERSION=$v ;; esac
done <"$kdir/.rdmabench-kernel"
vmlinuz=$kdir/$VMLINUZ
moddir=$kdir/lib/modules/$KVER
[[ -n $KVER && -r $vmlinuz && -d $moddir ]] || die "broken kernel cache in $kdir: rerun install-deps.sh"

# --- temp dir and cleanup -------------------------------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm-run.XXXXXX")
qpid=''
# shellcheck disable=SC2317 # invoked from the EXIT trap
cleanup() {
  if [[ -n $qpid ]] && kill -0 "$qpid" 2>/dev/null; then
    kill "$qpid" 2>/dev/null || true
    wait "$qpid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

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
add_libs() {
  local manifest=$1 f=$2 out line lib real g
  out=$(LC_ALL=C ldd "$f" 2>&1) || true
  case $out in
    *"not a dynamic executable"*|*"statically linked"*) return 0 ;;
  esac
  while IFS= read -r line; do
    line=${line#"${line%%[![:space:]]*}"}
    case $line in
      *"=> not found"*) die "$f: missing library: ${line%% *}" ;;
      *" => "/*) lib=${line#* => }; lib=${lib%% (*} ;;
      /*) lib=${line%% (*} ;;
      *) continue ;;
    esac
    printf '%s\t%s\n' "$(guest_path "$lib")" "$lib" >>"$manifest"
    case $lib in
      # also under the versioned file name, which tells the rdma-core release
      */libibverbs.so.*|*/librdmacm.so.*)
        real=$(readlink -f "$lib")
        g=$(guest_path "$lib")
        printf '%s\t%s\n' "${g%/*}/${real##*/}" "$real" >>"$manifest" ;;
    esac
  done <<<"$out"
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

# --- base archive (fixed parts, cached per kernel and host package state) ---------
base_manifest=$tmp/base.manifest
: >"$base_manifest"
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

# Kernel modules in dependency order (modprobe resolves it from the depmod'ed tree).
mods=()
{
  modprobe -d "$kdir" -S "$KVER" --show-depends crc32_generic 2>/dev/null \
    || err "note: no crc32_generic module in $KVER (fine if crc32 is built in)"
  for m in ib_uverbs rdma_ucm rdma_rxe dummy; do
    modprobe -d "$kdir" -S "$KVER" --show-depends "$m" \
      || die "kernel $KVER has no $m module (rdma_rxe needs CONFIG_RDMA_RXE=m)"
  done
} >"$tmp/moddeps"
declare -A modseen=()
while read -r verb path _; do
  [[ $verb == insmod && -z ${modseen[$path]:-} ]] || continue
  modseen[$path]=1
  mods+=("$path")
done <"$tmp/moddeps"

base_key=$( {
  printf 'format=%s kver=%s version=%s\n' "$BASE_FORMAT" "$KVER" "$VERSION"
  cat "$base_manifest"
  printf '%s\n' "${mods[@]}"
  cut -f2 "$base_manifest" | xargs -d '\n' stat -L -c '%n %s %Y' --
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
if [[ ! -s $base ]]; then
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
  # busybox applets, without shadowing real tools
  while IFS= read -r a; do
    [[ -e $root/$a || -L $root/$a ]] && continue
    mkdir -p "$root/$(dirname "$a")"
    ln -s /bin/busybox "$root/$a"
  done < <("$busybox_bin" --list-full | grep -v '^linuxrc$')
  mkdir -p "$root/usr/lib/modules/$KVER"
  : >"$root/etc/rdmabench-modules"
  for m in "${mods[@]}"; do
    name=${m##*/}
    case $name in
      *.ko) cp "$m" "$root/usr/lib/modules/$KVER/$name" ;;
      *.ko.xz) name=${name%.xz}; xz -dc "$m" >"$root/usr/lib/modules/$KVER/$name" ;;
      *.ko.zst) name=${name%.zst}; zstd -qdc "$m" >"$root/usr/lib/modules/$KVER/$name" ;;
      *.ko.gz) name=${name%.gz}; gzip -dc "$m" >"$root/usr/lib/modules/$KVER/$name" ;;
      *) die "unknown module format: $m" ;;
    esac
    printf '/lib/modules/%s/%s\n' "$KVER" "$name" >>"$root/etc/rdmabench-modules"
  done
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
fi

# --- per-run archive ----------------------------------------------------------------
quote() { # single-quote for sh
  local s=${1//\'/\'\\\'\'}
  printf "'%s'" "$s"
}

run=$tmp/run
mkdir -p "$run/etc/rdmabench" "$run/bin" "$run/work"
run_manifest=$tmp/run.manifest
: >"$run_manifest"
for b in "${bins[@]}"; do
  p=$b
  [[ $p == */* || -e $p ]] || p=$(command -v "$b" || true)
  [[ -n $p && -f $p ]] || die "--bin $b: no such file"
  add_bin "$run_manifest" "$p" "/bin/${p##*/}"
done
stage "$run_manifest" "$run" "$base_manifest" # libraries the base has are not sent again
for b in "${bins[@]}"; do chmod 755 "$run/bin/${b##*/}"; done
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

token=$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
{
  printf 'cd /work || exit 125\n'
  for kv in "${envs[@]}"; do
    printf 'export %s=%s\n' "${kv%%=*}" "$(quote "${kv#*=}")"
  done
  printf 'exec'
  for a in "$@"; do printf ' %s' "$(quote "$a")"; done
  printf '\n'
} >"$run/etc/rdmabench/cmd.sh"

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
sleep 1
poweroff -f
EOF
chmod 755 "$run/init" "$run/etc/rdmabench/cmd.sh"
chmod 755 "$run"
mkcpio "$run" "$tmp/run.cpio.gz" 1
cat "$base" "$tmp/run.cpio.gz" >"$tmp/initrd.gz"
rm -rf "$run"

# --- boot and parse the console -------------------------------------------------------
M="@@rdmabench-$token"
# The guest kernel would pick the emulated HPET as its clocksource, where every
# clock_gettime costs about 1 us; real hosts read the TSC through the vDSO (tens of
# ns). tsc=reliable gives the guest the TSC, so timestamps cost what they do on hardware.
append="console=ttyS0 panic=-1 quiet tsc=reliable${append_extra:+ $append_extra}"
fifo=$tmp/console.fifo
mkfifo "$fifo"
timeout -k 5 "$timeout" qemu-system-x86_64 \
  -accel tcg -cpu max -smp "$smp" -m "$mem" \
  -nographic -no-reboot -nic none \
  -kernel "$vmlinuz" -initrd "$tmp/initrd.gz" -append "$append" \
  </dev/null >"$fifo" 2>"$tmp/qemu.err" &
qpid=$!

kmsg_re='^\[ *[0-9]+\.[0-9]+\] '
state=boot rc='' setupfail='' outstate='' log=$tmp/console.log
exec 5>"$log" 6>"$tmp/out.b64"
while IFS= read -r line || [[ -n $line ]]; do
  line=${line//$'\r'/}
  printf '%s\n' "$line" >&5
  ((console)) && printf '%s\n' "$line" >&2
  case $state in
    boot)
      case $line in
        *"$M-begin") state=cmd ;;
        *"$M-setupfail: "*) setupfail=${line#*"$M-setupfail: "}; break ;;
      esac
      ;;
    cmd)
      if [[ $line =~ ^(.*)"$M-end:"([0-9]+)$ ]]; then
        [[ -n ${BASH_REMATCH[1]} ]] && printf '%s\n' "${BASH_REMATCH[1]}"
        rc=${BASH_REMATCH[2]}
        state=post
      elif [[ $line =~ $kmsg_re ]]; then
        printf '%s\n' "$line" >&2 # kernel message: keep it out of CMD's stdout
      else
        printf '%s\n' "$line"
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

# Stop the guest (it powers itself off, but there is no need to wait for it).
qrc=0
if [[ $state == finished || -n $setupfail ]]; then
  kill "$qpid" 2>/dev/null || true
  wait "$qpid" 2>/dev/null || true
else
  wait "$qpid" || qrc=$?
fi
qpid=''

show_tail() {
  err "---- last console lines ----"
  tail -n 60 "$log" >&2 || true
  if [[ -s $tmp/qemu.err ]]; then
    err "---- qemu stderr ----"
    cat "$tmp/qemu.err" >&2
  fi
  err "----------------------------"
}

if [[ -n $setupfail ]]; then
  show_tail
  err "error: rxe setup failed in the guest at step: $setupfail"
  exit 125
fi
if [[ -z $rc ]]; then
  show_tail
  if ((qrc == 124 || qrc == 137)); then
    err "error: timed out after ${timeout}s ($([[ $state == boot ]] && echo 'guest still booting' || echo 'command still running'))"
    exit 124
  fi
  if grep -q 'Kernel panic' "$log"; then
    err "error: guest kernel panicked (qemu exit $qrc)"
  elif [[ $state == boot ]]; then
    err "error: guest died before the command started (qemu exit $qrc)"
  else
    err "error: guest died while the command was running (qemu exit $qrc)"
  fi
  exit 125
fi
if [[ -n $outdir ]]; then
  if [[ $outstate != complete ]]; then
    show_tail
    if ((qrc == 124 || qrc == 137)); then
      err "error: timed out after ${timeout}s while copying /out back"
      exit 124
    fi
    err "error: could not copy /out back from the guest (${outstate:-no output received})"
    exit 125
  fi
  mkdir -p "$outdir"
  if ! base64 -d "$tmp/out.b64" | tar -xzf - -C "$outdir"; then
    err "error: unpacking the guest's /out into $outdir failed"
    exit 125
  fi
fi
exit "$rc"
