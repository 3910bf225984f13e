#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sessions (issue 14): per-command latency of `cordon session exec NAME -- true` and of
# cordon_session_spawn + wait, against `cordon run -- true`, bubblewrap and a bare
# fork+exec of `true`, alternating in one run (bench/session.c says how each is timed).
#
#   bench/session.sh [--build DIR] [-n RUNS] [-w WARMUP]
#
# Targets: the library form at most 0.25 x bubblewrap and within 2 x the bare fork+exec;
# the CLI form at most 0.5 x bubblewrap. Runs as an unprivileged user (uid 65534 when
# started as root). Timing never fails the run.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
build=$top/build
runs=200
warmup=10
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=${2:?}; shift 2 ;;
    -n) runs=${2:?}; shift 2 ;;
    -w) warmup=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "session.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
case $build in /*) ;; *) build=$PWD/$build ;; esac
[ -e "$build/libcordon.so" ] && [ -x "$build/cordon" ] ||
  { echo "session.sh: $build is not built (meson setup build && ninja -C build)" >&2; exit 2; }
bwrap=$(command -v bwrap || true)
[ -n "$bwrap" ] || echo "session.sh: bwrap not found (apt-get install bubblewrap): measuring without it" >&2

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cordon-bench-session.XXXXXX")
chmod 755 "$tmp"
mkdir "$tmp/ws" "$tmp/home" "$tmp/run"
cp "$build/cordon" "$tmp/cordon"
${CC:-cc} -O2 -I"$top/include" -o "$tmp/session" "$here/session.c" -L"$build" -lcordon -Wl,-rpath,"$build"

drop=()
who="uid $(id -u)"
if [ "$(id -u)" = 0 ]; then
  chown 65534:65534 "$tmp/ws" "$tmp/home" "$tmp/run"
  chmod 700 "$tmp/home" "$tmp/run"
  drop=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  who="uid 65534 (dropped from root with setpriv)"
fi
# the session outlives the shell below: cleanup stops it (and an idle timeout ends one a
# killed run left); its sessions live in a directory of the run's own
as=("${drop[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$tmp/home" USER=nobody LOGNAME=nobody
    XDG_RUNTIME_DIR="$tmp/run")
name=bench$$
cleanup() { "${as[@]}" "$tmp/cordon" session stop "$name" >/dev/null 2>&1 || true; rm -rf "$tmp"; }
trap cleanup EXIT

echo "cordon session benchmark: $(uname -sr), $(nproc) CPU, as $who, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  bwrap: ${bwrap:-not installed}${bwrap:+ ($("$bwrap" --version 2>/dev/null || echo '?'))}"
echo
cd "$tmp/ws"
"${as[@]}" bash -c '
  "$1" session start "$2" --idle-timeout 10m --base host || exit 125
  shift 2
  "$@"
  rc=$?
  exit $rc' sh "$tmp/cordon" "$name" "$tmp/session" -n "$runs" -w "$warmup" --name "$name" --cordon "$tmp/cordon" \
  ${bwrap:+--bwrap "$bwrap"}
