#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What seccomp and Landlock cost at start-up: `cordon run --base host -- true` built with
# and without the two layers, alternating in one run, as an unprivileged user.
#
#   bench/confine.sh [-n RUNS] [-w WARMUP] [--out FILE]
#
# Builds this checkout twice (build-bench-confine/ as shipped, and build-bench-noconfine/
# with meson -Dconfine=false, which compiles both layers out; there is no run-time switch),
# then times, alternating (bench/startup.c, uid 65534 when started as root):
#   confined      cordon run --base host -- true          (seccomp; Landlock scopes, ABI 6+)
#   no-nested     cordon run --no-nested --base host -- true
#                 (the larger filter, and Landlock's filesystem rules too)
#   unconfined    the -Dconfine=false build, same command
# and prints the medians and the difference of each confined median to the unconfined
# one, against the target (the two layers add at most 0.3 ms).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
runs=100
warmup=5
out=
target_ms=0.3

die() { echo "confine.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    -n|--runs) runs=${2:?}; shift 2 ;;
    -w|--warmup) warmup=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done
case $runs in ''|*[!0-9]*) die "-n wants a number" ;; esac
case $warmup in ''|*[!0-9]*) die "-w wants a number" ;; esac
if [ -n "$out" ]; then case $out in /*) ;; *) out=$PWD/$out ;; esac; fi

. "$here/common.sh" # build
build build-bench-confine
build build-bench-noconfine -Dconfine=false
confined=$top/build-bench-confine/cordon
unconfined=$top/build-bench-noconfine/cordon
"$unconfined" explain -- true | grep -q "compiled out" || die "$unconfined still confines (stale build dir?)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cordon-bench-confine.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
mkdir "$tmp/ws" "$tmp/home"
# Static binaries in a directory the unprivileged user can reach.
cp "$confined" "$tmp/cordon-confined"
cp "$unconfined" "$tmp/cordon-unconfined"
cc=${CC:-cc}
"$cc" -O2 -static -o "$tmp/startup" "$here/startup.c" 2>/dev/null || "$cc" -O2 -o "$tmp/startup" "$here/startup.c"

drop=()
if [ "$(id -u)" = 0 ]; then
  chown 65534:65534 "$tmp/ws" "$tmp/home"
  chmod 700 "$tmp/home"
  drop=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$tmp/home" USER=nobody LOGNAME=nobody)
  chown 65534 "$tmp"
  who="uid 65534 (dropped from root with setpriv)"
else
  who="uid $(id -u)"
fi
json=$tmp/result.json

abi=$("$tmp/cordon-confined" explain -- true | sed -n 's/^  landlock *//p' | head -n 1)
echo "cordon confinement benchmark: $(uname -sr), $(nproc) CPU, as $who, $runs runs each"
echo "  landlock: $abi"
echo
cd "$tmp/ws"
"${drop[@]}" "$tmp/startup" -n "$runs" -w "$warmup" --ref unconfined --out "$json" \
  --cmd confined "$tmp/cordon-confined" run --base host -- true \
  --cmd no-nested "$tmp/cordon-confined" run --no-nested --base host -- true \
  --cmd unconfined "$tmp/cordon-unconfined" run --base host -- true
[ -z "$out" ] || cp "$json" "$out"
echo
python3 - "$json" "$target_ms" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))["commands"]
target = float(sys.argv[2])
base = d["unconfined"]["median_ms"]
for name in ("confined", "no-nested"):
    diff = d[name]["median_ms"] - base
    print("%-10s - unconfined: %+.3f ms median (target <= %.1f ms: %s)"
          % (name, diff, target, "met" if diff <= target else "NOT met"))
EOF
