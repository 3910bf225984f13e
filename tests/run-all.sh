#!/usr/bin/env bash
# cordon's whole test suite:
#   1. ./bootstrap.sh (packages, build/)
#   2. the unit tests (meson test --suite unit)
#   3. every tests/e2e/test_*.sh and tests/escape/test_*.sh, as root and as an
#      unprivileged user (uid 65534); in this default pass also tests/stress/test_*.sh
#      (faults and load: kill -9 trials, 1,000 runs, 64 at once, a full disk)
#   3b. the boundary: the CLI built against libcordon.so alone (build-shared/)
#   4. unless --quick: the same again against an ASan+UBSan build in build-asan/
#   5. unless --quick: valgrind memcheck over the smoke paths (tests/valgrind/smoke.sh)
#   6. unless --quick: each libFuzzer harness (fuzz/run.sh) for 60 s when CI=true, 5 s
#      otherwise (CORDON_FUZZ_SECONDS overrides); skipped, loudly, without clang
# Its last line is always "N passed, N failed, N skipped" (unit test cases and e2e cases);
# it exits non-zero when anything failed.
#
# usage: tests/run-all.sh [--quick] [--filter PATTERN]
#   --quick           skip the sanitizer and fuzzing passes
#   --filter PATTERN  run only the e2e/escape files whose path under tests/ contains
#                     PATTERN (glob allowed), e.g. --filter network, --filter 'escape/*'
set -uo pipefail

usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; }

QUICK=0
FILTER=""
while [ $# -gt 0 ]; do
  case $1 in
    --quick) QUICK=1 ;;
    --filter) [ $# -ge 2 ] || { echo "run-all: --filter needs a pattern" >&2; exit 2; }; FILTER=$2; shift ;;
    --filter=*) FILTER=${1#--filter=} ;;
    -h | --help) usage; exit 0 ;;
    *) echo "run-all: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
REPO=$(pwd)

UNPRIV_UID=65534
UNPRIV_GID=65534
SAN_ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
SAN_UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
FILE_TIMEOUT=${CORDON_TEST_FILE_TIMEOUT:-300}

PASSED=0
FAILED=0
SKIPPED=0

TMPROOT=$(mktemp -d "${TMPDIR:-/tmp}/cordon-tests.XXXXXX") || { echo "run-all: mktemp failed" >&2; exit 2; }
chmod 0755 "$TMPROOT"
FAILURES=$TMPROOT/failures
: >"$FAILURES"
cleanup() {
  chmod -R u+rwX "$TMPROOT" 2>/dev/null
  rm -rf "$TMPROOT" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

section() { printf '\n== %s\n' "$*"; }

# record pass|fail|skip NAME [WHY]: count one result that did not come from a test file.
record() {
  case $1 in
    pass) PASSED=$((PASSED + 1)); echo "PASS $2" ;;
    fail) FAILED=$((FAILED + 1)); echo "FAIL $2: $3"; echo "FAIL $2: $3" >>"$FAILURES" ;;
    skip) SKIPPED=$((SKIPPED + 1)); echo "SKIP $2: $3" ;;
  esac
}

# ---------------------------------------------------------------------------------------
# building

# build_tree DIR [MESON OPTION...]: configure (when needed) and build DIR; status 0 if the
# build produced DIR/cordon.
build_tree() {
  local dir=$1 log=$TMPROOT/build-${1//\//_}.log
  shift
  if [ ! -f "$dir/meson-private/coredata.dat" ] || [ ! -f "$dir/build.ninja" ]; then
    if ! meson setup "$dir" "$@" >"$log" 2>&1; then
      echo "meson setup $dir failed:"
      tail -n 40 "$log"
      return 1
    fi
  elif ! meson configure "$dir" "$@" >"$log" 2>&1; then
    # an existing tree: make sure it still has the options this pass is about
    echo "meson configure $dir failed:"
    tail -n 40 "$log"
    return 1
  fi
  if ! ninja -C "$dir" >"$log" 2>&1; then
    echo "ninja -C $dir failed:"
    grep -E 'error|FAILED' "$log" | head -n 20
    echo "--- last lines:"
    tail -n 30 "$log"
    return 1
  fi
  [ -x "$dir/cordon" ] || { echo "$dir/cordon missing after the build"; return 1; }
}

# ---------------------------------------------------------------------------------------
# unit tests

# unit_tests BUILD_DIR LABEL: run meson's unit suite and count its TAP test cases.
unit_tests() {
  local dir=$1 label=$2 log=$TMPROOT/unit-$2.log rc=0
  section "unit tests ($label: $dir)"
  if meson configure "$dir" 2>/dev/null | grep -Eq '^[[:space:]]*tests[[:space:]]+false'; then
    record skip "unit [$label]" "the unit tests are disabled in $dir (-Dtests=false); enable them with: meson configure $dir -Dtests=true"
    return
  fi
  # a stale log from an earlier run must not be counted
  rm -f "$dir/meson-logs/testlog.json"
  # --no-rebuild: test what the build step built (the sources may be changing meanwhile)
  meson test -C "$dir" --suite unit --no-rebuild --print-errorlogs >"$log" 2>&1 || rc=$?
  # meson's own summary, for the record
  grep -E '^(Ok|Expected Fail|Fail|Unexpected Pass|Skipped|Timeout): ' "$log" | tr -s ' ' | paste -sd';' - | sed 's/^/meson: /'
  local counts
  counts=$(python3 - "$dir/meson-logs/testlog.json" "$label" "$log" <<'PY'
import json, re, sys
path, label, log = sys.argv[1:4]
p = f = s = 0
lines = []
try:
    entries = [json.loads(l) for l in open(path) if l.strip()]
except OSError:
    entries = []
for e in entries:
    name, result, out = e.get("name", "?"), e.get("result", "?"), e.get("stdout") or ""
    tp = tf = ts = 0
    for line in out.splitlines():
        m = re.match(r"^(not ok|ok)\b\s*(\d*)\s*(?:-\s*)?(.*)$", line)
        if not m:
            continue
        desc = m.group(3)
        if re.search(r"#\s*skip", desc, re.I):
            ts += 1
            lines.append(f"SKIP unit/{name}: {desc} [{label}]")
        elif m.group(1) == "ok" or re.search(r"#\s*todo", desc, re.I):
            tp += 1
        else:
            tf += 1
            lines.append(f"FAIL unit/{name}: not ok {m.group(2)} {desc} [{label}]")
    if result in ("FAIL", "ERROR", "TIMEOUT", "UNEXPECTEDPASS") and tf == 0:
        tf += 1
        lines.append(f"FAIL unit/{name}: meson result {result} (exit status {e.get('returncode')}) [{label}]")
    if tp + tf + ts == 0:
        if result == "SKIP":
            ts += 1
            lines.append(f"SKIP unit/{name}: skipped by meson [{label}]")
        elif result in ("OK", "EXPECTEDFAIL"):
            tp += 1
    lines.append(f"# unit/{name} [{label}]: {result}, {tp} passed, {tf} failed, {ts} skipped")
    p, f, s = p + tp, f + tf, s + ts
if not entries:
    f += 1
    lines.append(f"FAIL unit [{label}]: meson test ran no test (see its output)")
for l in lines:
    print(l)
print(f"COUNTS {p} {f} {s}")
PY
)
  printf '%s\n' "$counts" | grep -v '^COUNTS '
  printf '%s\n' "$counts" | grep '^FAIL ' >>"$FAILURES"
  local c
  c=$(printf '%s\n' "$counts" | sed -n 's/^COUNTS //p')
  if grep -q '^FAIL unit \[' <<<"$counts"; then
    tail -n 20 "$log"
  fi
  if [ -z "$c" ]; then
    record fail "unit [$label]" "could not parse meson's test log (meson exit status $rc)"
    tail -n 30 "$log"
    return
  fi
  read -r p f s <<<"$c"
  PASSED=$((PASSED + p))
  FAILED=$((FAILED + f))
  SKIPPED=$((SKIPPED + s))
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    record fail "unit [$label]" "meson test exited with status $rc"
    tail -n 30 "$log"
  elif [ "$f" -ne 0 ]; then
    echo "--- meson test output (failures):"
    grep -E -A12 '(not ok|^[0-9]+/[0-9]+ .*(FAIL|ERROR|TIMEOUT))' "$log" | head -n 80
  fi
}

# ---------------------------------------------------------------------------------------
# end-to-end tests

# The end-to-end files: tests/e2e/test_*.sh, then the escape tests tests/escape/test_*.sh
# (built on the same lib.sh), as paths relative to tests/.
E2E_FILES=()
for f in "$REPO"/tests/e2e/test_*.sh "$REPO"/tests/escape/test_*.sh; do
  [ -e "$f" ] || continue
  rel=${f#"$REPO"/tests/}
  if [ -n "$FILTER" ] && [[ $rel != *$FILTER* ]]; then continue; fi
  E2E_FILES+=("$rel")
done
# Faults and load (tests/stress/test_*.sh, same lib.sh): the default pass only.
STRESS_FILES=()
for f in "$REPO"/tests/stress/test_*.sh; do
  [ -e "$f" ] || continue
  rel=${f#"$REPO"/tests/}
  if [ -n "$FILTER" ] && [[ $rel != *$FILTER* ]]; then continue; fi
  STRESS_FILES+=("$rel")
done

can_switch_user() {
  [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1
}

as_unpriv() {
  setpriv --reuid=$UNPRIV_UID --regid=$UNPRIV_GID --clear-groups --inh-caps=-all "$@"
}

# e2e_pass LABEL CORDON_BINARY [VAR=VALUE...]: run every selected e2e file as root and as
# the unprivileged user (when this script runs as root; otherwise once, as the caller).
e2e_pass() {
  local label=$1 bin=$2
  shift 2
  if [ ${#E2E_FILES[@]} -eq 0 ] && { [ "$label" != default ] || [ ${#STRESS_FILES[@]} -eq 0 ]; }; then
    record skip "e2e [$label]" "no e2e test file matches --filter '$FILTER'"
    return
  fi
  if [ "$(id -u)" -eq 0 ]; then
    e2e_identity "$label" "$bin" 0 "$@"
    if can_switch_user; then
      e2e_identity "$label" "$bin" "$UNPRIV_UID" "$@"
    else
      record skip "e2e [$label, unprivileged]" "setpriv not found: cannot switch to uid $UNPRIV_UID"
    fi
  else
    record skip "e2e [$label, root]" "run-all.sh is not running as root: the root pass is skipped"
    e2e_identity "$label" "$bin" "$(id -u)" "$@"
  fi
}

e2e_identity() {
  local label=$1 bin=$2 uid=$3
  shift 3
  local who="root"
  [ "$uid" -ne 0 ] && who="uid $uid"
  section "e2e tests ($label, $who)"
  local base=$TMPROOT/$label-u$uid
  local home=$base/home tmp=$base/tmp tests_dir=$REPO/tests
  mkdir -p "$home" "$tmp"
  chmod 0755 "$base" "$home" "$tmp"
  # Every test must be able to run the binary and read the tests as the unprivileged user
  # (some switch to it themselves, even in the root pass); when the checkout is not
  # reachable for it (a clone in a private home, say), use world-readable copies.
  if can_switch_user && ! as_unpriv test -r "$tests_dir/e2e/lib.sh" -a -x "$bin" 2>/dev/null; then
    mkdir -p "$base/copy/tests" "$base/copy/bin"
    cp -r "$tests_dir/e2e" "$base/copy/tests/"
    [ -d "$tests_dir/escape" ] && cp -r "$tests_dir/escape" "$base/copy/tests/"
    [ -d "$tests_dir/stress" ] && cp -r "$tests_dir/stress" "$base/copy/tests/"
    cp "$bin" "$base/copy/bin/cordon"
    chmod -R a+rX "$base/copy"
    tests_dir=$base/copy/tests
    bin=$base/copy/bin/cordon
    echo "(the checkout is not readable by uid $UNPRIV_UID: using copies under $base/copy)"
  fi
  local runner=()
  if [ "$uid" -ne "$(id -u)" ]; then
    chown -R "$uid:$UNPRIV_GID" "$base"
    runner=(setpriv --reuid="$uid" --regid="$UNPRIV_GID" --clear-groups --inh-caps=-all)
  fi
  local f log rc p fl s
  local files=("${E2E_FILES[@]}")
  # faults and load: once per identity, against the default build (sanitizers would
  # only slow the 1,000 runs down)
  [ "$label" = default ] && files+=("${STRESS_FILES[@]}")
  for f in "${files[@]}"; do
    log=$base/$(basename "$f" .sh).${f%%/*}.log
    rc=0
    (
      cd "$tmp" &&
        timeout -k 5 "$FILE_TIMEOUT" "${runner[@]}" env -i \
          PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
          HOME="$home" LANG=C.UTF-8 TERM=dumb \
          CORDON="$bin" CORDON_TEST_TMP="$tmp" CORDON_TEST_LABEL="${label#default}" \
          "$@" bash "$tests_dir/$f" </dev/null
    ) 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    p=$(grep -c '^PASS ' "$log")
    fl=$(grep -c '^FAIL ' "$log")
    s=$(grep -c '^SKIP ' "$log")
    PASSED=$((PASSED + p))
    FAILED=$((FAILED + fl))
    SKIPPED=$((SKIPPED + s))
    grep '^FAIL ' "$log" >>"$FAILURES"
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      record fail "$f [$who, $label]" "the test file did not finish within ${FILE_TIMEOUT}s"
    elif [ "$rc" -ne 0 ] && [ "$fl" -eq 0 ]; then
      record fail "$f [$who, $label]" "the test file exited with status $rc without reporting a failure"
    elif [ $((p + fl + s)) -eq 0 ]; then
      record fail "$f [$who, $label]" "the test file reported no results"
    fi
  done
}

# ---------------------------------------------------------------------------------------

section "bootstrap"
BUILD_OK=1
if ./bootstrap.sh; then
  echo "bootstrap: ok ($(./build/cordon --version 2>&1 | head -n 1))"
else
  BUILD_OK=0
  record fail "bootstrap" "./bootstrap.sh failed (see above): nothing can be tested"
fi

if [ "$BUILD_OK" = 1 ]; then
  unit_tests build default
  e2e_pass default "$REPO/build/cordon"
else
  record skip "unit+e2e [default]" "not run: the build failed"
fi

# boundary_pass: the CLI linked against libcordon.so (-Dcli_shared=true), which exports only
# include/cordon.h's functions: a CLI that reaches past the public header does not link.
boundary_pass() {
  section "boundary build (build-shared: the CLI on libcordon.so)"
  if ! build_tree build-shared -Dcli_shared=true -Dstatic_cli=false -Dtests=false; then
    record fail "boundary" "the CLI does not build against libcordon.so alone (see above)"
    return
  fi
  if ! ldd build-shared/cordon 2>/dev/null | grep -q 'libcordon\.so'; then
    record fail "boundary" "build-shared/cordon is not linked against libcordon.so"
  elif (cd / && "$REPO/build-shared/cordon" run --no-workspace -- true); then
    record pass "boundary: build-shared/cordon (on libcordon.so) runs a command"
  else
    record fail "boundary" "build-shared/cordon run --no-workspace -- true failed"
  fi
}
[ "$BUILD_OK" = 1 ] && boundary_pass

if [ "$QUICK" = 1 ]; then
  section "sanitizer pass skipped (--quick)"
elif [ "$BUILD_OK" = 1 ]; then
  section "sanitizer build (build-asan)"
  if build_tree build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dstatic_cli=false; then
    echo "build-asan: ok"
    export ASAN_OPTIONS=$SAN_ASAN_OPTIONS UBSAN_OPTIONS=$SAN_UBSAN_OPTIONS
    unit_tests build-asan asan
    e2e_pass asan "$REPO/build-asan/cordon" ASAN_OPTIONS="$SAN_ASAN_OPTIONS" UBSAN_OPTIONS="$SAN_UBSAN_OPTIONS"
    unset ASAN_OPTIONS UBSAN_OPTIONS
  else
    record fail "build-asan" "the sanitizer build failed (see above)"
  fi
fi

# valgrind_pass: memcheck over the smoke paths (tests/valgrind/smoke.sh), with a dynamically
# linked, unsanitized build (valgrind cannot follow a static glibc's allocator).
valgrind_pass() {
  local log=$TMPROOT/valgrind.log
  section "valgrind memcheck (build-vg)"
  if [ -n "$FILTER" ]; then
    record skip "valgrind" "not run with --filter"
    return
  fi
  if ! build_tree build-vg -Dstatic_cli=false -Dtests=false; then
    record fail "build-vg" "the build for valgrind failed (see above)"
    return
  fi
  bash tests/valgrind/smoke.sh "$REPO/build-vg/cordon" 2>&1 | tee "$log"
  local p fl s
  p=$(grep -c '^PASS ' "$log")
  fl=$(grep -c '^FAIL ' "$log")
  s=$(grep -c '^SKIP ' "$log")
  PASSED=$((PASSED + p))
  FAILED=$((FAILED + fl))
  SKIPPED=$((SKIPPED + s))
  grep '^FAIL ' "$log" >>"$FAILURES"
}

if [ "$QUICK" = 1 ]; then
  section "valgrind pass skipped (--quick)"
elif [ "$BUILD_OK" = 1 ]; then
  valgrind_pass
fi

# fuzz_pass: fuzz/run.sh prints PASS/FAIL/SKIP lines of its own, counted here.
fuzz_pass() {
  local secs=${CORDON_FUZZ_SECONDS:-5} log=$TMPROOT/fuzz.log rc
  [ "${CI:-}" = true ] && secs=${CORDON_FUZZ_SECONDS:-60}
  section "fuzzing (fuzz/run.sh $secs: each harness for ${secs}s)"
  if [ -n "$FILTER" ]; then
    record skip "fuzz" "not run with --filter"
    return
  fi
  if ! command -v clang >/dev/null 2>&1; then
    record skip "fuzz" "clang not found: the libFuzzer harnesses were neither built nor run; install clang and libclang-rt-dev (./bootstrap.sh does when CI=true or CORDON_FUZZ=1)"
    return
  fi
  bash fuzz/run.sh "$secs" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  local p fl
  p=$(grep -c '^PASS ' "$log")
  fl=$(grep -c '^FAIL ' "$log")
  PASSED=$((PASSED + p))
  FAILED=$((FAILED + fl))
  grep '^FAIL ' "$log" >>"$FAILURES"
  if [ "$rc" -eq 77 ]; then
    record skip "fuzz" "$(grep -m1 '^SKIP ' "$log" | sed 's/^SKIP fuzz: //')"
  elif [ "$rc" -ne 0 ] && [ "$fl" -eq 0 ]; then
    record fail "fuzz" "fuzz/run.sh exited with status $rc without reporting a failure"
  fi
}

if [ "$QUICK" = 1 ]; then
  section "fuzzing skipped (--quick)"
elif [ "$BUILD_OK" = 1 ]; then
  fuzz_pass
fi

if [ -s "$FAILURES" ]; then
  section "failures"
  cat "$FAILURES"
fi
cleanup
trap - EXIT
echo
echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
[ "$FAILED" -eq 0 ]
