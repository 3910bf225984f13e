#!/usr/bin/env bash
# The library's own C tests (tests/lib/test_lib_*: every public call, 1,000 sequential and
# 64 concurrent runs, the caller's signals and descriptors, abort latency), run as the
# identity this file runs as: each TAP test case becomes one PASS/FAIL line here, and the
# TAP comments (the measured figures) are passed on. The binaries are found next to
# $CORDON (build*/tests/); under the ASan build they run with LeakSanitizer, so "no memory
# left" is checked there.
. "$(dirname "$0")/lib.sh"

BUILD=$(dirname "$CORDON")

# run_tap NAME: run $BUILD/tests/test_lib_NAME and report each of its cases.
run_tap() {
  local name=$1 bin=$BUILD/tests/test_lib_$1 log=$T/lib_$1.tap rc=0
  if [ ! -x "$bin" ]; then
    skip "lib_$name" "$bin is not built (the tests are built with the library: meson -Dtests=true; a copied binary has none next to it)"
    return
  fi
  # a directory of its own, as a case's (the tests make nothing on the host outside /tmp)
  mkdir -p "$T/lib_$name" && chmod 0755 "$T/lib_$name"
  (cd "$T/lib_$name" && HOME=$T/lib_$name timeout -k 5 280 env CMOCKA_MESSAGE_OUTPUT=TAP "$bin") >"$log" 2>&1 || rc=$?
  local seen=0 line
  while IFS= read -r line; do
    case $line in
      "ok "*) seen=1; pass "lib_$name/$(printf '%s' "$line" | sed -E 's/^ok [0-9]+ - //')" ;;
      "not ok "*" - "*)
        seen=1
        local t why
        t=$(printf '%s' "$line" | sed -E 's/^not ok [0-9]+ - //')
        why=$(grep -B4 -F -- "$line" "$log" | grep -v '^ok \|^not ok' | tail -n 4 | _one_line)
        fail "lib_$name/$t" "${why:-see $log}"
        ;;
      "# "*" ms"* | "# "*"runs"*) echo "$line" ;;
    esac
  done <"$log"
  check_sanitizer_file "$log" "lib_$name"
  if [ "$seen" = 0 ]; then
    fail "lib_$name" "test_lib_$name reported nothing (status $rc): $(tail -n 5 "$log" | _one_line)"
  elif [ "$rc" -ne 0 ] && ! grep -q '^not ok ' "$log"; then
    fail "lib_$name" "test_lib_$name exited with status $rc: $(tail -n 5 "$log" | _one_line)"
  fi
}

check_sanitizer_file() {
  local line
  line=$(grep -m1 -E 'ERROR: (Address|Leak|Memory|Thread)Sanitizer|runtime error:|SUMMARY: UndefinedBehaviorSanitizer' "$1" || true)
  [ -z "$line" ] || fail "$2/sanitizer" "$line"
}

require_cordon
run_tap api
run_tap load
finish
