#!/usr/bin/env bash
# What the creation control costs: work that creates many files, inside cordon with and
# without it, alternating in one run, as an unprivileged user.
#
#   bench/creation.sh [-n REPEATS] [--files N] [--out FILE]
#
# Builds this checkout twice (build-bench-cc/ as shipped, build-bench-nocc/ with meson
# -Dcreation_control=false, which leaves the control out; there is no run-time switch),
# then times each of, REPEATS times, alternating the two builds:
#   tar     extracting a tarball of N files (default 10,000) in 100 directories into the
#           workspace                                                  (target 1.5 x)
#   clone   git clone of a local repository of N/2 files into $TMPDIR (a new repository
#           cannot be made in a writable host path, see README)      (target 1.5 x)
#   ninja   building this project (a copy of the sources in the workspace) with ninja
#                                                                      (target 1.05 x)
# and prints the medians and the ratio of each (with / without).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
repeats=5
files=10000
out=

die() { echo "creation.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    -n|--repeats) repeats=${2:?}; shift 2 ;;
    --files) files=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done
case $repeats in ''|*[!0-9]*) die "-n wants a number" ;; esac
case $files in ''|*[!0-9]*) die "--files wants a number" ;; esac

build() { # DIR [MESON OPTION...]
  local dir=$top/$1
  shift
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" -Dtests=false "$@" >"$dir.log" 2>&1 || { cat "$dir.log" >&2; die "meson setup $dir failed"; }
  fi
  ninja -C "$dir" cordon >"$dir.log" 2>&1 || { tail -n 30 "$dir.log" >&2; die "building $dir failed"; }
  rm -f "$dir.log"
}
build build-bench-cc
build build-bench-nocc -Dcreation_control=false

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cordon-bench-creation.XXXXXX")
trap 'chmod -R u+rwX "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
cp "$top/build-bench-cc/cordon" "$tmp/cordon-cc"
cp "$top/build-bench-nocc/cordon" "$tmp/cordon-nocc"
mkdir "$tmp/home" "$tmp/data"

# the inputs: a tarball of $files files, a repository of $files/2 files, the sources
python3 - "$tmp/data" "$files" <<'PY'
import os, sys, tarfile, io
data, n = sys.argv[1], int(sys.argv[2])
with tarfile.open(os.path.join(data, "files.tar"), "w") as t:
    for i in range(n):
        b = (b"x" * 200)
        ti = tarfile.TarInfo(f"tree/d{i % 100:02d}/f{i:05d}.txt")
        ti.size = len(b)
        ti.mode = 0o644
        t.addfile(ti, io.BytesIO(b))
repo = os.path.join(data, "repo")
for i in range(n // 2):
    d = os.path.join(repo, f"d{i % 50:02d}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{i:05d}.c"), "w") as f:
        f.write(f"int f{i}(void) {{ return {i}; }}\n")
PY
git -C "$tmp/data/repo" init -q
git -C "$tmp/data/repo" add -A
git -C "$tmp/data/repo" -c user.name=b -c user.email=b@e commit -q -m files
mkdir "$tmp/data/src"
git -C "$top" ls-files -z | (cd "$top" && xargs -0 tar cf -) | tar xf - -C "$tmp/data/src"

drop=()
if [ "$(id -u)" = 0 ]; then
  chown -R 65534:65534 "$tmp"
  chmod 700 "$tmp/home"
  drop=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$tmp/home" USER=nobody LOGNAME=nobody)
  who="uid 65534 (dropped from root with setpriv)"
else
  who="uid $(id -u)"
fi

# one timed run: BIN WORKLOAD -> milliseconds on stdout
one() {
  local bin=$1 what=$2 ws=$tmp/ws-$RANDOM$RANDOM cmd
  "${drop[@]}" mkdir "$ws"
  case $what in
    tar) cmd=(tar xf "$tmp/data/files.tar") ;;
    clone) cmd=(sh -c 'git clone -q "$0" "$TMPDIR/c" && test -d "$TMPDIR/c/d00"' "$tmp/data/repo") ;;
    ninja)
      "${drop[@]}" cp -a "$tmp/data/src" "$ws/src"
      "${drop[@]}" sh -c "cd '$ws/src' && meson setup b -Dtests=false -Dstatic_cli=false >/dev/null 2>&1" ||
        die "meson setup of the copy failed"
      cmd=(ninja -C src/b) ;;
  esac
  local s e
  sync # another run's writeback must not land in this one's time
  s=$(date +%s%N)
  (cd "$ws" && "${drop[@]}" "$tmp/$bin" run --base host --allow-ro "$tmp/data" -- "${cmd[@]}" >/dev/null 2>"$tmp/err") ||
    die "$bin $what failed: $(head -c 400 "$tmp/err")"
  e=$(date +%s%N)
  rm -rf "$ws"
  echo $(((e - s) / 1000000))
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

echo "cordon creation-control benchmark: $(uname -sr), $(nproc) CPU, as $who, $repeats repeats each"
declare -A target=([tar]=1.5 [clone]=1.5 [ninja]=1.05)
results=""
for what in tar clone ninja; do
  : >"$tmp/$what.cc"
  : >"$tmp/$what.nocc"
  for ((i = 0; i < repeats; i++)); do
    one cordon-nocc "$what" >>"$tmp/$what.nocc"
    one cordon-cc "$what" >>"$tmp/$what.cc"
  done
  m_cc=$(median <"$tmp/$what.cc")
  m_no=$(median <"$tmp/$what.nocc")
  ratio=$(awk -v a="$m_cc" -v b="$m_no" 'BEGIN {printf "%.2f", a / b}')
  line=$(printf '%-6s with %8s ms   without %8s ms   ratio %s (target <= %s)' "$what" "$m_cc" "$m_no" "$ratio" "${target[$what]}")
  echo "$line"
  results+="$line"$'\n'
done
[ -z "$out" ] || printf '%s' "$results" >"$out"
