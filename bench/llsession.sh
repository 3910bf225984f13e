#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What a command costs in a session under --isolation landlock, where each command is a
# run of its own started by the session's holder (src/session/llsession.c): `cordon
# session exec -- true` timed in one run, alternating
#   bare     /bin/true alone, started the same way (a subshell in the workspace)
#   run-ll   cordon run --isolation landlock -- true (the reference: a run per command)
#   sess-ll  cordon session exec in a session started with --isolation landlock
#   sess-ns  cordon session exec in a session with namespaces
# from a workspace on a tmpfs (mounted for the run: root only) and on the disk (--disk
# DIR, default /var/tmp).  Each figure includes the command line's own start (cordon's
# exec and its connection).  Not a target: the figures go to doc/guide-sessions.md.
# Timing never fails the run; a command that fails does.
#
#   bench/llsession.sh [-n REPEATS] [--build DIR] [--disk DIR]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
repeats=40
build=$top/build
disk=/var/tmp
while [ $# -gt 0 ]; do
  case $1 in
    -n) repeats=${2:?}; shift 2 ;;
    --build) build=${2:?}; shift 2 ;;
    --disk) disk=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "llsession.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
cordon=$build/cordon
[ -x "$cordon" ] || { echo "llsession.sh: $cordon not built (meson setup build && ninja -C build)" >&2; exit 2; }
"$cordon" run --isolation landlock -- true ||
  { echo "llsession.sh: --isolation landlock does not run here" >&2; exit 2; }

us() { echo $(($(date +%s%N) / 1000)); }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "Landlock session benchmark: $(uname -sr), $(nproc) CPU, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "one \`true\` per command, medians of $repeats, microseconds"
printf '%-6s %9s %9s %9s %9s  %8s %8s %9s\n' fs bare run-ll sess-ll sess-ns 'run÷sess' 'll÷ns' 'sess÷bare'
mnt=
names=()
cleanup() {
  local n
  for n in "${names[@]}"; do "$cordon" session stop "$n" >/dev/null 2>&1 || true; done
  [ -z "${ws:-}" ] || rm -rf "$ws"
  [ -z "$mnt" ] || { umount "$mnt" && rmdir "$mnt"; }
}
trap cleanup EXIT
for fs in tmpfs disk; do
  base=$disk
  if [ "$fs" = tmpfs ]; then
    if [ "$(id -u)" != 0 ]; then
      echo "tmpfs  (skipped: mounting one needs root)"
      continue
    fi
    mnt=$(mktemp -d "$disk/cordon-bench-lls-tmpfs.XXXXXX")
    mount -t tmpfs -o size=64m tmpfs "$mnt"
    chmod 755 "$mnt"
    base=$mnt
  fi
  ws=$(mktemp -d "$base/cordon-bench-lls.XXXXXX")
  ll=bench-ll-$$-$fs ns=bench-ns-$$-$fs
  names+=("$ll" "$ns")
  (cd "$ws" && "$cordon" session start "$ll" --isolation landlock 2>/dev/null)
  (cd "$ws" && "$cordon" session start "$ns")
  declare -A t=([bare]="" [run]="" [ll]="" [ns]="")
  for ((r = 0; r < repeats; r++)); do
    for v in bare run ll ns; do
      s=$(us)
      case $v in
        bare) (cd "$ws" && /bin/true) ;;
        run) (cd "$ws" && "$cordon" run --isolation landlock -- true) ;;
        ll) (cd "$ws" && "$cordon" session exec "$ll" -- true) ;;
        ns) (cd "$ws" && "$cordon" session exec "$ns" -- true) ;;
      esac
      e=$(us)
      t[$v]+="$((e - s)) "
    done
  done
  "$cordon" session stop "$ll"
  "$cordon" session stop "$ns"
  z=$(tr ' ' '\n' <<<"${t[bare]}" | grep . | median)
  a=$(tr ' ' '\n' <<<"${t[run]}" | grep . | median)
  b=$(tr ' ' '\n' <<<"${t[ll]}" | grep . | median)
  c=$(tr ' ' '\n' <<<"${t[ns]}" | grep . | median)
  printf '%-6s %9s %9s %9s %9s  %8s %8s %9s\n' "$fs" "$z" "$a" "$b" "$c" \
    "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')" \
    "$(awk -v a="$b" -v b="$c" 'BEGIN { printf "%.2f", a / b }')" \
    "$(awk -v a="$b" -v b="$z" 'BEGIN { printf "%.1f", a / b }')"
  rm -rf "$ws"
  ws=
  if [ -n "$mnt" ]; then
    umount "$mnt" && rmdir "$mnt"
    mnt=
  fi
done
