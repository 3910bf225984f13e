#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Python binding against the C library, same run (bench/python_bench.py): the time the
# binding adds per session command (cordon.Session.run against bench/pysession.c doing the
# same through libcordon; target: at most +0.2 ms), and output throughput through
# cordon.run, a session and cordon.aio against a plain pipe (target: at least 0.9 x).
#
#   bench/python.sh [--build DIR] [--blocks N] [--per-block N] [--size BYTES] [--rounds N] [--fifo]
#
#   --rounds  output rounds of each kind (default 5), alternating; a plain pipe whose
#             command is in a session of its own (setsid) is measured beside the plain one
#   --fifo    run the measured programs under SCHED_FIFO (chrt -f 10; root only): on a loaded
#             machine the ordinary scheduler's share for the command, which the sandbox
#             starts in a session of its own (setsid: a scheduling group of its own where
#             autogroups are on), swings the ratios; FIFO measures the pipes themselves
#
# Debian's /usr/bin/python3, the binding of this checkout on DIR/libcordon.so (default:
# build/), as an unprivileged user (uid 65534 when started as root). Timing never fails
# the run.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
build=$top/build
blocks=10 per_block=50 size=$((512 << 20)) rounds=5
sched=()
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=${2:?}; shift 2 ;;
    --blocks) blocks=${2:?}; shift 2 ;;
    --per-block) per_block=${2:?}; shift 2 ;;
    --size) size=${2:?}; shift 2 ;;
    --rounds) rounds=${2:?}; shift 2 ;;
    --fifo) sched=(chrt -f 10); shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "python.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
case $build in /*) ;; *) build=$PWD/$build ;; esac
if [ ${#sched[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || { echo "python.sh: --fifo needs root (SCHED_FIFO)" >&2; exit 2; }
  command -v chrt >/dev/null || { echo "python.sh: --fifo needs chrt (util-linux)" >&2; exit 2; }
fi
[ -e "$build/libcordon.so" ] || { echo "python.sh: $build/libcordon.so not built (meson setup build && ninja -C build)" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cordon-bench-python.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
${CC:-cc} -O2 -I"$top/include" -o "$tmp/pysession" "$here/pysession.c" -L"$build" -lcordon -Wl,-rpath,"$build"
cp -r "$top/python/cordon" "$here/python_bench.py" "$tmp/"
chmod -R a+rX "$tmp"

drop=()
who="uid $(id -u)"
if [ "$(id -u)" = 0 ]; then
  drop=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$tmp" USER=nobody LOGNAME=nobody)
  who="uid 65534 (dropped from root with setpriv)"
fi
echo "cordon Python binding benchmark: $(uname -sr), $(nproc) CPU, as $who, $(/usr/bin/python3 --version), load $(cut -d' ' -f1-3 /proc/loadavg), ${sched[*]:-the ordinary scheduler}"
echo
cd "$tmp"
"${sched[@]}" "${drop[@]}" env PYTHONPATH="$tmp" CORDON_LIBRARY="$build/libcordon.so" /usr/bin/python3 "$tmp/python_bench.py" \
  "$tmp/pysession" "$blocks" "$((per_block + 2))" "$size" "$rounds"
