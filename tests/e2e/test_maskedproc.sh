#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# In a container whose /proc is masked (Docker's, Podman's and Kubernetes' default), the
# kernel refuses a fresh /proc in a user namespace; the namespace sandbox keeps the
# container's /proc, read-only with its masks, in a PID namespace of its own
# (sandbox/root.c, doc/kubernetes.md).  Run through tests/masked-proc.sh, which lays
# runc's masks in a mount namespace of the test's own (as root, and around the harness
# as uid 65534).  What the kept /proc shows (the other processes' command lines) is
# asserted as shown, so that the documentation stays true; what stays closed (their
# environment, descriptors, memory, signals) is asserted refused, beside the same reads
# of the command's own processes as positive controls.
. "$(dirname "$0")/lib.sh"
require_cordon

need_masked() {
  [ -n "${CORDON_TEST_MASKED_PROC:-}" ] || skip_case "not under tests/masked-proc.sh: /proc is not masked here"
  crun check --json
  local mode
  mode=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("mode"))')
  [ "$mode" = namespaces-kept-proc ] ||
    skip_case "a fresh /proc is not refused here though /proc is masked (cordon check: mode $mode): nothing to test"
}

# an outside process of the test's own uid, with a secret in its environment
start_sleeper() {
  CORDON_TEST_SECRET=sleeper-secret-42 sleep 600 </dev/null >/dev/null 2>&1 &
  SLEEPER=$!
  trap 'kill $SLEEPER 2>/dev/null || true' EXIT
  [ -r "/proc/$SLEEPER/environ" ] || die "the test cannot read its own sleeper's environment (no positive control)"
  # until the background shell has exec'd sleep (its environment is the shell's before)
  local i
  for i in $(seq 300); do
    grep -qa sleeper-secret-42 "/proc/$SLEEPER/environ" && break
    sleep 0.1
  done
  grep -qa sleeper-secret-42 "/proc/$SLEEPER/environ" || die "the sleeper's environment lacks the secret (no control)"
}

t_check_tells() {
  need_masked
  local doc=$OUT
  [ "$RC" = 0 ] || die "cordon check says the default sandbox does not work here: $(last_run)"
  assert_contains "$doc" '"ok": false' "cordon check --json"
  printf '%s' "$doc" | python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["checks"]["proc"]
assert not p["ok"], p
assert "refuses a fresh /proc" in p["detail"], p
assert "command lines" in p["detail"], p
for fix in ("unmask=/proc/*", "systempaths=unconfined", "procMount: Unmasked"):
    assert fix in p["fix"], (fix, p)
assert "unmask" in d["mode_fix"], d
' || die "cordon check --json does not say what the kept /proc shows and how to unmask it: $doc"
  crun check
  assert_contains "$OUT" "mode: namespaces-kept-proc" "cordon check (text)"
}
run_case check_tells t_check_tells

t_explain_tells() {
  need_masked
  expect_ok explain -- true
  assert_contains "$OUT" "/proc: the kernel refuses a fresh /proc" "cordon explain"
  assert_contains "$OUT" "command lines" "cordon explain"
  expect_ok explain --json -- true
  printf '%s' "$OUT" | python3 -c '
import json, sys
k = json.load(sys.stdin)["proc_kept"]
assert k and k["shown"] is True and "unmask" in k["fix"], k
' || die "cordon explain --json has no proc_kept: $(printf '%s' "$OUT" | head -c 400)"
}
run_case explain_tells t_explain_tells

t_runs_and_reports() {
  need_masked
  expect_output ok run --status-json "$CT/status.json" -- sh -c 'echo ok'
  python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["exit_code"] == 0 and s["isolation"] == "namespaces", s
assert s["proc_kept"] and "command lines" in s["proc_kept"], s
' "$CT/status.json" || die "--status-json does not say the container's /proc was kept: $(cat "$CT/status.json")"
}
run_case runs_and_reports t_runs_and_reports

t_masks_kept_readonly() {
  need_masked
  local masked=""
  for p in /proc/timer_list /proc/keys /proc/kcore /proc/sched_debug; do
    case " $CORDON_TEST_MASKED_PROC " in *" $p "*) masked=$p && break ;; esac
  done
  [ -n "$masked" ] || skip_case "none of the masked files exists here ($CORDON_TEST_MASKED_PROC)"
  # control: the command reads its own status through the kept /proc
  expect_ok run -- sh -c "grep -c '^Pid:' /proc/self/status; cat $masked 2>/dev/null | wc -c; echo x >/proc/self/comm 2>/dev/null && echo comm-written || echo comm-refused; echo 1 >/proc/sys/kernel/ns_last_pid 2>/dev/null && echo sysctl-written || echo sysctl-refused"
  assert_eq "$(printf '%s\n' "$OUT" | sed -n 1p)" 1 "the command's own /proc/self/status"
  assert_eq "$(printf '%s\n' "$OUT" | sed -n 2p | tr -d ' ')" 0 "$masked is still masked (nothing to read) in the sandbox"
  assert_eq "$(printf '%s\n' "$OUT" | sed -n 3p)" comm-refused "the kept /proc is read-only"
  assert_eq "$(printf '%s\n' "$OUT" | sed -n 4p)" sysctl-refused "/proc/sys is read-only"
}
run_case masks_kept_readonly t_masks_kept_readonly

t_own_pid_namespace() {
  need_masked
  start_sleeper
  # the command is PID 2 or so in its namespace; kill names only its own processes
  expect_ok run -- sh -c "sleep 60 & c=\$!; kill \$c && echo own-killed; kill -0 $SLEEPER 2>/dev/null && echo outside-reachable || echo outside-unreachable; echo \$\$"
  assert_contains "$OUT" own-killed "the control: the command signals its own child"
  assert_contains "$OUT" outside-unreachable "a process outside the sandbox is reachable by kill"
  local pid
  pid=$(printf '%s\n' "$OUT" | tail -n1)
  [ "$pid" -lt 10 ] || die "the command is not in a PID namespace of its own (its pid is $pid)"
  kill -0 "$SLEEPER" || die "the sleeper outside died"
}
run_case own_pid_namespace t_own_pid_namespace

t_others_closed() {
  need_masked
  start_sleeper
  cat >"$WS/probe.sh" <<PROBE
tr '\\0' ' ' </proc/$SLEEPER/cmdline; echo
cat /proc/$SLEEPER/environ >/dev/null 2>&1 && echo environ-read || echo environ-refused
readlink /proc/$SLEEPER/fd/0 >/dev/null 2>&1 && echo fd-read || echo fd-refused
head -c1 /proc/$SLEEPER/mem >/dev/null 2>&1 && echo mem-read || echo mem-refused
ls /proc/$SLEEPER/root/ >/dev/null 2>&1 && echo root-read || echo root-refused
echo own-env-\$(CORDON_TEST_MINE=own-secret-7 sh -c 'cat /proc/self/environ' | tr '\\0' '\\n' | grep -c own-secret-7)
readlink /proc/self/fd/1 >/dev/null && echo own-fd-read
PROBE
  expect_ok run -- sh ./probe.sh
  local lines
  lines=$(printf '%s\n' "$OUT")
  assert_contains "$lines" "sleep 600" "the other process's command line (documented as shown)"
  assert_contains "$lines" environ-refused "another process's environment"
  assert_contains "$lines" fd-refused "another process's descriptors"
  assert_contains "$lines" mem-refused "another process's memory"
  assert_contains "$lines" root-refused "another process's root"
  assert_not_contains "$lines" sleeper-secret-42 "the secret leaked"
  assert_contains "$lines" own-env-1 "the control: a process reads its own environment"
  assert_contains "$lines" own-fd-read "the control: the command reads its own descriptors"
}
run_case others_closed t_others_closed

t_creation_control() {
  need_masked
  command -v git >/dev/null || skip_case "git not installed"
  git -C "$WS" init -q
  expect_exit 1 run -- sh -c '
    touch ./top && echo top-ok
    git -c user.email=t@e -c user.name=t commit -q --allow-empty -m m && echo commit-ok
    echo x >.git/hooks/pre-commit 2>/dev/null && echo hook-written
    mkdir .codex 2>/dev/null && echo codex-made
    false'
  assert_contains "$OUT" top-ok "creating at the top of the workspace"
  assert_contains "$OUT" commit-ok "git commit"
  assert_not_contains "$OUT" hook-written "a git hook was written"
  assert_not_contains "$OUT" codex-made ".codex was created"
  assert_absent "$WS/.codex"
  assert_absent "$WS/.git/hooks/pre-commit"
  assert_exists "$WS/top"
  assert_contains "$ERR" "refused" "the refusals are reported"
}
run_case creation_control t_creation_control

t_threads() {
  need_masked
  command -v python3 >/dev/null || skip_case "python3 not installed"
  # the creation control names a thread other than the leader in the kept /proc: by its
  # pidfd (PIDFD_THREAD, Linux 6.9); before, such a thread's creations are refused
  expect_ok run -- python3 -c '
import threading, os
out = []
def work():
    try:
        open("made-by-thread", "w").close(); out.append("made")
    except OSError as e:
        out.append("refused %s" % e.errno)
    try:
        os.mkdir(".codex"); out.append("codex-made")
    except OSError as e:
        out.append("codex-refused")
t = threading.Thread(target=work); t.start(); t.join()
print(" ".join(out))'
  case $(uname -r) in
    [0-5].* | 6.[0-8].* | 6.[0-8]-*) assert_contains "$OUT" codex-refused "a thread created .codex" ;;
    *)
      assert_eq "$OUT" "made codex-refused" "a thread's creations"
      assert_exists "$WS/made-by-thread"
      ;;
  esac
  assert_absent "$WS/.codex"
}
run_case threads t_threads

t_no_proc() {
  need_masked
  expect_output "none" run --no-proc --status-json "$CT/status.json" -- sh -c 'ls /proc 2>/dev/null | head -1 | grep . || echo none'
  python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["proc_kept"] and "--no-proc" in s["proc_kept"], s
' "$CT/status.json" || die "--status-json does not say the supervisor uses the container's /proc: $(cat "$CT/status.json")"
  # the creation control still works (it reads the kept /proc)
  expect_exit 1 run --no-proc -- mkdir .codex
  assert_absent "$WS/.codex"
}
run_case no_proc t_no_proc

t_session() {
  need_masked
  # a session's PID 1 builds the same root once; its commands' creations go through the
  # same translated /proc
  local s="mp$$r$RANDOM"
  timeout -k 3 "$WATCHDOG" "$CORDON" session start "$s" --idle-timeout 120 >"$CT/sout" 2>"$CT/serr" </dev/null ||
    die "cordon session start failed: $(head -c 400 "$CT/serr")"
  expect_output in-session session exec "$s" -- sh -c 'touch ./from-session && echo in-session'
  expect_exit 1 session exec "$s" -- mkdir .codex
  "$CORDON" session stop "$s" >/dev/null 2>&1 || true
  assert_exists "$WS/from-session"
  assert_absent "$WS/.codex"
}
run_case session t_session

finish
