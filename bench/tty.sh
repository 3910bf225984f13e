#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Output through `cordon run --tty` against the same run without it, same run (issue 9:
# at least 0.8x): `head -c SIZE /dev/zero | base64` under a terminal (a pty read as fast
# as a terminal emulator would), and for reference to /dev/null (where --no-tty writes
# straight to the file and --tty goes through the sandbox's pty and cordon's relay).
#
#   bench/tty.sh [--build DIR] [--size BYTES] [--rounds N]     (default 256M, 5 rounds)
#
# Runs as an unprivileged user (uid 65534 when started as root).  Timing never fails.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
build=$top/build size=$((256 * 1024 * 1024)) rounds=5
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=${2:?}; shift 2 ;;
    --size) size=${2:?}; shift 2 ;;
    --rounds) rounds=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "tty.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
case $build in /*) ;; *) build=$PWD/$build ;; esac
[ -x "$build/cordon" ] || { echo "tty.sh: $build/cordon not built" >&2; exit 2; }
drop=()
who="uid $(id -u)"
if [ "$(id -u)" = 0 ]; then
  drop=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/ USER=nobody LOGNAME=nobody)
  who="uid 65534 (dropped from root with setpriv)"
fi
echo "cordon --tty benchmark: $(uname -sr), $(nproc) CPU, as $who, load $(cut -d' ' -f1-3 /proc/loadavg)"
cd /
"${drop[@]}" python3 "$here/ttybench.py" "$build/cordon" "$size" "$rounds"
