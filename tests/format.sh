#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/format.sh: every C file of the tree is formatted as .clang-format says ("PASS
# format/FILE", or "FAIL format/FILE" with the first lines of the difference;
# `clang-format -i FILE` fixes it).  The files are git's (or, outside a checkout, those
# under src include tests fuzz bench examples).  Exits non-zero when one is not formatted.
# tests/run-all.sh runs it; ./bootstrap.sh installs clang-format (with CI=true or
# CORDON_ANALYZE=1).  clang-format 14 (Debian 12) is the reference: another version may
# format a few constructs differently.  A line that must keep its shape (an initializer
# macro on one line) sits between /* clang-format off */ and /* clang-format on */.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
cf=${CLANG_FORMAT:-clang-format}
command -v "$cf" >/dev/null 2>&1 || { echo "SKIP format: $cf not found (./bootstrap.sh installs it with CI=true or CORDON_ANALYZE=1)"; exit 77; }
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.c' '*.h')
else
  mapfile -t files < <(find src include tests fuzz bench examples -name '*.[ch]' 2>/dev/null | sort)
fi
[ "${#files[@]}" -gt 0 ] || { echo "FAIL format: no C file found"; exit 1; }
bad=0
for f in "${files[@]}"; do
  if [ ! -f "$f" ]; then
    continue # deleted in the work tree, not yet in git
  elif "$cf" --style=file "$f" | cmp -s "$f" -; then
    echo "PASS format/$f"
  else
    echo "FAIL format/$f: not formatted as .clang-format says (clang-format -i $f):"
    "$cf" --style=file "$f" | diff -u "$f" - | sed -n '3,20s/^/# /p'
    bad=1
  fi
done
exit $bad
