#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Process lifetime and confinement: what the command leaves behind dies with it; killing
# cordon takes the sandbox down; the command runs with the caller's uid, no capabilities,
# no_new_privs, seccomp, in its own session.
. "$(dirname "$0")/lib.sh"

# no_sleepers_now MARK WHAT: no `sleep N.MARK` may be alive now that cordon returned.
no_sleepers_now() {
  local left
  left=$(find_sleepers "$1")
  if [ -n "$left" ]; then
    local later="and still alive 2s later"
    wait_no_sleepers "$1" 2 && later="gone only some time later"
    reap_sleepers "$1"
    die "$2: process(es) $(echo $left) still alive right after cordon returned ($later)"
  fi
}

t_background_killed_on_exit() {
  local m
  m=$(new_mark)
  expect_output "started" run -- sh -c 'sleep "1000.$1" </dev/null >/dev/null 2>&1 & echo started' sh "$m"
  no_sleepers_now "$m" "a background process left by the command"
}

t_daemon_killed_on_exit() {
  local m
  m=$(new_mark)
  # double fork, new session, SIGTERM and SIGHUP ignored: still must not survive
  expect_ok run -- sh -c '(setsid sh -c "trap \"\" TERM HUP INT; exec sleep 1000.$1" </dev/null >/dev/null 2>&1 &) ; sleep 0.2' sh "$m"
  no_sleepers_now "$m" "a daemonized process (setsid, SIGTERM ignored)"
}

t_background_holding_stdout() {
  # a background process keeps the sandbox's stdout open: cordon must still return, and
  # whoever reads its output must see EOF
  local m out start end
  m=$(new_mark)
  start=$(date +%s%N)
  out=$(timeout -k 2 20 "$CORDON" run -- sh -c 'sleep "1000.$1" & echo hi' sh "$m" 2>"$ERRF" </dev/null | cat) || true
  end=$(date +%s%N)
  local ms=$(((end - start) / 1000000))
  check_sanitizer "$ERRF" "cordon run (background holding stdout)"
  [ "$ms" -lt 10000 ] || { reap_sleepers "$m"; die "reading cordon's output through a pipe took ${ms}ms: the background process kept the pipe open"; }
  assert_eq "$out" "hi" "output through a pipe"
  no_sleepers_now "$m" "a background process holding stdout"
}

# start_cordon_bg MARK CMD...: start cordon in the background running CMD; sets CPID.
start_cordon_bg() {
  local m=$1
  shift
  "$CORDON" run -- "$@" </dev/null >"$CT/bg.out" 2>"$CT/bg.err" &
  CPID=$!
  track_pid "$CPID" "$m"
  wait_for_sleepers "$m" 10 >/dev/null || {
    kill -9 "$CPID" 2>/dev/null || true
    die "the sandboxed sleep never appeared: $(head -c 300 "$CT/bg.err" | _one_line)"
  }
}

t_kill9_cordon_kills_sandbox() {
  local m
  m=$(new_mark)
  start_cordon_bg "$m" sleep "1000.$m"
  kill -9 "$CPID"
  wait "$CPID" 2>/dev/null || true
  if ! wait_no_sleepers "$m" 2; then
    local left
    left=$(find_sleepers "$m")
    reap_sleepers "$m"
    die "kill -9 of cordon (pid $CPID): the sandboxed sleep (pid $(echo $left)) was still alive 2s later"
  fi
}

t_kill9_cordon_kills_all() {
  local m
  m=$(new_mark)
  start_cordon_bg "$m" sh -c 'sleep "1000.$1" & (trap "" TERM HUP; exec sleep "1000.$1") & sleep "1000.$1"; wait' sh "$m"
  local i n=0
  for ((i = 0; i < 40; i++)); do
    n=$(find_sleepers "$m" | wc -l)
    [ "$n" -ge 3 ] && break
    sleep 0.05
  done
  [ "$n" -ge 3 ] || die "expected 3 sandboxed sleeps, saw $n"
  kill -9 "$CPID"
  wait "$CPID" 2>/dev/null || true
  if ! wait_no_sleepers "$m" 2; then
    local left
    left=$(find_sleepers "$m")
    reap_sleepers "$m"
    die "kill -9 of cordon: $(echo "$left" | wc -l) sandboxed process(es) still alive 2s later"
  fi
}

t_term_cordon_kills_sandbox() {
  local m
  m=$(new_mark)
  # cordon may die of it or forward it; either way both must be gone soon
  start_cordon_bg "$m" sleep "1000.$m"
  kill -TERM "$CPID"
  local rc=0 i
  for ((i = 0; i < 60; i++)); do
    kill -0 "$CPID" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$CPID" 2>/dev/null; then
    kill -9 "$CPID" 2>/dev/null || true
    wait "$CPID" 2>/dev/null || true
    reap_sleepers "$m"
    die "cordon was still running 3s after SIGTERM"
  fi
  wait "$CPID" 2>/dev/null || rc=$?
  check_sanitizer "$CT/bg.err" "cordon after SIGTERM"
  if ! wait_no_sleepers "$m" 2; then
    reap_sleepers "$m"
    die "SIGTERM to cordon: cordon exited ($rc) but the sandboxed sleep was still alive 2s later"
  fi
}

t_runs_as_caller_confined() {
  crun run -- cat /proc/self/status
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  local field want got bad=""
  for field in Uid Gid; do
    got=$(printf '%s\n' "$OUT" | sed -n "s/^$field:[[:space:]]*//p" | tr -s '[:space:]' ' ' | sed 's/ $//')
    if [ $field = Uid ]; then want="$MY_UID $MY_UID $MY_UID $MY_UID"; else want="$MY_GID $MY_GID $MY_GID $MY_GID"; fi
    [ "$got" = "$want" ] || bad+=" $field='$got' (want '$want')"
  done
  for field in CapInh CapPrm CapEff CapAmb; do
    got=$(printf '%s\n' "$OUT" | sed -n "s/^$field:[[:space:]]*//p")
    [ "$got" = 0000000000000000 ] || bad+=" $field=$got"
  done
  got=$(printf '%s\n' "$OUT" | sed -n 's/^NoNewPrivs:[[:space:]]*//p')
  [ "$got" = 1 ] || bad+=" NoNewPrivs=$got"
  got=$(printf '%s\n' "$OUT" | sed -n 's/^Seccomp:[[:space:]]*//p')
  [ "$got" = 2 ] || bad+=" Seccomp=$got (want 2: filter)"
  [ -z "$bad" ] || die "confinement of the command:$bad"
}

t_new_session() {
  # the session leader must be inside the sandbox (a leader outside the PID namespace
  # reads as session 0), and the command has no controlling terminal
  crun run -- sh -c 'set -- $(cat /proc/self/stat); echo "sid=$6 tty=$7"'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  case $OUT in
    "sid=0 "*) die "the command is not in a new session inside the sandbox ($OUT)" ;;
    *" tty=0") ;;
    *) die "unexpected session/tty: $OUT" ;;
  esac
}

t_stdin_stdout_stderr() {
  printf 'line one\nline two\n' >"$CT/input"
  CRUN_STDIN=$CT/input crun run -- sh -c 'cat; echo to-stderr >&2'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "line one
line two" "stdin copied to stdout"
  assert_contains "$ERR" "to-stderr" "the command's stderr"
}

run_case background_killed_on_exit t_background_killed_on_exit
run_case daemon_killed_on_exit t_daemon_killed_on_exit
run_case background_holding_stdout t_background_holding_stdout
run_case kill9_cordon_kills_sandbox t_kill9_cordon_kills_sandbox
run_case kill9_cordon_kills_all t_kill9_cordon_kills_all
run_case term_cordon_kills_sandbox t_term_cordon_kills_sandbox
run_case runs_as_caller_confined t_runs_as_caller_confined
run_case new_session t_new_session
run_case stdin_stdout_stderr t_stdin_stdout_stderr
finish
