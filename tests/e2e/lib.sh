# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Helpers for cordon's end-to-end tests. A test file sources this, defines cases as
# functions and runs each with `run_case NAME FUNCTION`; it ends with `finish`.
#
# The file speaks TAP (what `meson test` reads, tests/meson.build): each case prints exactly
# one line, and `finish` the plan:
#   ok N - <file>/<case> [<identity>]
#   not ok N - <file>/<case> [<identity>]: <why>
#   ok N - <file>/<case> [<identity>] # SKIP <why>
#   1..N
# Anything else a case prints on stdout should start with "# " (a TAP comment).
#
# A case body runs in a subshell under `set -eE`, in a fresh directory layout:
#   $CT        the case's own directory (mode 0755, owned by the identity running the test)
#   $WS        $CT/ws, the current directory: cordon's default workspace
#   $OUTSIDE   $CT/outside, a directory that no rule exposes, holding the file `secret`
#   $HOME      $CT/home, an empty directory (so no case ever touches the real home)
# Any command that fails unguarded fails the case and names the command; `die REASON`
# fails it with a reason, `skip_case REASON` skips it (loudly, with the reason).
#
# Environment:
#   CORDON            the binary under test (default: <repo>/build/cordon)
#   CORDON_TEST_TMP   where to put temporary directories (default: a fresh mktemp -d)
#   CORDON_TEST_LABEL an extra word for the identity shown in results (e.g. "asan")
#   CORDON_TEST_CASES only run cases whose name matches this extended regex

set -u
export LC_ALL=C
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$E2E_DIR/../.." && pwd)
TEST_FILE=$(basename "$0" .sh)
TEST_NAME=${TEST_FILE#test_}

CORDON=${CORDON:-$REPO_ROOT/build/cordon}
case $CORDON in
  /*) ;;
  *) if [ -e "$REPO_ROOT/$CORDON" ]; then CORDON=$REPO_ROOT/$CORDON; else CORDON=$PWD/$CORDON; fi ;;
esac
export CORDON

# The interpreter used inside sandboxes must live under /usr (the default view).
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3 || echo /usr/bin/python3)

MY_UID=$(id -u)
MY_GID=$(id -g)
if [ "$MY_UID" -eq 0 ]; then WHO=root; else WHO="unprivileged uid $MY_UID"; fi
[ -n "${CORDON_TEST_LABEL:-}" ] && WHO="$WHO, $CORDON_TEST_LABEL"

# Seconds after which one cordon invocation is considered hung and killed by the test.
WATCHDOG=${CORDON_TEST_WATCHDOG:-30}

_N_PASS=0 _N_FAIL=0 _N_SKIP=0 _N_CASES=0 _PLANNED=0

if [ -n "${CORDON_TEST_TMP:-}" ]; then
  mkdir -p "$CORDON_TEST_TMP"
  T=$(mktemp -d "$CORDON_TEST_TMP/$TEST_NAME.XXXXXX")
else
  T=$(mktemp -d "/tmp/cordon-e2e-$TEST_NAME.XXXXXX")
fi
chmod 0755 "$T"
# Output of the last cordon run (kept outside the case directory, so that snapshots of the
# case directory only see what cordon and the command did).
OUTF=$T/.out
ERRF=$T/.err

# Kill what the cases started and may have left running: background helpers recorded with
# track_pid (only while their command line still matches), and `sleep N.MARK` processes
# for every marker handed out by new_mark. Always by pid, never by name.
_reap_tracked() {
  local p m match cmd
  if [ -f "$T/.pids" ]; then
    while read -r p match; do
      cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline") || continue
      case $cmd in *"$match"*) kill -9 "$p" 2>/dev/null ;; esac
    done <"$T/.pids"
    rm -f "$T/.pids"
  fi
  if [ -f "$T/.marks" ]; then
    while read -r m; do
      for p in $(find_sleepers "$m"); do kill -9 "$p" 2>/dev/null; done
    done <"$T/.marks"
    rm -f "$T/.marks"
  fi
  if [ -f "$T/.rmdirs" ]; then
    while read -r p; do
      chmod -R u+rwX "$p" 2>/dev/null
      rm -rf "$p"
    done <"$T/.rmdirs"
    rm -f "$T/.rmdirs"
  fi
}

_cleanup() {
  _plan
  _reap_tracked
  # Cases may leave read-only directories behind; make them removable first.
  chmod -R u+rwX "$T" 2>/dev/null
  rm -rf "$T" 2>/dev/null
}
trap _cleanup EXIT

# ------------------------------------------------------------------------------------
# reporting

_one_line() { tr '\n' ' ' | sed 's/[[:space:]]\+/ /g; s/ $//' | cut -c1-400; }

# "#" would start a TAP directive inside a test's name or reason
_tap_text() { _one_line | tr '#' '_'; }
pass() {
  _N_PASS=$((_N_PASS + 1)) _N_CASES=$((_N_CASES + 1))
  echo "ok $_N_CASES - $TEST_NAME/$1 [$WHO]"
}
fail() {
  _N_FAIL=$((_N_FAIL + 1)) _N_CASES=$((_N_CASES + 1))
  echo "not ok $_N_CASES - $TEST_NAME/$(printf '%s' "$1" | _tap_text) [$WHO]: $(printf '%s' "$2" | _tap_text)"
}
skip() {
  _N_SKIP=$((_N_SKIP + 1)) _N_CASES=$((_N_CASES + 1))
  echo "ok $_N_CASES - $TEST_NAME/$1 [$WHO] # SKIP $(printf '%s' "$2" | _one_line)"
}
# The TAP plan, once, last: a file that stops early (an unguarded error outside a case,
# `exit`) still says how many cases it ran, and its exit status tells meson it failed.
_plan() {
  [ "$_PLANNED" = 1 ] && return
  _PLANNED=1
  echo "1..$_N_CASES"
}

# Inside a case: fail it with a reason.
die() {
  printf '%s\n' "$*" >"$T/.reason"
  exit 1
}

# Inside a case: skip it with a reason.
skip_case() {
  printf '%s\n' "$*" >"$T/.reason"
  exit 77
}

_on_err() {
  [ -s "$T/.reason" ] || printf 'unexpected failure (status %s) at line %s: %s\n' "$1" "$2" "$3" >"$T/.reason"
}

# run_case NAME FUNCTION [ARG...]
run_case() {
  local name=$1 fn=$2 rc reason
  shift 2
  if [ -n "${CORDON_TEST_CASES:-}" ] && ! [[ $name =~ $CORDON_TEST_CASES ]]; then
    return 0
  fi
  CASE=$name
  CT=$T/$name
  WS=$CT/ws
  OUTSIDE=$CT/outside
  mkdir -p "$WS" "$OUTSIDE" "$CT/home"
  chmod 0755 "$CT" "$WS" "$OUTSIDE" "$CT/home"
  echo "host secret outside the workspace" >"$OUTSIDE/secret"
  rm -f "$T/.reason"
  (
    set -eE
    trap '_on_err $? $LINENO "$BASH_COMMAND"' ERR
    export HOME=$CT/home
    cd "$WS"
    "$fn" "$@"
  ) </dev/null
  rc=$?
  _reap_tracked
  reason=$(cat "$T/.reason" 2>/dev/null || true)
  case $rc in
    0) pass "$name" ;;
    77) skip "$name" "${reason:-no reason given}" ;;
    *) fail "$name" "${reason:-case exited with status $rc}" ;;
  esac
}

# Print a per-file summary (a comment, not counted) and exit non-zero if a case failed.
finish() {
  echo "# $TEST_FILE [$WHO]: $_N_PASS passed, $_N_FAIL failed, $_N_SKIP skipped"
  _plan
  [ "$_N_FAIL" -eq 0 ]
  exit $?
}

# Stop the whole file before running anything when the binary is missing.
require_cordon() {
  if [ ! -x "$CORDON" ]; then
    fail "binary" "cordon binary $CORDON not found or not executable (build failed?)"
    exit 1
  fi
}

# ------------------------------------------------------------------------------------
# running cordon

# crun ARG...: run cordon with stdin from /dev/null (unless CRUN_STDIN names a file),
# stdout in $OUT (and the file $OUTF), stderr in $ERR (and $ERRF), status in $RC, wall time in
# $ELAPSED_MS. A run that outlives $WATCHDOG seconds is killed and fails the case. A
# sanitizer report on stderr fails the case.
crun() {
  local start end stdin=${CRUN_STDIN:-/dev/null}
  start=$(date +%s%N)
  RC=0
  timeout -k 3 "$WATCHDOG" "$CORDON" "$@" <"$stdin" >"$OUTF" 2>"$ERRF" || RC=$?
  end=$(date +%s%N)
  ELAPSED_MS=$(((end - start) / 1000000))
  OUT=$(cat "$OUTF")
  ERR=$(cat "$ERRF")
  if [ "$ELAPSED_MS" -ge $((WATCHDOG * 1000)) ]; then
    die "cordon $* hung: killed by the test watchdog after ${WATCHDOG}s (stderr: $(head -c 300 "$ERRF"))"
  fi
  check_sanitizer "$ERRF" "cordon $*"
  return 0
}

# check_sanitizer FILE WHAT: fail the case if FILE holds an ASan/LSan/UBSan report.
check_sanitizer() {
  local line
  line=$(grep -m1 -E 'ERROR: (Address|Leak|Memory|Thread)Sanitizer|runtime error:|SUMMARY: UndefinedBehaviorSanitizer|LeakSanitizer has encountered' "$1" || true)
  [ -z "$line" ] || die "sanitizer report from $2: $line"
}

# A short description of the last run for failure messages.
last_run() {
  printf 'status %s; stdout: %s; stderr: %s' "$RC" "$(head -c 300 "$OUTF" | _one_line)" \
    "$(head -c 400 "$ERRF" | _one_line)"
}

# expect_exit CODE ARG...: run cordon ARG... and require exit status CODE.
expect_exit() {
  local code=$1
  shift
  crun "$@"
  [ "$RC" = "$code" ] || die "cordon $(_argstr "$@"): expected exit $code, got $(last_run)"
}

# expect_output EXPECTED ARG...: require exit 0 and stdout exactly EXPECTED.
expect_output() {
  local want=$1
  shift
  crun "$@"
  [ "$RC" = 0 ] || die "cordon $(_argstr "$@"): expected exit 0, got $(last_run)"
  [ "$OUT" = "$want" ] || die "cordon $(_argstr "$@"): expected output '$want', got '$(printf '%s' "$OUT" | _one_line)' (stderr: $(head -c 300 "$ERRF" | _one_line))"
}

# expect_ok ARG...: require exit 0.
expect_ok() { expect_exit 0 "$@"; }

_argstr() {
  local a s=""
  for a in "$@"; do
    case $a in
      *[[:space:]\'\"\$\;\&\|]*) s+=" '$a'" ;;
      *) s+=" $a" ;;
    esac
  done
  printf '%s' "${s# }" | cut -c1-300
}

# ------------------------------------------------------------------------------------
# assertions (all fail the case with a message)

assert_eq() { [ "$1" = "$2" ] || die "${3:-values differ}: expected '$2', got '$(printf '%s' "$1" | _one_line)'"; }
assert_ne() { [ "$1" != "$2" ] || die "${3:-values equal}: got '$1'"; }

assert_contains() {
  case $1 in
    *"$2"*) ;;
    *) die "${3:-missing text}: '$2' not found in '$(printf '%s' "$1" | head -c 400 | _one_line)'" ;;
  esac
}

assert_not_contains() {
  case $1 in
    *"$2"*) die "${3:-unexpected text}: '$2' found in '$(printf '%s' "$1" | head -c 400 | _one_line)'" ;;
    *) ;;
  esac
}

assert_exists() { [ -e "$1" ] || [ -L "$1" ] || die "${2:-expected to exist on the host}: $1"; }
assert_absent() { ! { [ -e "$1" ] || [ -L "$1" ]; } || die "${2:-expected not to exist on the host}: $1"; }

assert_file_content() {
  [ -f "$1" ] || die "${3:-file missing on the host}: $1"
  local got
  got=$(cat "$1")
  [ "$got" = "$2" ] || die "${3:-unexpected content} in $1: expected '$2', got '$(printf '%s' "$got" | _one_line)'"
}

# The stderr of the last run is non-empty and every line of it starts with "cordon: ".
assert_cordon_stderr() {
  [ -s "$ERRF" ] || die "expected a 'cordon: ' message on stderr, got nothing ($(last_run))"
  local bad
  # Sanitizer builds may add ASan's own warning about the sandbox's stack switch (not a
  # report, and not cordon's diagnostic); sanitizer errors are caught by crun.
  bad=$(grep -v -e '^cordon: ' -e '^[[:space:]]*$' -e '^==[0-9]*==WARNING: ASan is ignoring requested __asan_handle_no_return' \
    -e '^False positive error reports may follow$' -e '^For details see https://github.com/google/sanitizers/issues/189$' \
    "$ERRF" | head -n 1 || true)
  [ -z "$bad" ] || die "stderr line does not start with 'cordon: ': '$bad'"
}

# snapshot DIR [strict]: a listing of everything under DIR (type, mode, owner, size, link
# target, content hash; with "strict" also every modification time, so that even an entry
# created and removed again shows), for before/after comparisons.
snapshot() {
  local fmt='%p|%y|%m|%U:%G|%s|%l\n'
  [ "${2:-}" = strict ] && fmt='%p|%y|%m|%U:%G|%s|%l|%T@\n'
  (
    cd "$1" || exit 1
    find . -printf "$fmt" | sort
    find . -type f -print0 | sort -z | xargs -0 -r md5sum
  ) 2>&1
}

# assert_unchanged BEFORE DIR WHAT [strict]: compare snapshot DIR with an earlier one.
assert_unchanged() {
  local now
  now=$(snapshot "$2" "${4:-}")
  if [ "$now" != "$1" ]; then
    die "${3:-host directory changed}: $2 differs: $(diff <(printf '%s\n' "$1") <(printf '%s\n' "$now") | grep '^[<>]' | head -n 6 | _one_line)"
  fi
}

# wait_unchanged BEFORE DIR SECONDS WHAT: like assert_unchanged, but give asynchronous
# clean-up (after a kill -9, say) up to SECONDS to finish first.
wait_unchanged() {
  local i
  for ((i = 0; i < $3 * 10; i++)); do
    [ "$(snapshot "$2")" = "$1" ] && return 0
    sleep 0.1
  done
  assert_unchanged "$1" "$2" "$4 (still, ${3}s later)"
}

# ------------------------------------------------------------------------------------
# processes

# A marker unique to this file and call, usable as the fractional part of a sleep:
# `sleep 1000.$m` is a real 1000-second sleep whose command line no other process has.
new_mark() {
  local m
  m=$((10#$(date +%N)))$BASHPID
  echo "$m" >>"$T/.marks"
  printf '%s\n' "$m"
}

# scratch_outside_tmp: print a new empty directory (mode 0755) outside /tmp, removed when
# the case ends: for views where the sandbox's private /tmp would hide a /tmp path.
scratch_outside_tmp() {
  local d
  d=$(mktemp -d /var/tmp/cordon-e2e.XXXXXX 2>/dev/null) || skip_case "/var/tmp is not writable: no host directory outside /tmp for this case"
  chmod 0755 "$d"
  echo "$d" >>"$T/.rmdirs"
  printf '%s\n' "$d"
}

# track_pid PID MATCH: kill PID when the case ends if its command line still contains MATCH.
track_pid() { echo "$1 $2" >>"$T/.pids"; }

# find_sleepers MARK: host pids of `sleep N.MARK` processes (argv[0] is sleep).
find_sleepers() {
  local p a0 rest
  for p in /proc/[0-9]*; do
    { IFS= read -r -d '' a0 && IFS= read -r -d '' rest; } 2>/dev/null <"$p/cmdline" || continue
    case ${a0##*/} in sleep) ;; *) continue ;; esac
    case $rest in *."$1") echo "${p#/proc/}" ;; esac
  done
}

# wait_for_sleepers MARK SECONDS [N]: wait until N sleepers (default 1) are there; prints
# their pids.
wait_for_sleepers() {
  local i pids want=${3:-1}
  for ((i = 0; i < $2 * 20; i++)); do
    pids=$(find_sleepers "$1")
    [ -n "$pids" ] && [ "$(wc -l <<<"$pids")" -ge "$want" ] && { echo "$pids"; return 0; }
    sleep 0.05
  done
  return 1
}

# wait_no_sleepers MARK SECONDS: wait until no sleeper with MARK is left; status 1 if some
# still are after SECONDS.
wait_no_sleepers() {
  local i
  for ((i = 0; i <= $2 * 20; i++)); do
    [ -z "$(find_sleepers "$1")" ] && return 0
    sleep 0.05
  done
  return 1
}

# Kill (by pid) whatever sleepers with MARK are left, so one failure does not leak.
reap_sleepers() {
  local p
  for p in $(find_sleepers "$1"); do kill -9 "$p" 2>/dev/null || true; done
}

# ------------------------------------------------------------------------------------
# misc

# A host loopback TCP server answering "pong" to each connection; it stops by itself after
# SECONDS (default 30) or 200 connections. Sets SERVER_PORT and SERVER_PID.
start_tcp_server() {
  local secs=${1:-30} portfile=$CT/port.$RANDOM i
  "$PY" -c '
import os, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(16)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.settimeout(0.5)
deadline = time.time() + float(sys.argv[2])
n = 0
while time.time() < deadline and n < 200:
    try:
        c, _ = s.accept()
    except socket.timeout:
        continue
    n += 1
    try:
        c.sendall(b"pong\n")
    finally:
        c.close()
' "$portfile" "$secs" </dev/null >/dev/null 2>"$CT/server.err" &
  SERVER_PID=$!
  track_pid "$SERVER_PID" "$portfile"
  for ((i = 0; i < 100; i++)); do
    [ -s "$portfile" ] && break
    sleep 0.05
  done
  [ -s "$portfile" ] || die "could not start the host test server: $(cat "$CT/server.err")"
  SERVER_PORT=$(cat "$portfile")
}

# Python one-liner: connect to 127.0.0.1:$1, print the first line received or "error: ...".
TCP_CLIENT='
import socket, sys
try:
    c = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3)
    print(c.makefile().readline().strip() or "empty")
except Exception as e:
    print("error:", type(e).__name__, e)
    sys.exit(3)
'

# Run a python snippet on the host (not sandboxed).
host_py() { "$PY" -c "$@"; }

# json_get FILE KEY: print a field of a JSON object as JSON (null, true, 7, "x").
json_get() {
  "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
if sys.argv[2] not in d:
    print("<missing>")
else:
    print(json.dumps(d[sys.argv[2]]))' "$1" "$2"
}

# Shell snippets for use inside the sandbox, as `sh -c "$VISIBLE" sh PATH...`:
# VISIBLE prints each PATH that exists (or is a symlink); WRITABLE creates/overwrites each
# PATH as a file and prints those where that worked; MKDIRS does the same with mkdir.
VISIBLE='for p do if [ -e "$p" ] || [ -L "$p" ]; then echo "$p"; fi; done'
WRITABLE='for p do if (echo written >"$p") 2>/dev/null; then echo "$p"; fi; done'
MKDIRS='for p do if mkdir "$p" 2>/dev/null; then echo "$p"; fi; done'

require_cordon
