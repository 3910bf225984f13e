#!/usr/bin/env bash
# The library's own C tests (tests/lib/test_lib_*: every public call, sessions, 1,000 sequential and
# 64 concurrent runs, the caller's signals and descriptors, abort latency), run as the
# identity this file runs as: each TAP test case becomes one PASS/FAIL line here, and the
# measured figures are passed on. The binaries are found next to $CORDON (build*/tests/);
# under the ASan build they run with LeakSanitizer, so "no memory left" is checked there.
. "$(dirname "$0")/lib.sh"

BUILD=$(dirname "$CORDON")

# run_tap NAME: run $BUILD/tests/test_lib_NAME and report each of its cases.
run_tap() {
  local name=$1 bin=$BUILD/tests/test_lib_$1 rc=0
  if [ ! -x "$bin" ]; then
    skip "lib_$name" "$bin is not built (the tests are built with the library: meson -Dtests=true; a copied binary has none next to it)"
    return
  fi
  mkdir -p "$T/lib_$name" && chmod 0755 "$T/lib_$name"
  (cd "$T/lib_$name" && HOME=$T/lib_$name timeout -k 5 280 env CMOCKA_MESSAGE_OUTPUT=TAP "$bin") \
    >"$T/lib_$name.tap" 2>&1 || rc=$?
  report_tap "lib_$name" "$T/lib_$name.tap" "$rc"
}

require_cordon
run_tap api
run_tap load
run_tap session
finish
