#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# libcordon against posix_spawn, same run (bench/lib.c): cordon_run_output's throughput on
# `head -c 1G /dev/zero` against a plain pipe from posix_spawn (target: at least 0.9x), and
# spawn-to-first-byte latency of cordon_spawn against posix_spawn.
#
#   bench/lib.sh [--build DIR] [-- LIB OPTIONS...]     (--size BYTES --rounds N --latency-rounds N)
#
# Links bench/lib.c against DIR/libcordon.so (default: build/ of this checkout) through the
# public header only, and runs it as an unprivileged user (uid 65534 when started as root).
# Timing never fails the run.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
build=$top/build
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=${2:?}; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "lib.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
case $build in /*) ;; *) build=$PWD/$build ;; esac
[ -e "$build/libcordon.so" ] || { echo "lib.sh: $build/libcordon.so not built (meson setup build && ninja -C build)" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cordon-bench-lib.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
${CC:-cc} -O2 -I"$top/include" -o "$tmp/lib" "$here/lib.c" -L"$build" -lcordon -Wl,-rpath,"$build"

drop=()
who="uid $(id -u)"
if [ "$(id -u)" = 0 ]; then
  drop=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$tmp" USER=nobody LOGNAME=nobody)
  who="uid 65534 (dropped from root with setpriv)"
fi
echo "libcordon benchmark: $(uname -sr), $(nproc) CPU, as $who, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
cd "$tmp"
"${drop[@]}" "$tmp/lib" "$@"
