#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What --isolation landlock's creation control costs: work that creates and removes many
# files at the top of a workspace that is a git repository (where the supervisor decides by
# the plan's rules itself, walking up to the nearest rule: src/supervise/creation.c,
# ll_decide), timed in one run, alternating
#   bare      the command alone
#   ns        cordon run (namespaces, the creation control in PID 1)
#   landlock  cordon run --isolation landlock (the stand-in supervises)
# on a tmpfs (mounted for the run: root only; /dev/shm cannot be a workspace in this mode,
# /dev is cordon's own) and on the disk (--disk DIR, default /var/tmp).  Not a target
# (issue 22): the figures go to doc/security.md.  Timing never fails the run; a command
# that fails does.
#
#   bench/landlock.sh [-n REPEATS] [--files N] [--build DIR] [--disk DIR]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
repeats=5
files=5000
build=$top/build
disk=/var/tmp
while [ $# -gt 0 ]; do
  case $1 in
    -n) repeats=${2:?}; shift 2 ;;
    --files) files=${2:?}; shift 2 ;;
    --build) build=${2:?}; shift 2 ;;
    --disk) disk=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "landlock.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
cordon=$build/cordon
[ -x "$cordon" ] || { echo "landlock.sh: $cordon not built (meson setup build && ninja -C build)" >&2; exit 2; }
"$cordon" run --isolation landlock -- true ||
  { echo "landlock.sh: --isolation landlock does not run here" >&2; exit 2; }

ms() { date +%s%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# The work (expanded inside: single quotes on purpose): N files in 50 directories at the top, then removed, then one commit.
# shellcheck disable=SC2016
work='i=0; while [ $i -lt 50 ]; do mkdir d$i; i=$((i + 1)); done
i=0; while [ $i -lt '$files' ]; do : >"d$((i % 50))/f$i"; i=$((i + 1)); done
rm -r d*; echo "$$" >top; git add top; git commit -q -m bench; rm top'

echo "--isolation landlock benchmark: $(uname -sr), $(nproc) CPU, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "work: $files files made and removed at the top of a git workspace, and a commit; medians of $repeats, ms"
printf '%-6s %8s %8s %9s  %7s %7s\n' fs bare ns landlock '÷bare' '÷ns'
mnt=
cleanup() {
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
    mnt=$(mktemp -d "$disk/cordon-bench-ll-tmpfs.XXXXXX")
    mount -t tmpfs -o size=1g tmpfs "$mnt"
    chmod 755 "$mnt"
    base=$mnt
  fi
  ws=$(mktemp -d "$base/cordon-bench-ll.XXXXXX")
  git -C "$ws" init -q
  git -C "$ws" config user.name bench
  git -C "$ws" config user.email bench@cordon.invalid
  git -C "$ws" commit -q --allow-empty -m first
  declare -A t=([bare]="" [ns]="" [landlock]="")
  for ((r = 0; r < repeats; r++)); do
    for v in bare ns landlock; do
      s=$(ms)
      case $v in
        bare) (cd "$ws" && sh -c "$work") ;;
        ns) (cd "$ws" && "$cordon" run -- sh -c "$work") ;;
        landlock) (cd "$ws" && "$cordon" run --isolation landlock -- sh -c "$work") ;;
      esac
      e=$(ms)
      t[$v]+="$(((e - s) / 1000000)) "
    done
  done
  b=$(tr ' ' '\n' <<<"${t[bare]}" | grep . | median)
  n=$(tr ' ' '\n' <<<"${t[ns]}" | grep . | median)
  l=$(tr ' ' '\n' <<<"${t[landlock]}" | grep . | median)
  printf '%-6s %8s %8s %9s  %7s %7s\n' "$fs" "$b" "$n" "$l" \
    "$(awk -v a="$l" -v b="$b" 'BEGIN { printf "%.2f", a / b }')" \
    "$(awk -v a="$l" -v b="$n" 'BEGIN { printf "%.2f", a / b }')"
  rm -rf "$ws"
  ws=
  if [ -n "$mnt" ]; then
    umount "$mnt" && rmdir "$mnt"
    mnt=
  fi
done
