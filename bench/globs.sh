#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Deny-glob benchmark: cordon's own walker against ripgrep over the same tree.
#
#   bench/globs.sh [-n RUNS] [-w WARMUP] [--build DIR] [--tree DIR] [--out FILE]
#
# Generates (deterministically, in a temporary directory unless --tree names one that
# already holds it) a tree of 200,000 files in 20,020 directories, three levels deep, with
# a few dozen secrets among them (*.env, .env, .env.local; some in dot directories), then
# runs, alternating, in one run, RUNS times each (default 15):
#   walk    bench/globwalk.c, linked to BUILD/libcordon.a: cordon's expansion of
#           ROOT/**/*.env and ROOT/**/.env.local and nothing else (no policy, no sandbox)
#   rg      rg --files --hidden --no-ignore --glob '*.env' --glob '.env.local' ROOT
# and prints medians and the ratio walk/rg (the target: at most 0.50). Then, same run,
# `cordon run -- true` started in ROOT (so the matches are visible and each one is a
# mount) with and without the two --deny-glob rules, and `cordon explain` with them.
# Timing never fails the run: the exit status is non-zero only when a command failed or
# the two expansions disagree.
#
# Needs: a built tree (default build/: meson setup build && ninja -C build), python3, a C
# compiler, and ripgrep (apt-get install ripgrep) for the reference.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")

runs=15
warmup=2
build=$top/build
tree=
out=
target_ratio=0.50

die() { echo "globs.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case $1 in
    -n|--runs) runs=${2:?}; shift 2 ;;
    -w|--warmup) warmup=${2:?}; shift 2 ;;
    --build) build=${2:?}; shift 2 ;;
    --tree) tree=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done
case $runs in ''|*[!0-9]*) die "-n wants a number" ;; esac
[ "$runs" -ge 10 ] || die "-n: at least 10 runs, for a median worth reading"
case $build in /*) ;; *) build=$PWD/$build ;; esac
[ -f "$build/libcordon.a" ] && [ -x "$build/cordon" ] ||
  die "$build/libcordon.a or $build/cordon missing: meson setup build && ninja -C build"
if [ -n "$out" ]; then case $out in /*) ;; *) out=$PWD/$out ;; esac; fi
rg=$(command -v rg || true)
[ -n "$rg" ] || echo "globs.sh: rg not found (apt-get install ripgrep): measuring without the reference" >&2

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cordon-globs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"

# --- the tree ------------------------------------------------------------------------------
# 20 top directories, 10 below each (one of them a dot directory), 99 below each of those:
# 20,020 directories; 10 files in each of the 19,800 leaves and the 200 middle ones:
# 200,000 files. About one file in 4,000 is a secret.
if [ -z "$tree" ]; then
  tree=$tmp/tree
elif [ -f "$tree/.cordon-bench-tree" ]; then
  echo "globs.sh: reusing the tree in $tree"
fi
case $tree in /*) ;; *) tree=$PWD/$tree ;; esac
if [ ! -f "$tree/.cordon-bench-tree" ]; then
  [ ! -e "$tree" ] || [ -z "$(ls -A "$tree")" ] || die "--tree $tree: exists and is not a tree made by this script"
  python3 - "$tree" <<'EOF'
import os, sys
root = sys.argv[1]
os.makedirs(root, exist_ok=True)
exts = ['.txt', '.js', '.py', '.md', '.json', '.c', '.h', '.rs', '.go', '.yml']
ndirs = nfiles = nsecrets = 0
def files(d, k):
    global nfiles, nsecrets
    for j in range(10):
        n = k * 10 + j
        name = 'f%d%s' % (j, exts[j])
        if n % 7919 == 11: name = 'prod%d.env' % j
        elif n % 9973 == 5: name = '.env'
        elif n % 12007 == 3: name = '.env.local'
        elif n % 15013 == 7: name = '.env.local.bak'
        if name != 'f%d%s' % (j, exts[j]): nsecrets += 1
        with open(os.path.join(d, name), 'w') as f:
            f.write('x\n')
        nfiles += 1
k = 0
for a in range(20):
    da = os.path.join(root, 'a%02d' % a); os.mkdir(da); ndirs += 1
    for b in range(10):
        db = os.path.join(da, ('.b%d' if b == 9 else 'b%d') % b); os.mkdir(db); ndirs += 1
        files(db, k); k += 1
        for c in range(99):
            dc = os.path.join(db, 'c%02d' % c); os.mkdir(dc); ndirs += 1
            files(dc, k); k += 1
open(os.path.join(root, '.cordon-bench-tree'), 'w').write('%d %d %d\n' % (ndirs, nfiles, nsecrets))
EOF
fi
read -r ndirs nfiles nsecrets <"$tree/.cordon-bench-tree"

# --- the programs ----------------------------------------------------------------------------
cc=${CC:-cc}
"$cc" -O2 -static -o "$tmp/startup" "$here/startup.c" 2>/dev/null || "$cc" -O2 -o "$tmp/startup" "$here/startup.c"
"$cc" -O2 -I"$top/include" -I"$top/src" -o "$tmp/globwalk" "$here/globwalk.c" "$build/libcordon.a" -lpthread

p1="$tree/**/*.env"
p2="$tree/**/.env.local"
matches=$("$tmp/globwalk" "$p1" "$p2")
echo "cordon deny-glob benchmark: $(uname -sr), $(nproc) CPU, as uid $(id -u)"
echo "  tree:   $tree: $ndirs directories, $nfiles files, $matches matches of $p1 and $p2"
echo "  cordon: $build (walker: bench/globwalk.c on libcordon.a)"
echo "  rg:     ${rg:-not installed}${rg:+ ($("$rg" --version | head -n 1))}"
rc=0
if [ -n "$rg" ]; then
  # the two must find the same paths (symlinks: none in this tree)
  diff <("$tmp/globwalk" --print "$p1" "$p2" | sed '$d' | sort) \
    <("$rg" --files --hidden --no-ignore --glob '*.env' --glob '.env.local' "$tree" | sort) >"$tmp/diff" ||
    { echo "globs.sh: cordon's walker and ripgrep disagree:"; head -n 20 "$tmp/diff"; rc=1; }
fi
echo

args=(-n "$runs" -w "$warmup")
[ -z "$out" ] || args+=(--out "$out")
if [ -n "$rg" ]; then
  args+=(--ref rg --target-ratio walk="$target_ratio"
         --cmd walk "$tmp/globwalk" "$p1" "$p2"
         --cmd rg "$rg" --files --hidden --no-ignore --glob '*.env' --glob '.env.local' "$tree")
else
  args+=(--cmd walk "$tmp/globwalk" "$p1" "$p2")
fi
echo "== expansion: cordon's walker against ripgrep"
"$tmp/startup" "${args[@]}" || rc=$?

# `cordon run` in the tree, so that every match is visible and costs a mount.
echo
echo "== cordon run -- true, started in the tree, with and without the two globs"
cd "$tree"
"$tmp/startup" -n "$runs" -w "$warmup" --ref run \
  --cmd run "$build/cordon" run -- /bin/true \
  --cmd run_globs "$build/cordon" run --deny-glob "$p1" --deny-glob "$p2" -- /bin/true \
  --cmd explain_globs "$build/cordon" explain --deny-glob "$p1" --deny-glob "$p2" || rc=$?
exit "$rc"
