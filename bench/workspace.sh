#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copy-on-write workspace benchmark (issue 11): creation and integration against the
# tools a person would use instead, in one run, alternating.
#
#   bench/workspace.sh [-n RUNS] [--files N] [--changed N] [--cordon PATH] [--tree DIR]
#                      [--only create|kernel|integrate]
#
# Generates a git repository of N files (default 100,000: 1,000 directories of 100 small
# files, one commit; in a temporary directory unless --tree names one that holds it), then
# times, RUNS times each (default 7), alternating:
#   create + first run   `cordon workspace create W --source REPO --backend B` then
#                        `cordon workspace run W -- true`, for B = kernel, fuse, copy
#                        (a backend that does not work here is skipped, saying why),
#                        against `cp -a REPO DST` and `git worktree add DST`
#   kernel creation      `cordon workspace create --backend kernel` alone, on the big tree
#                        and on a 10-file one (its cost must not depend on the tree's size;
#                        target: at most 5 ms)
#   integrate            `cordon workspace integrate` of a kernel workspace in which
#                        --changed files (default 1,000) were changed, against
#                        `git add -A && git commit` of the same changes in a twin
#                        repository (target: at most 1.0 x git's time)
# and prints medians, p10, p90 (ms) and ratios (each command timed after a sync, so that
# no other command's writeback lands in its fsyncs).  Timing never fails the run: the exit
# status is non-zero only when a command failed.  Runs as the caller (fuse-overlayfs needs
# a usable /dev/fuse).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
runs=7
files=100000
changed=1000
cordon=${CORDON:-$top/build/cordon}
tree=
only=

die() { echo "workspace.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case $1 in
    -n|--runs) runs=${2:?}; shift 2 ;;
    --files) files=${2:?}; shift 2 ;;
    --changed) changed=${2:?}; shift 2 ;;
    --cordon) cordon=${2:?}; shift 2 ;;
    --tree) tree=${2:?}; shift 2 ;;
    --only) only=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done
case $runs$files$changed in *[!0-9]*) die "-n, --files and --changed want numbers" ;; esac
[ -x "$cordon" ] || die "$cordon: not built (meson setup build && ninja -C build)"
command -v git >/dev/null || die "git not found"

tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/cordon-wsbench.XXXXXX")
cleanup() {
  local m
  for m in $(awk -v t="$tmp" 'index($5, t) == 1 {print $5}' /proc/self/mountinfo | sort -r); do
    fusermount3 -u -z "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
export GIT_CONFIG_NOSYSTEM=1 HOME=$tmp/home
mkdir -p "$HOME"
git config --global user.name bench
git config --global user.email bench@cordon.invalid
git config --global init.defaultBranch main
git config --global core.hooksPath /dev/null
git config --global gc.auto 0

now() { date +%s%N; }
# t VAR CMD...: run CMD, append its wall time (ms, 3 decimals) to the file VAR.  The file
# systems are synced first: what the last command left for writeback (a removed 100,000-
# file copy, say) must not land in the next one's fsync (ext4 commits its whole journal).
t() {
  local f=$tmp/times.$1 s e
  shift
  sync
  s=$(now)
  "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; die "failed: $*"; }
  e=$(now)
  echo "$(((e - s) / 1000))" >>"$f"
}

make_tree() {
  local d=$1 n=$2
  mkdir -p "$d"
  python3 - "$d" "$n" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
per = 100
for i in range((n + per - 1) // per):
    sub = os.path.join(d, "d%04d" % i)
    os.mkdir(sub)
    for j in range(min(per, n - i * per)):
        with open(os.path.join(sub, "f%03d.txt" % j), "w") as f:
            f.write("file %d/%d\n" % (i, j) * 4)
PY
  git -C "$d" init -q .
  git -C "$d" add -A
  git -C "$d" commit -q -m tree
  git -C "$d" gc -q --prune=now # packed, as a repository is; and no gc --auto meanwhile
}

if [ -n "$tree" ] && [ -d "$tree/.git" ]; then
  repo=$tree
  git -C "$repo" gc -q --prune=now
else
  repo=${tree:-$tmp/repo}
  echo "generating a repository of $files files in $repo ..." >&2
  make_tree "$repo" "$files"
fi
make_tree "$tmp/small" 10
state=$tmp/state

echo "cordon workspace benchmark: $(uname -sr), $(nproc) CPU, as uid $(id -u), $(git --version)"
echo "  tree: $(find "$repo" -path "$repo/.git" -prune -o -type f -print | wc -l) files; cordon: $cordon"
echo

backends=()
for b in kernel fuse copy; do
  if "$cordon" workspace create probe-$b --source "$repo" --root "$state" --backend "$b" >/dev/null 2>"$tmp/err"; then
    backends+=("$b")
    "$cordon" workspace remove probe-$b --root "$state" >/dev/null
  else
    echo "  $b: skipped: $(head -c 300 "$tmp/err")"
  fi
done

want() { [ -z "$only" ] || [ "$only" = "$1" ]; }

# --- create + first run ----------------------------------------------------------------
want create && for ((i = 0; i < runs; i++)); do
  for b in "${backends[@]}"; do
    t "$b" sh -c "'$cordon' workspace create c$i-$b --source '$repo' --root '$state' --backend $b &&
                  '$cordon' workspace run c$i-$b --root '$state' -- true"
    "$cordon" workspace remove c$i-$b --root "$state" >/dev/null
  done
  t cp cp -a "$repo" "$tmp/cp$i"
  rm -rf "$tmp/cp$i"
  t worktree git -C "$repo" worktree add -q --detach "$tmp/wt$i"
  git -C "$repo" worktree remove --force "$tmp/wt$i"
done

# --- kernel creation alone, big and small tree -------------------------------------------
want kernel && for ((i = 0; i < runs * 3; i++)); do
  t kbig "$cordon" workspace create kb$i --source "$repo" --root "$state" --backend kernel
  t ksmall "$cordon" workspace create ks$i --source "$tmp/small" --root "$state" --backend kernel
  "$cordon" workspace remove kb$i --root "$state" >/dev/null
  "$cordon" workspace remove ks$i --root "$state" >/dev/null
done

# --- integrate of N changed files against git add -A && git commit ------------------------
twin=$tmp/twin
want integrate && cp -a "$repo" "$twin"
ndirs=$(((files + 99) / 100))
# the files a round changes: spread over the directories
CHANGE='import sys
r, n, dirs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
for k in range(n):
    p = "d%04d/f%03d.txt" % (k % dirs, (k // dirs) % 100)
    with open(p, "a") as f:
        f.write("round %d\n" % r)'
gen() { python3 -c "$CHANGE" "$1" "$changed" "$ndirs"; }
want integrate && cp -a "$repo" "$tmp/irepo"
want integrate && for ((i = 0; i < runs; i++)); do
  "$cordon" workspace create in$i --source "$tmp/irepo" --root "$state" --backend kernel >/dev/null
  "$cordon" workspace run in$i --root "$state" --chdir "$tmp/irepo" -- python3 -c "$CHANGE" "$i" "$changed" "$ndirs" ||
    die "changing files in the workspace failed"
  t integrate "$cordon" workspace integrate in$i --root "$state"
  [ "$(git -C "$tmp/irepo" diff HEAD~1 --name-only | wc -l)" = "$changed" ] || die "integrate did not commit $changed files"
  (cd "$twin" && gen "$i")
  t git sh -c "cd '$twin' && git add -A && git commit -q -m round"
  "$cordon" workspace remove in$i --root "$state" >/dev/null
done

python3 - "$tmp" "$runs" "$changed" "${backends[@]}" <<'PY'
import os, sys, statistics
tmp, runs, changed, backends = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
def load(name):
    p = os.path.join(tmp, "times." + name)
    if not os.path.exists(p):
        return None
    v = sorted(int(x) / 1000 for x in open(p))
    return v
def q(v, f):
    i = min(len(v) - 1, max(0, int(round(f * (len(v) - 1)))))
    return v[i]
def row(label, v, refs):
    med = statistics.median(v)
    r = "  ".join("%6.3f x %s" % (med / statistics.median(rv), rn) for rn, rv in refs if rv)
    print("  %-44s %9.1f %9.1f %9.1f   %s" % (label, med, q(v, 0.1), q(v, 0.9), r))
    return med
cp, wt = load("cp"), load("worktree")
if cp:
    print("create + first run (ms)                        median       p10       p90")
    for b in backends:
        row("cordon workspace create --backend %s + run" % b, load(b), [("cp -a", cp), ("git worktree add", wt)])
    row("cp -a", cp, [])
    row("git worktree add", wt, [])
    print()
kb, ks = load("kbig"), load("ksmall")
if kb:
    print("kernel creation alone (ms; target <= 5 ms, independent of the tree's size)")
    mb = row("create --backend kernel, the big tree", kb, [])
    ms = row("create --backend kernel, a 10-file tree", ks, [])
    print("  big / small: %.2f; %s" % (mb / ms, "target met" if mb <= 5.0 else "TARGET MISSED (5 ms)"))
    print()
gi = load("git")
if gi:
    print("integrate of %d changed files (ms; target <= 1.0 x git)" % changed)
    mi = row("cordon workspace integrate (kernel)", load("integrate"), [("git", gi)])
    mg = row("git add -A && git commit", gi, [])
    print("  ratio: %.2f; %s" % (mi / mg, "target met" if mi <= mg else "TARGET MISSED (1.0 x git)"))
PY
