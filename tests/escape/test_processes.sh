#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Other processes: ptrace, process_vm_readv, /proc/PID/mem and pidfd_getfd of PID 1 (cordon's
# reaper, which holds cordon's report pipe) and of cordon's own process and the test's shell
# on the host (outside the PID namespace: not even addressable); `kill -9 -1` inside reaches
# no host process. Positive controls: the same calls work on a child of the command's own,
# and kill -9 -1 does kill the command's own background process.
. "$(dirname "$0")/lib.sh"
esc_build ptrace

# with_cordon_pid: make crun's cordon replace @CORDON_PID@ in its arguments with its own
# host pid (a wrapper that execs cordon: same pid).
with_cordon_pid() {
  local wrap=$CT/cordon-pid
  cat >"$wrap" <<WRAP
#!/bin/bash
args=()
for a in "\$@"; do args+=("\${a//@CORDON_PID@/\$\$}"); done
exec "$CORDON" "\${args[@]}"
WRAP
  chmod 0755 "$wrap"
  CORDON=$wrap
}

t_ptrace_pid1() {
  esc_ok -- ptrace
  local l
  for l in attach seize getfd mem vm_readv; do want_ok "control_child_$l"; done
  want_refused pid1_attach EPERM
  want_refused pid1_seize EPERM
  want_refused pid1_vm_readv EPERM
  want_refused pid1_getfd EPERM
  want_refused pid1_mem EACCES EPERM
  want_refused pid1_environ EACCES EPERM EMPTY
}

t_ptrace_pid1_at_start() {
  # the reaper makes itself untraceable right after the command starts: attack at once,
  # many times (before that moment it still holds capabilities the command lacks)
  local i
  for ((i = 0; i < 25; i++)); do
    esc_ok -- ptrace
    want_refused pid1_attach EPERM
    want_refused pid1_seize EPERM
    want_refused pid1_getfd EPERM
    want_refused pid1_mem EACCES EPERM
  done
}

t_host_processes() {
  local m sleeper
  m=$(new_mark)
  sleep "100.$m" &
  sleeper=$!
  with_cordon_pid
  esc_ok -- ptrace @CORDON_PID@ "$$" "$sleeper"
  want_ok control_child_attach
  local p
  p=$(printf '%s\n' "$OUT" | sed -n 's/^host_\([0-9]*\)_kill0 .*/\1/p' | head -n 1)
  [ -n "$p" ] && [ "$p" != "@CORDON_PID@" ] || die "cordon's pid was not passed in ($OUT)"
  for p in $(printf '%s\n' "$OUT" | sed -n 's/^host_\([0-9]*\)_kill0 .*/\1/p'); do
    want_refused "host_${p}_kill0" ESRCH
    want_refused "host_${p}_attach" ESRCH
  done
  kill -0 "$sleeper" 2>/dev/null || die "the host sleeper died"
}

# kill -9 -1, guarded: should the sandbox have no PID namespace, this would kill every
# process the caller may signal; the guard refuses when /proc shows more than a handful.
KILL_ALL='
n=$(ls -d /proc/[0-9]* | wc -l)
if [ "$n" -gt 6 ]; then echo "GUARD: $n processes visible, not killing"; exit 9; fi
sleep 100 & bg=$!
kill -9 -1
wait $bg; echo "own background: $?"
echo survived'

t_kill_all() {
  local m sleeper
  m=$(new_mark)
  sleep "100.$m" &
  sleeper=$!
  crun run -- sh -c "$KILL_ALL"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_not_contains "$OUT" GUARD "the sandbox shows the host's processes"
  assert_contains "$OUT" "survived" "the command itself died"
  # positive control: the signal did reach the sandbox's own processes
  assert_contains "$OUT" "own background: 137" "kill -9 -1 did not kill the command's own background process"
  sleep 0.1
  kill -0 "$sleeper" 2>/dev/null || die "ESCAPE: kill -9 -1 inside the sandbox killed a host process"
  [ -n "$(find_sleepers "$m")" ] || die "ESCAPE: the host sleeper is gone"
}

t_kill_all_base_host() {
  local m sleeper
  m=$(new_mark)
  sleep "100.$m" &
  sleeper=$!
  crun run --base host --network host -- sh -c "$KILL_ALL"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_not_contains "$OUT" GUARD "the sandbox shows the host's processes"
  assert_contains "$OUT" "own background: 137" "kill -9 -1 did not kill the command's own background process"
  sleep 0.1
  kill -0 "$sleeper" 2>/dev/null || die "ESCAPE: kill -9 -1 inside the sandbox killed a host process"
}

run_case ptrace_pid1 t_ptrace_pid1
run_case ptrace_pid1_at_start t_ptrace_pid1_at_start
run_case host_processes t_host_processes
run_case kill_all t_kill_all
run_case kill_all_base_host t_kill_all_base_host
finish
