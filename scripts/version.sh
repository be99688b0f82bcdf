#!/usr/bin/env bash
# version.sh: this tree's version, commit and date for 'make package': the package
# version, the binary's (make build RDMABENCH_VERSION=..., internal/version) and the
# time stamped on the packages' files.
#   version  from 'git describe --tags --match v[0-9]*': v1.2.3 -> 1.2.3; three commits
#            after it -> 1.2.3+3.gabc1234 (sorts after 1.2.3 for dpkg and rpm);
#            no tag -> 0.0.0+gabc1234; no git -> 0.0.0+unknown
#   commit   the full hash, with "-dirty" when the tree has uncommitted changes
#   date     $SOURCE_DATE_EPOCH if set, else the commit's time, RFC 3339 UTC (the same
#            commit builds the same binary and packages)
#   epoch    the same date in seconds (SOURCE_DATE_EPOCH for the build)
# Usage: version.sh [--version | --commit | --date | --epoch]   (default: --version)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

version='' commit='' date=''
if git rev-parse --git-dir >/dev/null 2>&1 && commit=$(git rev-parse HEAD 2>/dev/null); then
  short=$(git rev-parse --short=7 HEAD)
  if desc=$(git describe --tags --match 'v[0-9]*' --long 2>/dev/null); then
    # v1.2.3-0-gabc1234 or v1.2.3-3-gabc1234
    tag=${desc%-*-g*} n=${desc%-g*}; n=${n##*-}
    version=${tag#v}
    ((n == 0)) || version+="+$n.g$short"
  else
    version=0.0.0+g$short
  fi
  git diff --quiet HEAD -- 2>/dev/null || commit+=-dirty
  epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct HEAD)}
else
  version=0.0.0+unknown
  epoch=${SOURCE_DATE_EPOCH:-}
fi
[[ -n $epoch ]] && date=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)

case ${1:---version} in
  --version) printf '%s\n' "$version" ;;
  --commit) printf '%s\n' "$commit" ;;
  --date) printf '%s\n' "$date" ;;
  --epoch) printf '%s\n' "$epoch" ;;
  -h|--help) sed -n '2,12s/^# \{0,1\}//p' "$0" ;;
  *) echo "version.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
esac
