#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/circles.sh BUILD_DIR: no file-level circles in src/.  A circle
# is two source files each calling a function the other defines: neither can be read,
# tested or moved without the other, and the layering of HACKING.md ("a later stage never
# reaches back into an earlier one") is lost.  The objects are BUILD_DIR's own (those its
# compile_commands.json names, so a stale object of a removed file is not counted), the
# symbols nm's: each object's undefined ones, against what the other objects of the same
# link target define.
#
# One line per circle: "FAIL circles: A <-> B (A -> B: symbols; B -> A: symbols)", or
# "SKIP circles: ..." for one that tests/circles-known.txt lists ("A <-> B: reason", a
# circle that stays on purpose, or for now); an entry that is no longer a circle FAILs as
# stale, so the list only shrinks.  "PASS circles" when nothing FAILed.  Exits non-zero
# when anything FAILed, 77 when nm or python3 is missing.  tests/run-all.sh runs it.
set -euo pipefail
build=${1:?usage: tests/circles.sh BUILD_DIR}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
nm=${NM:-nm}
command -v "$nm" >/dev/null 2>&1 || { echo "SKIP circles: $nm not found (binutils; ./bootstrap.sh installs it with build-essential)"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP circles: python3 not found (./bootstrap.sh installs it)"; exit 77; }
[ -f "$build/compile_commands.json" ] || { echo "FAIL circles: $build/compile_commands.json missing (not a meson build directory?)"; exit 1; }

# TARGET<TAB>FILE<TAB>OBJECT, one line per object compiled from a file of src/: TARGET is
# the object's directory (one per link target: libcordon.a.p, cordon.p, ...), FILE the
# source relative to the repository, OBJECT its path.
list=$(python3 - "$build" "$src" <<'PY'
import json, os, sys
build, src = (os.path.abspath(p) for p in sys.argv[1:3])
for e in json.load(open(os.path.join(build, "compile_commands.json"))):
    f = os.path.normpath(os.path.join(e["directory"], e["file"]))
    if not f.startswith(os.path.join(src, "src") + os.sep) or "output" not in e:
        continue
    o = os.path.normpath(os.path.join(e["directory"], e["output"]))
    print(os.path.dirname(o) + "\t" + os.path.relpath(f, src) + "\t" + o)
PY
)
[ -n "$list" ] || { echo "FAIL circles: no object of src/ in $build/compile_commands.json"; exit 1; }

# syms OBJECT NM-OPTION...: nm's POSIX listing ("SYMBOL TYPE ..."), or FAIL and exit
syms() {
  local obj=$1 out
  shift
  out=$("$nm" -P "$@" "$obj" 2>&1) || { echo "FAIL circles: $nm cannot read $obj: $out"; exit 1; }
  printf '%s\n' "$out"
}

declare -A def=() # TARGET/SYMBOL -> the FILE that defines it
n=0
while IFS=$'\t' read -r target file obj; do
  [ -f "$obj" ] || { echo "FAIL circles: $obj (of $file) missing: build $build first (ninja -C $build)"; exit 1; }
  n=$((n + 1))
  while read -r sym _; do
    def[$target/$sym]=$file
  done <<<"$(syms "$obj" -g --defined-only)"
done <<<"$list"
[ "${#def[@]}" -gt 0 ] || { echo "FAIL circles: nm found no symbol in $n objects (an LTO build? nm reads no bitcode)"; exit 1; }

declare -A uses=() # "A B" -> the symbols A calls that B defines
while IFS=$'\t' read -r target file obj; do
  while read -r sym _; do
    d=${def[$target/$sym]:-}
    if [ -z "$d" ] || [ "$d" = "$file" ]; then continue; fi
    case " ${uses[$file $d]:-} " in *" $sym "*) ;; *) uses[$file $d]="${uses[$file $d]:+${uses[$file $d]} }$sym" ;; esac
  done <<<"$(syms "$obj" -u)"
done <<<"$list"

declare -A known=()
known_file=$src/tests/circles-known.txt
bad=0
if [ -f "$known_file" ]; then
  while IFS= read -r line; do
    case $line in '' | '#'*) continue ;; esac
    pair=${line%%: *} reason=${line#*: }
    a=${pair%% <-> *} b=${pair##* <-> }
    if [ "$pair" = "$line" ] || [ "$a" = "$pair" ] || [ -z "$reason" ]; then
      echo "FAIL circles: tests/circles-known.txt: '$line' is not 'A <-> B: reason'"
      bad=1
      continue
    fi
    [[ "$a" < "$b" ]] || { t=$a a=$b b=$t; }
    known[$a <-> $b]=$reason
  done <"$known_file"
fi

circles=0
declare -A seen=()
while read -r a b; do
  if [[ ! "$a" < "$b" ]] || [ -z "${uses[$b $a]:-}" ]; then continue; fi
  pair="$a <-> $b"
  circles=$((circles + 1))
  seen[$pair]=1
  detail="$a -> $b: ${uses[$a $b]}; $b -> $a: ${uses[$b $a]}"
  if [ -n "${known[$pair]:-}" ]; then
    echo "SKIP circles: $pair: known (tests/circles-known.txt: ${known[$pair]}) ($detail)"
  else
    echo "FAIL circles: $pair ($detail)"
    bad=1
  fi
done < <(printf '%s\n' "${!uses[@]}" | sort)

for pair in "${!known[@]}"; do
  [ -z "${seen[$pair]:-}" ] || continue
  echo "FAIL circles: tests/circles-known.txt lists '$pair', which is no longer a circle: remove the line"
  bad=1
done
[ "$bad" -ne 0 ] || echo "PASS circles"
exit $bad
