#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/analyze.sh BUILD_DIR: clang's static analyzer (`clang --analyze`, the checkers
# scan-build runs by default) over every C file of src/ that BUILD_DIR compiles, with that
# build's include paths and definitions (its compile_commands.json).  One line per file:
# "PASS analyze/FILE", or "FAIL analyze/FILE: the report" for each new report.
#
# tests/analyze-known.txt lists the reports where the analyzer is wrong, each under a
# comment saying why, as "FILE: message [checker]" (no line numbers: they move): those are
# SKIP lines; one that goes must leave the list (its line then FAILs as stale).  Exits non-zero
# when anything FAILed.  tests/run-all.sh runs it; ./bootstrap.sh
# installs clang (with CI=true or CORDON_ANALYZE=1).
set -uo pipefail
build=${1:?usage: tests/analyze.sh BUILD_DIR}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
clang=${CLANG:-clang}
command -v "$clang" >/dev/null 2>&1 || { echo "SKIP analyze: $clang not found (./bootstrap.sh installs it with CI=true or CORDON_ANALYZE=1)"; exit 77; }
[ -f "$build/compile_commands.json" ] || { echo "FAIL analyze: $build/compile_commands.json missing (not a meson build directory?)"; exit 1; }
out=$(mktemp -d "${TMPDIR:-/tmp}/cordon-analyze.XXXXXX") || exit 2
trap 'rm -rf "$out"' EXIT

# FILE<TAB>ARGS, once per source file of src/ (the library's compile line where a file is
# built twice): only what changes the meaning of the code (-I, -D, -std), relative paths
# made absolute against the build directory.
python3 - "$build" "$src" >"$out/list" <<'PY' || exit 2
import json, os, shlex, sys
build, src = (os.path.abspath(p) for p in sys.argv[1:3])
seen = {}
for e in json.load(open(os.path.join(build, "compile_commands.json"))):
    f = os.path.normpath(os.path.join(e["directory"], e["file"]))
    if not f.startswith(os.path.join(src, "src") + os.sep) or f in seen:
        continue
    args = []
    for a in shlex.split(e["command"]):
        if a.startswith("-I"):
            args.append("-I" + os.path.normpath(os.path.join(e["directory"], a[2:])))
        elif a.startswith(("-D", "-std=")):
            args.append(a)
    seen[f] = args
for f in sorted(seen):
    print(f + "\t" + " ".join(shlex.quote(a) for a in seen[f]))
PY

# one file: its reports (clang's "warning:"/"error:" lines with their notes) in
# $out/N.log, nothing when it is clean
analyze_one() {
  local n=$1 file=$2 args=$3
  # shellcheck disable=SC2086 # args: shell-quoted by the lister above
  eval "\"$clang\" --analyze -Xanalyzer -analyzer-output=text -o /dev/null $args \"\$file\"" \
    >"$out/$n.log" 2>&1
}
export -f analyze_one
export clang out

n=0
while IFS=$'\t' read -r file args; do
  n=$((n + 1))
  printf '%s\0%s\0%s\0' "$n" "$file" "$args"
done <"$out/list" | xargs -0 -n 3 -P "${ANALYZE_JOBS:-2}" bash -c 'analyze_one "$@"' _

# shellcheck source=tests/known.sh
source "$src/tests/known.sh"
known_load "$src/tests/analyze-known.txt"
bad=0 n=0
while IFS=$'\t' read -r file _; do
  n=$((n + 1))
  rel=${file#"$src"/}
  new=0 old=0
  while IFS= read -r line; do
    # "DIR/src/FILE.c:12:3: warning: message [checker]" -> "src/FILE.c: message [checker]"
    key=$(printf '%s\n' "$line" | sed -E "s|^$src/||; s|^([^:]+):[0-9]+:[0-9]+: (warning\|error): |\1: |")
    if [ "${want[$key]:-0}" -gt 0 ]; then
      want[$key]=$((${want[$key]} - 1))
      old=$((old + 1))
      echo "SKIP analyze/$rel: known report (tests/analyze-known.txt): ${line#"$src"/}"
    else
      new=$((new + 1))
      echo "FAIL analyze/$rel: ${line#"$src"/}"
    fi
  done < <(grep -E '^[^ ].*: (warning|error): ' "$out/$n.log")
  if [ "$new" -gt 0 ]; then
    bad=1
    sed "s|$src/||; s/^/# /" "$out/$n.log" | head -n 80
  elif [ "$old" -eq 0 ]; then
    echo "PASS analyze/$rel"
  fi
done <"$out/list"
[ "$n" -gt 0 ] || { echo "FAIL analyze: no source file of src/ in $build/compile_commands.json"; exit 1; }
known_stale analyze tests/analyze-known.txt "the analyzer" || bad=1
exit $bad
