#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/cppcheck.sh BUILD_DIR: cppcheck (warning and portability checks) over the C files
# of src/ that BUILD_DIR compiles, with that build's include paths and definitions (its
# compile_commands.json).  One line: "PASS cppcheck" when it reports nothing new, else a
# "FAIL cppcheck/FILE: report" line per new report.
#
# It adds signal to clang's analyzer (tests/analyze.sh): when it was added it
# found a NULL pointer subtracted before the check for NULL (sandbox/root.c) and an array
# read before its bounds check (session/pid1.c), both fixed.  tests/cppcheck-known.txt
# lists, as "FILE: message [id]", the reports where cppcheck is wrong (each with why): SKIP
# lines; one it no longer reports FAILs as stale, so that the list only shrinks.  Exits 77
# when cppcheck is missing (./bootstrap.sh installs it with CI=true or CORDON_ANALYZE=1).
set -uo pipefail
build=${1:?usage: tests/cppcheck.sh BUILD_DIR}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
command -v cppcheck >/dev/null 2>&1 || { echo "SKIP cppcheck: cppcheck not found (./bootstrap.sh installs it with CI=true or CORDON_ANALYZE=1)"; exit 77; }
[ -f "$build/compile_commands.json" ] || { echo "FAIL cppcheck: $build/compile_commands.json missing (not a meson build directory?)"; exit 1; }
out=$(mktemp -d "${TMPDIR:-/tmp}/cordon-cppcheck.XXXXXX") || exit 2
trap 'rm -rf "$out"' EXIT

# Only src/: the tests and fuzzers are left out.  jansson.h is read for its macros
# (json_object_foreach), which cppcheck cannot guess; system headers are not read.
jansson=/usr/include/jansson.h
inc=()
[ -f "$jansson" ] && inc=(--include="$jansson")
(cd "$src" && cppcheck --project="$(cd "$build" && pwd)/compile_commands.json" --quiet \
  --enable=warning,portability -j "${CPPCHECK_JOBS:-2}" "${inc[@]}" \
  -i "$(cd "$build" && pwd)" -i tests -i fuzz \
  --template='{file}: {message} [{id}]' 2>"$out/log" >/dev/null)
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL cppcheck: cppcheck exited with status $rc"; sed 's/^/# /' "$out/log" | head -n 40; exit 1; }

# shellcheck source=tests/known.sh
source "$src/tests/known.sh"
known_load "$src/tests/cppcheck-known.txt"
bad=0
while IFS= read -r line; do
  [ -n "$line" ] || continue
  key=${line#"$src"/}
  case $key in src/*) ;; *) continue ;; esac
  if [ "${want[$key]:-0}" -gt 0 ]; then
    want[$key]=$((${want[$key]} - 1))
    echo "SKIP cppcheck/${key%%:*}: known (tests/cppcheck-known.txt): $key"
  else
    echo "FAIL cppcheck/${key%%:*}: $key"
    bad=1
  fi
done < <(sort "$out/log")
known_stale cppcheck tests/cppcheck-known.txt cppcheck || bad=1
[ "$bad" -eq 0 ] && echo "PASS cppcheck"
exit $bad
