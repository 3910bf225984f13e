#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Build cordon's libFuzzer harnesses (clang, ASan + UBSan) and run each for SECONDS.
#
# usage: [CORDON_FUZZ_JOBS=N] fuzz/run.sh [SECONDS] [HARNESS...]
#   SECONDS   how long each harness runs (default 60)
#   HARNESS   fuzz_cli_args, fuzz_settings, fuzz_glob, fuzz_http, fuzz_socks, fuzz_dns, fuzz_codex,
#             fuzz_sess_request (default: all)
#
# Builds in build-fuzz/ (CORDON_FUZZ_BUILD overrides) with
#   CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Dstatic_cli=false
# Each harness starts from its seed corpus in fuzz/corpus/HARNESS/ plus what earlier runs
# found (build-fuzz/corpus/HARNESS/; the repository's seeds are never written to).
# Prints one line per harness, which tests/run-all.sh counts:
#   PASS fuzz/HARNESS: N inputs in S s (...)
#   FAIL fuzz/HARNESS: <why>; the input that crashed is kept under build-fuzz/artifacts/
# Exits 0 when no harness crashed, 1 when one did, 77 when clang is missing.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
SECONDS_EACH=${1:-60}
shift || true
case $SECONDS_EACH in
  '' | *[!0-9]*) echo "fuzz/run.sh: SECONDS must be a whole number, not '$SECONDS_EACH'" >&2; exit 2 ;;
esac
HARNESSES=("$@")
[ ${#HARNESSES[@]} -gt 0 ] || HARNESSES=(fuzz_cli_args fuzz_settings fuzz_glob fuzz_http fuzz_socks fuzz_dns fuzz_codex fuzz_sess_request)
BUILD=${CORDON_FUZZ_BUILD:-build-fuzz}

if ! command -v clang >/dev/null 2>&1; then
  echo "SKIP fuzz: clang not found; install clang and libclang-rt-dev (./bootstrap.sh does when CI=true or CORDON_FUZZ=1)"
  exit 77
fi

log=$(mktemp "${TMPDIR:-/tmp}/cordon-fuzz-build.XXXXXX")
trap 'rm -f "$log"' EXIT
# Unit tests off: they are built and run by the other passes, and need not compile with
# clang's stricter warnings to fuzz.
opts=(-Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false -Dstatic_cli=false -Dtests=false)
if [ ! -f "$BUILD/meson-private/coredata.dat" ] || [ ! -f "$BUILD/build.ninja" ]; then
  if ! CC=clang meson setup "$BUILD" "${opts[@]}" >"$log" 2>&1; then
    echo "FAIL fuzz/build: CC=clang meson setup $BUILD ${opts[*]} failed:"
    tail -n 30 "$log"
    exit 1
  fi
elif ! meson configure "$BUILD" "${opts[@]}" >"$log" 2>&1; then
  echo "FAIL fuzz/build: meson configure $BUILD failed:"
  tail -n 30 "$log"
  exit 1
fi
if ! ninja -C "$BUILD" >"$log" 2>&1; then
  echo "FAIL fuzz/build: ninja -C $BUILD failed:"
  grep -E 'error|FAILED' "$log" | head -n 20
  exit 1
fi

# Leaks and undefined behaviour are crashes too.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
mkdir -p "$BUILD/artifacts"
# run_one HARNESS: its PASS or FAIL line (and, on failure, the log's tail) in
# $BUILD/artifacts/HARNESS.result, printed in order once all have run.
run_one() {
  local h=$1 bin found out start rc took runs cov crash why
  bin=$BUILD/fuzz/$h
  if [ ! -x "$bin" ]; then
    echo "FAIL fuzz/$h: no such harness ($bin)"
    return
  fi
  found=$BUILD/corpus/$h
  mkdir -p "$found"
  out=$BUILD/artifacts/$h.log
  start=$(date +%s)
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: a leak that grows is found.
  "$bin" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2560 -print_final_stats=1 \
    -artifact_prefix="$BUILD/artifacts/$h-" "$found" "fuzz/corpus/$h" >"$out" 2>&1
  rc=$?
  took=$(($(date +%s) - start))
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out" | tail -n 1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$out" | tail -n 1)
  if [ "$rc" -eq 0 ]; then
    echo "PASS fuzz/$h: ${runs:-?} inputs in ${took}s (${cov:-no coverage line}; corpus $(ls "$found" | wc -l) + $(ls "fuzz/corpus/$h" | wc -l) seeds)"
  else
    crash=$(grep -oE "Test unit written to [^ ]+" "$out" | tail -n 1 | sed 's/Test unit written to //')
    why=$(grep -m1 -E 'ERROR: |runtime error|SUMMARY|Trap|says|without|changed|accepted|does not' "$out" || true)
    echo "FAIL fuzz/$h: exit $rc after ${took}s: ${why:-see $out}; input: ${crash:-none written}; reproduce: $bin ${crash:-<input>}"
    tail -n 40 "$out"
  fi
}
# CORDON_FUZZ_JOBS harnesses at a time (default 1; tests/run-all.sh runs two under CI=true:
# each still runs SECONDS, the pass takes about half as long)
jobs_max=${CORDON_FUZZ_JOBS:-1}
case $jobs_max in '' | *[!0-9]* | 0) echo "fuzz/run.sh: CORDON_FUZZ_JOBS must be a number above 0, not '$jobs_max'" >&2; exit 2 ;; esac
for h in "${HARNESSES[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
  run_one "$h" >"$BUILD/artifacts/$h.result" 2>&1 &
done
wait
failed=0
for h in "${HARNESSES[@]}"; do
  cat "$BUILD/artifacts/$h.result"
  grep -q '^FAIL ' "$BUILD/artifacts/$h.result" && failed=1
done
exit $failed
