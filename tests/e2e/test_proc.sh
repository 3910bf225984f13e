#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# /proc shows only the sandbox's own processes (a fresh PID namespace); --no-proc hides it.
. "$(dirname "$0")/lib.sh"

t_proc_only_sandbox_processes() {
  crun run -- sh -c 'ls /proc | grep -c "^[0-9]"'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  # sh, ls, grep and at most a small init/supervisor: the host has many more
  [ "$OUT" -ge 1 ] && [ "$OUT" -le 6 ] 2>/dev/null || die "expected a handful of pids in /proc, got '$OUT'"
  local host_count
  host_count=$(ls /proc | grep -c '^[0-9]')
  [ "$host_count" -gt "$OUT" ] || skip_case "the host itself shows only $host_count processes: cannot tell"
}

t_host_process_invisible() {
  local m pid
  m=$(new_mark)
  sleep "30.$m" </dev/null >/dev/null 2>&1 &
  pid=$!
  track_pid "$pid" "$m"
  wait_for_sleepers "$m" 5 >/dev/null || die "could not start the host sleep"
  crun run -- sh -c '
    for f in /proc/[0-9]*/cmdline; do
      c=$(tr "\0" " " 2>/dev/null <"$f")
      case "$c" in "sleep 30.$1"*) echo "host process visible: $c" ;; esac
    done
    [ -e "/proc/$2" ] && [ "$2" -gt 50 ] && echo "host pid $2 visible"
    [ -e "/proc/$3" ] && [ "$3" -gt 50 ] && echo "test shell pid $3 visible"
    exit 0' sh "$m" "$pid" "$$"
  kill -9 "$pid" 2>/dev/null || true
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "host processes seen from inside"
}

t_own_pid_namespace() {
  crun run -- sh -c 'echo $$'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  [ "$OUT" -le 5 ] 2>/dev/null || die "the command's pid inside is '$OUT': not a fresh PID namespace"
  expect_output "ok" run -- sh -c '[ "$(readlink /proc/self)" -le 10 ] && echo ok'
}

t_no_proc() {
  crun run --no-proc -- sh -c '[ -e /proc/self ] && echo "/proc/self exists"; [ -e /proc/1 ] && echo "/proc/1 exists"; [ -d /proc ] && [ -n "$(ls -A /proc)" ] && echo "/proc not empty"; exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "--no-proc"
}

t_proc_sys_not_writable() {
  crun run -- sh -c '(echo 1 >/proc/sys/kernel/ns_last_pid) 2>/dev/null && echo "wrote /proc/sys"; exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "/proc/sys inside"
}

t_no_escape_through_other_processes() {
  # cordon's own processes inside the sandbox (an init, a supervisor) must not lend the
  # command their view or their secrets: no host path through /proc/PID/{root,cwd,fd/N},
  # no variable of cordon's environment through /proc/PID/environ
  export SECRET_TOKEN=hunter2-$RANDOM
  crun run -- sh -c '
    for p in /proc/[0-9]*; do
      [ "$p" = "/proc/$$" ] && continue
      [ "$(cat "$p/stat" 2>/dev/null | cut -d" " -f1)" = "$$" ] && continue
      tr "\0" "\n" 2>/dev/null <"$p/environ" | grep -q "^SECRET_TOKEN=" && echo "SECRET_TOKEN in $p/environ"
      for e in "$p/root" "$p/cwd" "$p"/fd/*; do
        [ -e "$e" ] || continue
        cat "$e$1" 2>/dev/null | grep -q "host secret" && echo "host file readable through $e"
        cat "$e/../outside/secret" 2>/dev/null | grep -q "host secret" && echo "host file readable through $e/.."
      done
    done
    exit 0' sh "$OUTSIDE/secret"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "other processes inside the sandbox"
}

run_case proc_only_sandbox_processes t_proc_only_sandbox_processes
run_case host_process_invisible t_host_process_invisible
run_case own_pid_namespace t_own_pid_namespace
run_case no_proc t_no_proc
run_case no_escape_through_other_processes t_no_escape_through_other_processes
run_case proc_sys_not_writable t_proc_sys_not_writable
finish
