#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cordon's whole test suite. Every test is a `meson test` (tests/meson.build: the unit
# tests, and as root and as uid 65534 the end-to-end, escape, stress, library and Python
# tests); this script runs them in each build and adds what is not a meson test:
#   1. build/ (the default build): meson test
#   2. build-shared/: the CLI on libcordon.so alone (the boundary); meson test
#   3. unless --quick: build-asan/ (ASan+UBSan): meson test (all but the stress suite)
#   4. unless --quick: valgrind memcheck over the smoke paths (tests/valgrind/smoke.sh)
#   5. unless --quick: each libFuzzer harness (fuzz/run.sh, two at a time) for 60 s when CI=true, 5 s
#      otherwise (CORDON_FUZZ_SECONDS overrides); skipped, loudly, without clang
#   7. the container matrix (tests/containers/matrix.sh: cordon in Podman containers of a
#      debootstrapped Debian 12 image, one row per way of running them), beside the
#      default build's tests; it builds the image (debootstrap, cached in
#      /var/cache/cordon-ci) only when CI=true or CORDON_CONTAINERS=1, and otherwise SKIPs,
#      loudly, where none is cached
#   6. unless --quick: lint: clang's static analyzer over src/ (tests/analyze.sh: a report
#      not in tests/analyze-known.txt fails), cppcheck (tests/cppcheck.sh:
#      tests/cppcheck-known.txt), no file-level circles in src/ (tests/circles.sh: one not
#      in tests/circles-known.txt fails) and the format check (tests/format.sh: every C
#      file as .clang-format says); skipped, loudly, without clang,
#      clang-format or cppcheck.  The lint that needs no clang, tests/refs.sh (comments
#      cite only files the tree has), is a meson test (suite lint) of step 1, --quick included
# It installs nothing: ./bootstrap.sh does (the README's test command runs both).
# Its last line is always "N passed, N failed, N skipped" (every TAP case of every meson
# test, and each check of the other passes); it exits non-zero when anything failed.
#
# usage: tests/run-all.sh [--quick] [--filter PATTERN]
#   --quick           only the default and the boundary builds' tests
#   --filter PATTERN  of the tests that run sandboxes, only those whose name contains
#                     PATTERN (glob allowed), e.g. --filter network, --filter 'escape/*',
#                     --filter /unpriv (`meson test -C build --list` shows the names);
#                     the unit tests always run; valgrind, fuzzing and lint do not
set -uo pipefail

usage() { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; }

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

PASSED=0
FAILED=0
SKIPPED=0

TMPROOT=$(mktemp -d "${TMPDIR:-/tmp}/cordon-tests.XXXXXX") || { echo "run-all: mktemp failed" >&2; exit 2; }
FAILURES=$TMPROOT/failures
: >"$FAILURES"
ANALYZE_PID=""
CONTAINERS_PID=""
cleanup() {
  [ -z "$ANALYZE_PID" ] || kill "$ANALYZE_PID" 2>/dev/null
  [ -z "$CONTAINERS_PID" ] || kill "$CONTAINERS_PID" 2>/dev/null
  rm -rf "$TMPROOT" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

section() { printf '\n== %s\n' "$*"; }

# record pass|fail|skip NAME [WHY]: count one result that is not a meson test's.
record() {
  case $1 in
    pass) PASSED=$((PASSED + 1)); echo "PASS $2" ;;
    fail) FAILED=$((FAILED + 1)); echo "FAIL $2: $3"; echo "FAIL $2: $3" >>"$FAILURES" ;;
    skip) SKIPPED=$((SKIPPED + 1)); echo "SKIP $2: $3" ;;
  esac
}

# count_lines LOG: add the PASS/FAIL/SKIP lines of a pass that prints them (valgrind,
# fuzzing, lint).
count_lines() {
  local p f s
  p=$(grep -c '^PASS ' "$1")
  f=$(grep -c '^FAIL ' "$1")
  s=$(grep -c '^SKIP ' "$1")
  PASSED=$((PASSED + p))
  FAILED=$((FAILED + f))
  SKIPPED=$((SKIPPED + s))
  grep '^FAIL ' "$1" >>"$FAILURES"
}

# build_tree DIR [MESON OPTION...]: configure (when needed) and build DIR; status 0 if the
# build produced DIR/cordon.  Every tree CI builds has -Dwerror=true: warnings are errors
# here, while a distribution's build (meson's default, werror off) does not trip over a
# newer compiler's new warning.
build_tree() {
  local dir=$1 log=$TMPROOT/build-${1//\//_}.log
  shift
  set -- -Dwerror=true "$@"
  if [ ! -f "$dir/meson-private/coredata.dat" ] || [ ! -f "$dir/build.ninja" ]; then
    if ! meson setup "$dir" "$@" >"$log" 2>&1; then
      echo "meson setup $dir failed:"
      tail -n 40 "$log"
      return 1
    fi
  elif [ $# -gt 0 ] && ! meson configure "$dir" "$@" >"$log" 2>&1; then
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

# meson_tests DIR LABEL [MESON TEST OPTION...]: meson test in DIR (with --filter, the unit
# suite and the matching tests); every TAP case of every test counted, every failure and
# skip printed with its reason.
meson_tests() {
  local dir=$1 label=$2 log=$TMPROOT/meson-$2.log rc=0
  shift 2
  section "meson test ($label: $dir)"
  local names=()
  if [ -n "$FILTER" ]; then
    local all n
    all=$(meson test -C "$dir" --no-rebuild --list "$@" 2>/dev/null | sed 's/^.* \/ //')
    while IFS= read -r n; do
      [ -n "$n" ] || continue
      if [[ $n == *$FILTER* ]] || ! [[ $n == */* ]]; then names+=("$n"); fi
    done <<<"$all"
    if [ ${#names[@]} -eq 0 ]; then
      record skip "meson test [$label]" "no test of $dir matches --filter '$FILTER'"
      return
    fi
  fi
  # a stale log from an earlier run must not be counted
  rm -f "$dir/meson-logs/testlog.json"
  # --no-rebuild: test what the build step built (the sources may be changing meanwhile)
  meson test -C "$dir" --no-rebuild --print-errorlogs "$@" "${names[@]}" >"$log" 2>&1 || rc=$?
  # meson's line per test, and its summary
  grep -E '^ *[0-9]+/[0-9]+ ' "$log"
  grep -E '^(Ok|Expected Fail|Fail|Unexpected Pass|Skipped|Timeout): ' "$log" | tr -s ' ' | paste -sd';' - | sed 's/^/meson: /'
  local counts
  counts=$(python3 - "$dir/meson-logs/testlog.json" "$label" <<'PY'
import json, re, sys
path, label = sys.argv[1:3]
p = f = s = 0
lines = []
try:
    entries = [json.loads(l) for l in open(path) if l.strip()]
except OSError:
    entries = []
for e in entries:
    name, result, out = e.get("name", "?"), e.get("result", "?"), e.get("stdout") or ""
    tp = tf = ts = 0
    plan_skip = None
    for line in out.splitlines():
        m = re.match(r"^1\.\.0\s*#\s*skip\S*\s*(.*)$", line, re.I)
        if m:
            plan_skip = m.group(1)
            continue
        m = re.match(r"^(not ok|ok)\b\s*(\d*)\s*(?:-\s*)?(.*)$", line)
        if not m:
            continue
        desc = m.group(3)
        if re.search(r"#\s*skip", desc, re.I):
            ts += 1
            lines.append(f"SKIP {name}: {desc} [{label}]")
        elif m.group(1) == "ok" or re.search(r"#\s*todo", desc, re.I):
            tp += 1
        else:
            tf += 1
            lines.append(f"FAIL {name}: not ok {m.group(2)} {desc} [{label}]")
    if result in ("FAIL", "ERROR", "TIMEOUT", "UNEXPECTEDPASS") and tf == 0:
        tf += 1
        tail = " | ".join(l for l in (e.get("stderr") or "").splitlines()[-3:] if l.strip())
        lines.append(f"FAIL {name}: meson result {result} (exit status {e.get('returncode')}): {tail} [{label}]")
    if tp + tf + ts == 0:
        if plan_skip is not None or result == "SKIP":
            ts += 1
            lines.append(f"SKIP {name}: {plan_skip or 'skipped by meson'} [{label}]")
        elif result in ("OK", "EXPECTEDFAIL"):
            tp += 1
    p, f, s = p + tp, f + tf, s + ts
if not entries:
    f += 1
    lines.append(f"FAIL meson test [{label}]: ran no test (see its output)")
for l in lines:
    print(l)
print(f"COUNTS {p} {f} {s}")
PY
)
  printf '%s\n' "$counts" | grep -v '^COUNTS '
  printf '%s\n' "$counts" | grep '^FAIL ' >>"$FAILURES"
  local c p f s
  c=$(printf '%s\n' "$counts" | sed -n 's/^COUNTS //p')
  if [ -z "$c" ]; then
    record fail "meson test [$label]" "could not read meson's test log (meson exit status $rc)"
    tail -n 30 "$log"
    return
  fi
  read -r p f s <<<"$c"
  PASSED=$((PASSED + p))
  FAILED=$((FAILED + f))
  SKIPPED=$((SKIPPED + s))
  echo "# $label: $p passed, $f failed, $s skipped"
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    record fail "meson test [$label]" "meson test exited with status $rc"
    tail -n 30 "$log"
  elif [ "$f" -ne 0 ]; then
    echo "--- meson test output (failures; all of it in $dir/meson-logs/testlog.txt):"
    grep -E -B2 -A12 '(^not ok|^ *[0-9]+/[0-9]+ .*(FAIL|ERROR|TIMEOUT))' "$log" | head -n 120
  fi
}

# ---------------------------------------------------------------------------------------

section "build (build/)"
BUILD_OK=1
if build_tree build; then
  echo "build: ok ($(./build/cordon --version 2>&1 | head -n 1))"
  # the container matrix beside the default build's tests (mostly waiting on the mirror
  # and on Podman): reported at the end
  if [ -z "$FILTER" ] || [[ containers == *$FILTER* ]]; then
    { time bash tests/containers/matrix.sh --cordon "$REPO/build/cordon"; } >"$TMPROOT/containers.log" 2>&1 &
    CONTAINERS_PID=$!
  fi
  meson_tests build default
else
  BUILD_OK=0
  record fail "build" "the default build failed (see above; ./bootstrap.sh installs what it needs): nothing can be tested"
fi

# The boundary: the CLI linked against libcordon.so (-Dcli_shared=true), which exports
# only include/cordon.h's functions: a CLI that reaches past the public header does not
# link. Its meson test (tests/boundary.sh) runs it.
if [ "$BUILD_OK" = 1 ]; then
  section "boundary build (build-shared: the CLI on libcordon.so)"
  if build_tree build-shared -Dcli_shared=true -Dstatic_cli=false -Dtests=false; then
    meson_tests build-shared boundary
  else
    record fail "boundary" "the CLI does not build against libcordon.so alone (see above)"
  fi
fi

if [ "$QUICK" = 1 ]; then
  section "sanitizer, valgrind, fuzzing and lint passes skipped (--quick)"
elif [ "$BUILD_OK" = 1 ]; then
  section "sanitizer build (build-asan)"
  if build_tree build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dstatic_cli=false; then
    echo "build-asan: ok"
    # (tests/meson.build gives this build's tests the sanitizers' options)
    meson_tests build-asan asan
  else
    record fail "build-asan" "the sanitizer build failed (see above)"
  fi

  # valgrind memcheck over the smoke paths, with a dynamically linked, unsanitized build
  # (valgrind cannot follow a static glibc's allocator).
  section "valgrind memcheck (build-vg)"
  if [ -n "$FILTER" ]; then
    record skip "valgrind" "not run with --filter"
  elif ! build_tree build-vg -Dstatic_cli=false -Dtests=false; then
    record fail "build-vg" "the build for valgrind failed (see above)"
  else
    bash tests/valgrind/smoke.sh "$REPO/build-vg/cordon" 2>&1 | tee "$TMPROOT/valgrind.log"
    count_lines "$TMPROOT/valgrind.log"
  fi

  # the static analyzer (the lint pass below reports it) beside the fuzzers, which keep
  # one CPU busy: one file at a time
  if [ -z "$FILTER" ]; then
    ANALYZE_JOBS=1 bash tests/analyze.sh "$REPO/build" >"$TMPROOT/analyze.log" 2>&1 &
    ANALYZE_PID=$!
  fi

  # the fuzzers: fuzz/run.sh prints PASS/FAIL/SKIP lines of its own
  secs=${CORDON_FUZZ_SECONDS:-5}
  [ "${CI:-}" = true ] && secs=${CORDON_FUZZ_SECONDS:-60}
  section "fuzzing (fuzz/run.sh $secs: each harness for ${secs}s)"
  if [ -n "$FILTER" ]; then
    record skip "fuzz" "not run with --filter"
  elif ! command -v clang >/dev/null 2>&1; then
    record skip "fuzz" "clang not found: the libFuzzer harnesses were neither built nor run; install clang and libclang-rt-dev (./bootstrap.sh does when CI=true or CORDON_FUZZ=1)"
  else
    # two harnesses at a time (each still runs $secs), beside the analyzer
    CORDON_FUZZ_JOBS=${CORDON_FUZZ_JOBS:-2} bash fuzz/run.sh "$secs" 2>&1 | tee "$TMPROOT/fuzz.log"
    rc=${PIPESTATUS[0]}
    count_lines "$TMPROOT/fuzz.log"
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && ! grep -q '^FAIL ' "$TMPROOT/fuzz.log"; then
      record fail "fuzz" "fuzz/run.sh exited with status $rc without reporting a failure"
    fi
  fi
fi

# lint: PASS/FAIL/SKIP lines of their own (exit status 77: the tool is missing, said so)
if [ "$QUICK" = 0 ] && [ "$BUILD_OK" = 1 ]; then
  section "lint (tests/analyze.sh build, tests/cppcheck.sh build, tests/circles.sh build, tests/format.sh)"
  if [ -n "$FILTER" ]; then
    record skip "lint" "not run with --filter"
  else
    for t in analyze cppcheck circles format; do
      rc=0
      if [ "$t" = analyze ]; then
        # started beside the fuzzers (above)
        wait "$ANALYZE_PID" || rc=$?
        ANALYZE_PID=""
      elif [ "$t" = cppcheck ] || [ "$t" = circles ]; then
        bash "tests/$t.sh" "$REPO/build" >"$TMPROOT/$t.log" 2>&1 || rc=$?
      else
        bash "tests/$t.sh" >"$TMPROOT/$t.log" 2>&1 || rc=$?
      fi
      cat "$TMPROOT/$t.log"
      count_lines "$TMPROOT/$t.log"
      if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && ! grep -q '^FAIL ' "$TMPROOT/$t.log"; then
        record fail "$t" "tests/$t.sh exited with status $rc without reporting a failure"
      fi
    done
  fi
fi

if [ -n "$CONTAINERS_PID" ]; then
  section "container matrix (tests/containers/matrix.sh)"
  wait "$CONTAINERS_PID"
  CONTAINERS_PID=""
  cat "$TMPROOT/containers.log"
  # its TAP as PASS/FAIL/SKIP lines (a "# TODO" row is the landlock branch's: counted, not failed)
  awk '/^1\.\.0 *# *SKIP/ { sub(/^1\.\.0 *# *SKIP */, ""); print "SKIP containers: " $0; next }
       /^# SKIP / { sub(/^# SKIP /, ""); print "SKIP containers: " $0; next }
       /^not ok / && !/# TODO/ { sub(/^not ok [0-9]+ - /, ""); print "FAIL containers: " $0; next }
       /^(ok|not ok) / { sub(/^(ok|not ok) [0-9]+ - /, ""); print "PASS containers: " $0 }' \
    "$TMPROOT/containers.log" >"$TMPROOT/containers.counted"
  count_lines "$TMPROOT/containers.counted"
  grep -q '^\(PASS\|FAIL\|SKIP\) ' "$TMPROOT/containers.counted" ||
    record fail "containers" "tests/containers/matrix.sh reported nothing (see its output above)"
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
