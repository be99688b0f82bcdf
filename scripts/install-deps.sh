#!/usr/bin/env bash
# install-deps.sh: install what the SoftRoCE test bed needs on a Debian 12 host
# (run as root), and fetch + unpack Debian's kernel image for the qemu guest.
# Idempotent: work already done is skipped, so a second run takes about a second.
set -euo pipefail

readonly PROG=${0##*/}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(dirname "$SCRIPT_DIR")
readonly SCRIPT_DIR REPO_DIR
CACHE=${RDMABENCH_CACHE:-/var/cache/rdmabench}

# Debian packages used by scripts/vm-run.sh, scripts/softroce.sh and cgo builds.
readonly PACKAGES=(
  qemu-system-x86 busybox-static cpio kmod
  libibverbs-dev librdmacm-dev ibverbs-providers rdma-core ibverbs-utils
  rdmacm-utils perftest iproute2
  xz-utils zstd gzip util-linux coreutils ca-certificates gcc libc6-dev make git jq
)

usage() {
  cat <<EOF
Usage: $PROG [--kernel-only | --no-kernel] [--update] [-h]

Installs (as root, on Debian 12) the packages the rdmabench SoftRoCE test bed needs:
  ${PACKAGES[*]}
and fetches the current Debian kernel image package (resolved with
'apt-cache depends linux-image-amd64'), unpacked with 'dpkg -x' into
  \${RDMABENCH_CACHE:-/var/cache/rdmabench}/kernel/<package>   (now: $CACHE)
with 'kernel/current' pointing at it. If no 'go' is found on PATH or in
/usr/local/go/bin, the Go toolchain named by go.mod is installed into /usr/local/go
(fetched from the Go module proxy with Debian's Go as the bootstrap).

'apt-get update' runs at most once, and only when a package is missing, the kernel
package cannot be resolved or downloaded, or --update is given.

Options:
  --kernel-only  only fetch the kernel (used by vm-run.sh; no packages, no Go)
  --no-kernel    skip the kernel fetch
  --update       run 'apt-get update' first (picks up a newer kernel ABI)
  -h, --help     show this help
EOF
}

log() { printf '%s: %s\n' "$PROG" "$*"; }
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 1; }

do_packages=1 do_kernel=1 do_go=1 force_update=0
while (($#)); do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --kernel-only) do_packages=0 do_go=0 ;;
    --no-kernel) do_kernel=0 ;;
    --update) force_update=1 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done

export DEBIAN_FRONTEND=noninteractive
updated=0
apt_update() {
  ((updated)) && return 0
  log "running apt-get update"
  apt-get update -qq || die "apt-get update failed"
  updated=1
}

need_root() {
  [[ $(id -u) -eq 0 ]] || die "$1 needs root (try: sudo $0)"
}

((force_update)) && { need_root "apt-get update"; apt_update; }

# --- packages -----------------------------------------------------------------
install_packages() {
  local missing=() p st
  local -A have=()
  while read -r p st; do
    [[ $st == installed ]] && have[$p]=1
  done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${PACKAGES[@]}" 2>/dev/null || true)
  for p in "${PACKAGES[@]}"; do
    [[ -n ${have[$p]:-} ]] || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    log "packages: all ${#PACKAGES[@]} already installed"
    return 0
  fi
  need_root "installing packages"
  apt_update
  log "installing: ${missing[*]}"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || die "apt-get install failed"
  log "packages: installed ${#missing[@]}"
}

# --- kernel -------------------------------------------------------------------
resolve_kernel_pkg() {
  apt-cache depends linux-image-amd64 2>/dev/null \
    | awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }'
}

pkg_version() {
  apt-cache show --no-all-versions "$1" 2>/dev/null | awk '/^Version:/ { print $2; exit }'
}

fetch_kernel() {
  local pkg ver dir stamp tmp kver
  pkg=$(resolve_kernel_pkg)
  if [[ -z $pkg ]]; then
    apt_update
    pkg=$(resolve_kernel_pkg)
    [[ -n $pkg ]] || die "cannot resolve linux-image-amd64 with apt-cache depends"
  fi
  ver=$(pkg_version "$pkg")
  dir=$CACHE/kernel/$pkg
  stamp=$dir/.rdmabench-kernel
  if [[ -f $stamp ]] && grep -qxF "VERSION=$ver" "$stamp"; then
    [[ $(readlink "$CACHE/kernel/current" 2>/dev/null) == "$pkg" ]] \
      || ln -sfn "$pkg" "$CACHE/kernel/current"
    log "kernel: $pkg $ver already in $dir"
    return 0
  fi
  mkdir -p "$CACHE/kernel" || die "cannot create $CACHE/kernel (run as root or set RDMABENCH_CACHE)"
  tmp=$(mktemp -d "$CACHE/kernel/.fetch.XXXXXX")
  # shellcheck disable=SC2064 # expand $tmp now
  trap "rm -rf '$tmp'" EXIT
  chmod 755 "$tmp"
  # apt drops privileges to _apt for downloads; let it write here.
  if [[ $(id -u) -eq 0 ]] && id _apt >/dev/null 2>&1; then chown _apt "$tmp"; fi
  log "kernel: downloading $pkg $ver"
  if ! (cd "$tmp" && apt-get download -qq "$pkg" >/dev/null); then
    # The archive drops superseded kernel ABIs: refresh the lists and re-resolve.
    ((updated)) && die "apt-get download $pkg failed"
    apt_update
    pkg=$(resolve_kernel_pkg)
    ver=$(pkg_version "$pkg")
    dir=$CACHE/kernel/$pkg
    stamp=$dir/.rdmabench-kernel
    log "kernel: downloading $pkg $ver"
    (cd "$tmp" && apt-get download -qq "$pkg" >/dev/null) || die "apt-get download $pkg failed"
  fi
  log "kernel: unpacking with dpkg -x"
  dpkg -x "$tmp"/*.deb "$tmp/root"
  rm -f "$tmp"/*.deb
  kver=$(find "$tmp/root/lib/modules" "$tmp/root/usr/lib/modules" -mindepth 1 -maxdepth 1 \
           -type d -printf '%f\n' 2>/dev/null | head -n1 || true)
  [[ -n $kver && -f $tmp/root/boot/vmlinuz-$kver ]] || die "unexpected layout in $pkg"
  if [[ ! -d $tmp/root/lib/modules && -d $tmp/root/usr/lib/modules ]]; then
    mkdir -p "$tmp/root/lib" && ln -s ../usr/lib/modules "$tmp/root/lib/modules"
  fi
  depmod -b "$tmp/root" "$kver" || die "depmod failed for $kver"
  printf 'PACKAGE=%s\nVERSION=%s\nKVER=%s\nVMLINUZ=boot/vmlinuz-%s\n' \
    "$pkg" "$ver" "$kver" "$kver" >"$tmp/root/.rdmabench-kernel"
  rm -rf "$dir"
  mv "$tmp/root" "$dir"
  ln -sfn "$pkg" "$CACHE/kernel/current"
  # Drop kernels superseded by this one.
  find "$CACHE/kernel" -mindepth 1 -maxdepth 1 -type d -name 'linux-image-*' \
    ! -name "$pkg" -exec rm -rf {} +
  rm -rf "$tmp"
  trap - EXIT
  log "kernel: $pkg $ver ($kver) unpacked into $dir"
}

# --- go -----------------------------------------------------------------------
# Debian 12's golang-go is Go 1.19: it cannot parse go.mod's 'go 1.26.0' line and
# has no toolchain switching. Use it (unpacked in a temp dir) only to download the
# golang.org/toolchain module named by go.mod from the module proxy.
go_toolchain_version() {
  local v
  v=$(awk '$1 == "toolchain" { sub(/^go/, "", $2); print $2; exit }' "$REPO_DIR/go.mod" 2>/dev/null)
  [[ -n $v ]] || v=$(awk '$1 == "go" { print $2; exit }' "$REPO_DIR/go.mod" 2>/dev/null)
  [[ -n $v ]] || die "cannot read the Go version from $REPO_DIR/go.mod"
  [[ $v == *.*.* ]] || v=$v.0
  printf 'go%s\n' "$v"
}

install_go() {
  local gobin
  if gobin=$(command -v go) || { [[ -x /usr/local/go/bin/go ]] && gobin=/usr/local/go/bin/go; }; then
    log "go: found $gobin ($("$gobin" env GOVERSION 2>/dev/null || echo unknown version))"
    return 0
  fi
  need_root "installing Go"
  local want boot bootpkg tmp dir
  want=$(go_toolchain_version)
  bootpkg=$(apt-cache depends golang-go 2>/dev/null \
              | awk '$1 == "Depends:" && $2 ~ /^golang-1\.[0-9]+-go$/ { print $2; exit }')
  if [[ -z $bootpkg ]]; then
    apt_update
    bootpkg=$(apt-cache depends golang-go 2>/dev/null \
                | awk '$1 == "Depends:" && $2 ~ /^golang-1\.[0-9]+-go$/ { print $2; exit }')
    [[ -n $bootpkg ]] || die "cannot resolve Debian's golang-go"
  fi
  tmp=$(mktemp -d)
  # shellcheck disable=SC2064 # expand $tmp now
  trap "chmod -R u+w '$tmp' 2>/dev/null; rm -rf '$tmp'" EXIT
  chmod 755 "$tmp"
  if id _apt >/dev/null 2>&1; then chown _apt "$tmp"; fi
  log "go: bootstrapping with Debian's $bootpkg to fetch $want from the module proxy"
  (cd "$tmp" && apt-get download -qq "$bootpkg" >/dev/null) || die "apt-get download $bootpkg failed"
  dpkg -x "$tmp"/*.deb "$tmp/boot"
  boot=$(find "$tmp/boot/usr/lib" -path '*/bin/go' -type f 2>/dev/null | head -n1 || true)
  [[ -n $boot ]] || die "no go binary in $bootpkg"
  dir=$(cd "$tmp" && env -u GOTOOLCHAIN -u GOROOT -u GOFLAGS GO111MODULE=on \
          GOPATH="$tmp/gopath" GOMODCACHE="$tmp/gopath/pkg/mod" GOCACHE="$tmp/gocache" \
          "$boot" mod download -json "golang.org/toolchain@v0.0.1-$want.linux-amd64" \
          | awk -F'"' '$2 == "Dir" { print $4 }') || true
  [[ -n $dir && -f $dir/bin/go ]] || die "downloading golang.org/toolchain $want failed"
  rm -rf /usr/local/go.new
  cp -a "$dir" /usr/local/go.new
  chmod -R u+w /usr/local/go.new
  # Module zips carry no exec bits: restore them like cmd/go does.
  chmod 755 /usr/local/go.new/bin/* /usr/local/go.new/pkg/tool/*/*
  rm -rf /usr/local/go
  mv /usr/local/go.new /usr/local/go
  local b
  for b in go gofmt; do
    [[ -e /usr/local/bin/$b ]] || ln -s "/usr/local/go/bin/$b" "/usr/local/bin/$b"
  done
  chmod -R u+w "$tmp"; rm -rf "$tmp"; trap - EXIT
  log "go: installed $(/usr/local/go/bin/go env GOVERSION) in /usr/local/go (linked from /usr/local/bin)"
}

((do_packages)) && install_packages
((do_kernel)) && fetch_kernel
((do_go)) && install_go
log "done"
