#!/usr/bin/env bash
# The Python binding's tests (python/tests/test_cordon.py) against the libcordon.so next to
# $CORDON, as the identity this file runs as; one PASS/FAIL line per test. Skipped, loudly,
# where that library cannot be loaded into python3 (a sanitizer build's needs its runtime
# preloaded).
. "$(dirname "$0")/lib.sh"

BUILD=$(dirname "$CORDON")
LIB=$BUILD/libcordon.so
TESTS=$REPO_ROOT/python/tests/test_cordon.py

require_cordon
if [ ! -e "$LIB" ]; then
  skip "python" "$LIB not found (built by default: default_library=both; a copied binary has none next to it)"
elif ! [ -r "$TESTS" ]; then
  skip "python" "$TESTS cannot be read by $WHO"
elif ldd "$LIB" 2>/dev/null | grep -q 'libasan'; then
  skip "python" "$LIB is a sanitizer build: python3 cannot load it without the ASan runtime preloaded (the default build's binding tests cover it)"
else
  mkdir -p "$T/py" && chmod 0755 "$T/py"
  rc=0
  (cd "$T/py" && HOME=$T/py CORDON_LIBRARY=$LIB timeout -k 5 280 "$PY" "$TESTS" --tap) >"$T/py.tap" 2>&1 || rc=$?
  report_tap "python" "$T/py.tap" "$rc"
fi
finish
