#!/usr/bin/env bash
# package-test.sh: test build/pkg's packages (make package) as a user gets them.
# The .deb is installed on this machine (root, Debian: dpkg -i, then apt-get install -f
# if dependencies are missing) and checked: rdmabench --version names the package's
# version and commit; rdmabench devices, on a host without RDMA, explains it and exits 3
# without pointing at the repository's scripts/; man -w finds rdmabench-run; the bash
# completion completes subcommands; the perftest links sit in /usr/lib/rdmabench/perftest,
# not on PATH. The .rpm is checked with rpm -qip/-qlp/--requires, the tarball with tar.
# The package is removed (dpkg --purge) at the end, unless an rdmabench package was
# installed before the test: then the one from build/pkg stays installed (say so).
# Run by 'make package-test' (part of make test). Exit 0 ok (or skipped: not root, no
# dpkg), 1 a check failed, 2 no packages in build/pkg.
# shellcheck disable=SC2015 # "A && ok || bad": ok, bad and log always succeed
set -euo pipefail

readonly PROG=${0##*/}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PKGDIR=${PKGDIR:-build/pkg}

fails=0
log() { printf '%s: %s\n' "$PROG" "$*"; }
ok() { printf '%s: ok: %s\n' "$PROG" "$*"; }
bad() { printf '%s: FAIL: %s\n' "$PROG" "$*" >&2; fails=$((fails + 1)); }
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 2; }

# Like make deps: a user without root, or a system without dpkg, skips it (CI runs as root).
if [[ $(id -u) -ne 0 ]]; then log "skip: installing the .deb needs root (run make package-test as root)"; exit 0; fi
if ! command -v dpkg >/dev/null; then log "skip: no dpkg: the .deb test needs Debian or Ubuntu"; exit 0; fi
shopt -s nullglob
debs=("$PKGDIR"/*.deb) rpms=("$PKGDIR"/*.rpm) tgzs=("$PKGDIR"/*.tar.gz)
((${#debs[@]} == 1 && ${#rpms[@]} == 1 && ${#tgzs[@]} == 1)) \
  || die "want one .deb, one .rpm and one .tar.gz in $PKGDIR (make package), got: ${debs[*]} ${rpms[*]} ${tgzs[*]}"
deb=${debs[0]} rpm=${rpms[0]} tgz=${tgzs[0]}
version=$(dpkg-deb -f "$deb" Version)
[[ $version == "$(scripts/version.sh)" ]] || bad "$deb has version $version, scripts/version.sh says $(scripts/version.sh)"
depends=$(dpkg-deb -f "$deb" Depends)
[[ $depends == *"libibverbs1 (>= "* && $depends == *"librdmacm1 (>= "* && $depends == *"libc6 (>= "* ]] \
  && ok "Depends: $depends" || bad "$deb Depends: '$depends', want libc6, libibverbs1 and librdmacm1 with versions"
commit=$(scripts/version.sh --commit)
commit=${commit%-dirty}

# --- the .deb, installed -----------------------------------------------------------
before=$(dpkg-query -W -f='${db:Status-Status}' rdmabench 2>/dev/null || true)
cleanup() {
  if [[ $before != installed ]]; then
    dpkg --purge rdmabench >/dev/null 2>&1 && log "removed the rdmabench package again" \
      || log "warning: dpkg --purge rdmabench failed"
  fi
  rm -rf "${tmp:-}"
}
trap cleanup EXIT
tmp=$(mktemp -d)
[[ $before == installed ]] && log "note: an rdmabench package was installed before; the one from $deb stays installed"
export DEBIAN_FRONTEND=noninteractive
if ! dpkg -i "$deb" >"$tmp/dpkg.log" 2>&1; then
  log "dpkg -i left dependencies missing: apt-get install -f"
  apt-get install -f -y -qq >>"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log" >&2; die "installing $deb failed"; }
fi
[[ $(dpkg-query -W -f='${db:Status-Status} ${Version}' rdmabench) == "installed $version" ]] \
  && ok "dpkg -i $deb: rdmabench $version installed" || bad "rdmabench $version is not installed after dpkg -i"

bin=$(command -v rdmabench || true)
[[ $bin == /usr/bin/rdmabench ]] || bad "rdmabench on PATH is '$bin', want /usr/bin/rdmabench"
out=$(/usr/bin/rdmabench --version 2>&1) || bad "rdmabench --version failed: $out"
if [[ $out == *"$version"* && $out == *"${commit:0:12}"* ]]; then
  ok "rdmabench --version: $out"
else
  bad "rdmabench --version says '$out'; want version $version and commit ${commit:0:12}"
fi

if [[ -e /dev/infiniband/uverbs0 ]]; then
  log "skip: this host has RDMA (/dev/infiniband/uverbs0): the no-RDMA message is not checked"
else
  rc=0
  out=$(/usr/bin/rdmabench devices 2>&1) || rc=$?
  if ((rc != 3)); then
    bad "rdmabench devices on a host without RDMA exited $rc, want 3: $out"
  elif [[ $out == *scripts/* ]]; then
    bad "rdmabench devices points at the repository's scripts/, which an installed user lacks: $out"
  elif [[ $out != *rdma_rxe* ]]; then
    bad "rdmabench devices does not say how to get a device (rdma_rxe): $out"
  else
    ok "rdmabench devices: exit 3, ${out:0:100}..."
  fi
fi

# The hardware check: on PATH, it finds the rdmabench beside it; without RDMA it
# exits 3 and still writes its report.
if [[ -e /dev/infiniband/uverbs0 ]]; then
  log "skip: this host has RDMA: rdmabench-hw-check's no-device exit is not checked"
elif [[ $(command -v rdmabench-hw-check) == /usr/bin/rdmabench-hw-check ]]; then
  rc=0
  out=$(cd "$tmp" && rdmabench-hw-check 2>&1) || rc=$?
  if ((rc == 3)) && [[ $out == *"nothing checked: no RDMA device"* ]] &&
    ls "$tmp"/rdmabench-hw-check-*.tar.gz >/dev/null 2>&1; then
    ok "rdmabench-hw-check: exit 3 without RDMA, report $(basename "$(ls "$tmp"/rdmabench-hw-check-*.tar.gz | head -n 1)")"
  else
    bad "rdmabench-hw-check on a host without RDMA exited $rc (want 3 and a report): ${out:0:300}"
  fi
else
  bad "no /usr/bin/rdmabench-hw-check on PATH"
fi

if command -v man >/dev/null; then
  page=$(man -w rdmabench-run 2>&1) || true
  [[ $page == /usr/share/man/man1/rdmabench-run.1* ]] && ok "man -w rdmabench-run: $page" \
    || bad "man -w rdmabench-run: '$page'"
  man rdmabench-run 2>/dev/null | grep -q 'rdmabench run' && ok "man rdmabench-run renders" \
    || bad "man rdmabench-run shows no 'rdmabench run'"
else
  bad "no man command (install man-db: scripts/install-deps.sh does)"
fi

# The installed bash completion, run as bash would for 'rdmabench ru<TAB>' and
# 'rdmabench run --op<TAB>' (cobra's script uses the bash-completion package's helpers).
comp=/usr/share/bash-completion/completions/rdmabench
if [[ ! -f /usr/share/bash-completion/bash_completion ]]; then
  bad "no /usr/share/bash-completion/bash_completion (install bash-completion: scripts/install-deps.sh does)"
elif [[ -f $comp ]]; then
  words=$(bash -c '. /usr/share/bash-completion/bash_completion; . '"$comp"' || exit 1
    compopt() { :; } # a builtin that works only inside a real completion
    complete() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
      COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
      __start_rdmabench rdmabench "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
      printf "%s " "${COMPREPLY[@]}"; echo; }
    complete rdmabench ru; complete rdmabench run --op' 2>&1) || true
  [[ $(sed -n 1p <<<"$words") == *run* && $(sed -n 2p <<<"$words") == *--op* ]] \
    && ok "bash completion: 'rdmabench ru' -> $(sed -n 1p <<<"$words"); 'run --op' -> $(sed -n 2p <<<"$words")" \
    || bad "bash completion from $comp completes: $words"
else
  bad "no $comp"
fi
for f in /usr/share/zsh/vendor-completions/_rdmabench /usr/share/fish/vendor_completions.d/rdmabench.fish \
         /usr/share/doc/rdmabench/copyright; do
  [[ -s $f ]] || bad "no $f"
done

# The drop-in links: in their own directory, never on PATH in place of perftest.
links=0
for n in ib_send_lat ib_write_lat ib_read_lat ib_atomic_lat ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw; do
  l=/usr/lib/rdmabench/perftest/$n
  [[ -L $l && $(readlink -f "$l") == /usr/bin/rdmabench ]] && links=$((links + 1)) || bad "$l is not a link to /usr/bin/rdmabench"
  p=$(command -v "$n" || true)
  [[ -z $p || $(readlink -f "$p") != /usr/bin/rdmabench ]] || bad "$n on PATH ($p) is rdmabench: it shadows perftest"
done
((links == 8)) && ok "8 perftest links in /usr/lib/rdmabench/perftest, none on PATH"
# Called through a link, rdmabench is the perftest drop-in (cmd/rdmabench/dropin.go).
out=$(/usr/lib/rdmabench/perftest/ib_write_bw --help 2>&1) || true
[[ $out == *"perftest drop-in"* && $out == *"ib_write_bw <host>"* ]] \
  && ok "ib_write_bw link: the perftest drop-in's usage" || bad "/usr/lib/rdmabench/perftest/ib_write_bw --help: ${out:0:200}"

# --- the .rpm: its own metadata ---------------------------------------------------------
if command -v rpm >/dev/null; then
  info=$(rpm -qip "$rpm" 2>/dev/null) || bad "rpm -qip $rpm failed"
  reqs=$(rpm -qp --requires "$rpm" 2>/dev/null | tr '\n' ' ')
  files=$(rpm -qlp "$rpm" 2>/dev/null)
  [[ $(awk -F': ' '$1 ~ /^Version/ { print $2 }' <<<"$info") == "$version" ]] || bad "rpm version is not $version: $info"
  [[ $reqs == *libibverbs* && $reqs == *librdmacm* ]] || bad "rpm requires: $reqs"
  for f in /usr/bin/rdmabench /usr/bin/rdmabench-hw-check /usr/share/man/man1/rdmabench-run.1.gz /usr/share/bash-completion/completions/rdmabench \
           /usr/share/zsh/site-functions/_rdmabench /usr/lib/rdmabench/perftest/ib_send_lat /usr/share/doc/rdmabench/LICENSE; do
    grep -qxF "$f" <<<"$files" || bad "$rpm lacks $f"
  done
  ok "rpm -qip: $(awk -F': ' '$1 ~ /^(Name|Version|Release|Architecture)/ { printf "%s ", $2 }' <<<"$info")requires: $reqs($(wc -l <<<"$files") files)"
else
  bad "no rpm command to read $rpm (install rpm: scripts/install-deps.sh does)"
fi

# --- the tarball: laid out like /usr under one directory --------------------------------
top=$(basename "$tgz" .tar.gz)
list=$(tar -tzf "$tgz")
for f in bin/rdmabench bin/rdmabench-hw-check share/man/man1/rdmabench-run.1.gz share/bash-completion/completions/rdmabench \
         lib/rdmabench/perftest/ib_write_bw share/doc/rdmabench/LICENSE; do
  grep -qxF "$top/$f" <<<"$list" || bad "$tgz lacks $top/$f"
done
tar -C "$tmp" -xzf "$tgz"
[[ $(readlink -f "$tmp/$top/lib/rdmabench/perftest/ib_send_lat") == "$tmp/$top/bin/rdmabench" ]] \
  && ok "tarball: $(wc -l <<<"$list") entries under $top/, links relative" || bad "tarball's perftest link does not reach bin/rdmabench"

if ((fails)); then
  log "$fails check(s) failed"
  exit 1
fi
log "all checks passed"
