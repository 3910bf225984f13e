#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The command's terminal (issue 9, item 1): under a terminal, cordon gives the command a
# pty of the sandbox's own (controlling terminal, job control, ^C/^Z/^\, the window size)
# and relays it; cordon's terminal is put back as it was on every way out. Driven by
# ptyrun.py, which plays the person at the terminal (python's pty module).
. "$(dirname "$0")/lib.sh"
require_cordon

PTYRUN=$E2E_DIR/ptyrun.py

# pty STEPS_JSON ARG...: run cordon ARG... on a 30x90 terminal through ptyrun.py;
# $PSTATUS, $POUT (the terminal's output), $PRESTORED (true/false), $PFAILED.
pty() {
  local steps=$1
  shift
  pty_cmd "$steps" "$CORDON" "$@"
}

# pty_cmd STEPS_JSON COMMAND...: the same for any command (a shell that starts cordon).
pty_cmd() {
  local steps=$1
  shift
  timeout -k 3 "$WATCHDOG" "$PY" "$PTYRUN" --rows 30 --cols 90 --timeout 20 "$steps" "$@" >"$OUTF" 2>"$ERRF" ||
    die "ptyrun failed: $(head -c 400 "$ERRF")"
  PSTATUS=$("$PY" -c 'import json,sys; print(json.load(sys.stdin)["status"])' <"$OUTF")
  POUT=$("$PY" -c 'import json,sys; print(json.load(sys.stdin)["output"])' <"$OUTF")
  PRESTORED=$("$PY" -c 'import json,sys; print(str(json.load(sys.stdin)["restored"]).lower())' <"$OUTF")
  PFAILED=$("$PY" -c 'import json,sys; print(json.load(sys.stdin)["failed"] or "")' <"$OUTF")
  check_sanitizer "$OUTF" "cordon under a pty"
}

pty_ok() {
  [ -z "$PFAILED" ] || die "step $PFAILED did not happen; the terminal showed: $(printf '%s' "$POUT" | tail -c 600)"
  [ "$PRESTORED" = true ] || die "cordon's terminal was not restored after the run; output: $(printf '%s' "$POUT" | tail -c 300)"
}

t_default_on_under_a_terminal() {
  pty '[]' run -- sh -c 'tty; stty size; exec 3</dev/tty && echo controlling'
  pty_ok
  assert_eq "$PSTATUS" 0 "exit status"
  assert_contains "$POUT" "/dev/pts/0" "the terminal is the sandbox's own first pty"
  assert_contains "$POUT" "30 90" "the window size of cordon's terminal"
  assert_contains "$POUT" "controlling" "a controlling terminal"
  # --no-tty: the command gets cordon's terminal as it is, without a controlling terminal
  pty '[]' run --no-tty -- sh -c 'test -t 1 && echo stdout-is-a-terminal; exec 3</dev/tty 2>/dev/null && echo controlling; echo end'
  pty_ok
  assert_contains "$POUT" "stdout-is-a-terminal"
  assert_not_contains "$POUT" "controlling" "--no-tty"
  # with Landlock's filesystem rules too, and (where it runs here) without namespaces,
  # on a pty of the host's devpts
  pty '[]' run --no-nested -- sh -c 'stty size; exec 3</dev/tty && echo controlling'
  pty_ok
  assert_contains "$(printf '%s' "$POUT" | tr -d '\r')" "30 90
controlling" "--no-nested"
  crun run --isolation landlock -- true
  if [ "$RC" = 0 ]; then
    pty '[]' run --isolation landlock -- sh -c 'stty size; exec 3</dev/tty && echo controlling'
    pty_ok
    assert_contains "$(printf '%s' "$POUT" | tr -d '\r')" "30 90
controlling" "--isolation landlock"
  fi
  # in the background of its terminal (`cordon run ... &` from a shell) the default is off,
  # so the job runs on instead of stopping at its first look at the terminal
  pty_cmd '[]' /bin/bash -c 'set -m; "$1" run -- sh -c "(exec 3</dev/tty) 2>/dev/null && echo own-tty || echo no-own-tty" & wait' \
    bash "$CORDON"
  assert_contains "$POUT" "no-own-tty" "in the background: no terminal of its own by default"
  # not under a terminal: nothing changes
  expect_output "no terminal" run -- sh -c 'test -t 0 || test -t 1 || echo no terminal'
}

t_job_control() {
  pty '[{"expect":"PROMPT>"},{"send":"sleep 300\r"},{"sleep":0.4},{"send":"\u001a"},{"expect":"Stopped"},
        {"expect":"PROMPT>"},{"send":"jobs\r"},{"expect":"PROMPT>"},{"send":"fg\r"},{"sleep":0.4},{"send":"\u0003"},
        {"expect":"PROMPT>"},{"send":"echo back $?; exit 7\r"}]' \
    run --env 'PS1=PROMPT>' -- bash --norc --noprofile -i
  pty_ok
  assert_eq "$PSTATUS" 7 "bash's exit status"
  assert_not_contains "$POUT" "no job control" "bash -i"
  assert_not_contains "$POUT" "cannot set terminal process group" "bash -i"
  assert_contains "$POUT" "[1]+  Stopped" "^Z stopped the foreground job"
  assert_contains "$POUT" "back 130" "^C ended the foreground job (128+SIGINT), not bash"
  # the positive control: without the terminal of its own, bash has no job control
  pty '[{"expect":"PROMPT>"},{"send":"exit 0\r"}]' run --no-tty --env 'PS1=PROMPT>' -- bash --norc --noprofile -i
  assert_contains "$POUT" "no job control" "bash -i under --no-tty"
}

t_ctrl_c_and_quit_reach_the_foreground() {
  local prog='import os, signal, sys, time
def on(sig, frame):
    os.write(1, b"got " + signal.Signals(sig).name.encode() + b"\n")
    if sig == signal.SIGQUIT: os._exit(5)
signal.signal(signal.SIGINT, on); signal.signal(signal.SIGQUIT, on)
print("ready", flush=True)
while True: time.sleep(0.05)'
  pty '[{"expect":"ready"},{"send":"\u0003"},{"expect":"got SIGINT"},{"send":"\u001c"},{"expect":"got SIGQUIT"}]' \
    run -- "$PY" -c "$prog"
  pty_ok
  assert_eq "$PSTATUS" 5 "exit status"
  # a SIGINT to cordon itself goes to the terminal's foreground job inside (as the
  # terminal would send it), so the shell survives and its job does not
  pty '[{"expect":"PROMPT>"},{"send":"sleep 300\r"},{"sleep":0.5},{"signal":"INT"},
        {"expect":"PROMPT>"},{"send":"echo status $?; exit 3\r"},{"expect":"status 130"}]' \
    run --env 'PS1=PROMPT>' -- bash --norc --noprofile -i
  pty_ok
  assert_eq "$PSTATUS" 3 "bash survived the SIGINT sent to cordon"
}

t_window_size() {
  local prog='import os, signal, time
signal.signal(signal.SIGWINCH, lambda s, f: os.write(1, b"size %d %d\n" % tuple(os.get_terminal_size())))
print("start", *os.get_terminal_size(), flush=True)
time.sleep(30)'
  pty '[{"expect":"start 90 30"},{"resize":[41,132]},{"expect":"size 132 41"},{"signal":"TERM"}]' run -- "$PY" -c "$prog"
  pty_ok
  assert_eq "$PSTATUS" 143 "SIGTERM to cordon reached the command"
}

t_terminal_restored_on_every_exit() {
  # the command killed by SIGKILL
  pty '[]' run -- sh -c 'kill -9 $$'
  pty_ok
  assert_eq "$PSTATUS" 137 "status of a command killed by SIGKILL"
  # cordon ended by a signal it forwards (the command dies of it) and by one it does not
  # (cordon dies of it, its sandbox with it): the terminal is restored either way
  pty '[{"sleep":0.5},{"signal":"TERM"}]' run -- sleep 30
  pty_ok
  assert_eq "$PSTATUS" 143
  pty '[{"sleep":0.5},{"signal":"ALRM"}]' run -- sleep 30
  pty_ok
  assert_eq "$PSTATUS" 142 "cordon killed by SIGALRM"
  # a timeout, and a setup failure
  pty '[]' run --timeout 0.5 -- sleep 30
  pty_ok
  assert_eq "$PSTATUS" 124
  pty '[]' run --chdir /nonexistent-cordon-dir -- true
  pty_ok
  assert_eq "$PSTATUS" 125
}

t_tty_with_piped_input() {
  # --tty forces the terminal: input from a pipe is typed into it, its end is ^D
  printf 'one\ntwo\n' >"$CT/input"
  CRUN_STDIN=$CT/input crun run --tty -- sh -c 'test -t 0 && cat && echo done'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_contains "$OUT" "done" "cat saw the end of its input"
  assert_contains "$(printf '%s' "$OUT" | tr -d '\r')" "one
two" "the input went through the terminal"
}

t_tiocsti_refused_on_its_own_terminal() {
  # TIOCSTI on the command's own terminal: still refused by seccomp
  pty '[]' run -- "$PY" -c 'import fcntl, termios, sys
try:
    fcntl.ioctl(0, termios.TIOCSTI, b"x"); print("injected")
except OSError as e: print("refused", e.errno)'
  pty_ok
  assert_contains "$POUT" "refused 1" "TIOCSTI (EPERM)"
}

t_ctrl_z_reaches_the_callers_shell() {
  # ^Z to a command that is no shell (issue 23): it stops, cordon stops with it, the
  # caller's shell gets its prompt back, and `fg` continues both, as without a sandbox.
  # A shell with job control on the host starts cordon; every step waits for what the
  # terminal shows, never for a time.
  local sh=(/bin/bash --norc --noprofile -i)
  # a program in the terminal's own mode (ISIG inside): the terminal inside stops it
  PS1='PROMPT>' pty_cmd '[{"expect":"PROMPT>"},{"send":"\"$CORDON\" run -- sh -c \"echo re\\\"\\\"ady; read l; echo got \\$l\"\r"},
      {"expect":"ready"},{"send":"\u001a"},{"expect":"Stopped"},{"expect":"PROMPT>"},
      {"send":"echo shell-back\r"},{"expect":"shell-back"},{"expect":"PROMPT>"},{"send":"fg\r"},
      {"send":"two\r"},{"expect":"got two"},{"expect":"PROMPT>"},{"send":"echo rc=$?; exit 0\r"}]' "${sh[@]}"
  [ -z "$PFAILED" ] || die "step $PFAILED did not happen; the terminal showed: $(printf '%s' "$POUT" | tail -c 800)"
  assert_contains "$POUT" "Stopped" "the caller's shell saw cordon stop"
  assert_contains "$POUT" "rc=0" "cordon's exit status after fg"
  # a pipeline: ^Z stops all of it, fg continues all of it (not only the command's process;
  # "ready" comes once both of its processes exist)
  PS1='PROMPT>' pty_cmd '[{"expect":"PROMPT>"},{"send":"\"$CORDON\" run -- sh -c \"cat | { echo re\\\"\\\"ady; exec tr a-z A-Z; }\"\r"},
      {"expect":"ready"},{"send":"\u001a"},{"expect":"Stopped"},{"expect":"PROMPT>"},{"send":"fg\r"},{"expect":"tr a-z A-Z"},
      {"send":"two\r"},{"expect":"TWO"},{"send":"\u0004"},{"expect":"PROMPT>"},{"send":"echo rc=$?; exit 0\r"}]' "${sh[@]}"
  [ -z "$PFAILED" ] || die "pipeline: step $PFAILED did not happen; the terminal showed: $(printf '%s' "$POUT" | tail -c 800)"
  assert_contains "$POUT" "rc=0" "the pipeline's exit status after fg"
  # a full-screen program in raw mode that suspends itself on ^Z, as vim does
  local prog='import os, signal, sys, termios, tty
old = termios.tcgetattr(0)
tty.setraw(0)
os.write(1, b"ready\r\n")
c = os.read(0, 1)
termios.tcsetattr(0, termios.TCSADRAIN, old)
if c == b"\x1a":
    os.kill(0, signal.SIGTSTP)
print("resumed", flush=True)
print("got", sys.stdin.readline().strip())'
  printf '%s\n' "$prog" >"$CT/suspend.py"
  PS1='PROMPT>' pty_cmd '[{"expect":"PROMPT>"},{"send":"\"$CORDON\" run --allow-ro \"'"$CT"'\" -- '"$PY"' '"$CT"'/suspend.py\r"},
      {"expect":"ready"},{"send":"\u001a"},{"expect":"Stopped"},{"expect":"PROMPT>"},{"send":"fg\r"},
      {"expect":"resumed"},{"send":"three\r"},{"expect":"got three"},{"expect":"PROMPT>"},{"send":"exit 0\r"}]' "${sh[@]}"
  [ -z "$PFAILED" ] || die "raw mode: step $PFAILED did not happen; the terminal showed: $(printf '%s' "$POUT" | tail -c 800)"
  # without namespaces too, where the supervisor leads the terminal's session
  crun run --isolation landlock -- true
  if [ "$RC" = 0 ]; then
    PS1='PROMPT>' pty_cmd '[{"expect":"PROMPT>"},{"send":"\"$CORDON\" run --isolation landlock -- sh -c \"echo re\\\"\\\"ady; read l; echo got \\$l\"\r"},
        {"expect":"ready"},{"send":"\u001a"},{"expect":"Stopped"},{"expect":"PROMPT>"},{"send":"fg\r"},
        {"send":"four\r"},{"expect":"got four"},{"expect":"PROMPT>"},{"send":"exit 0\r"}]' "${sh[@]}"
    [ -z "$PFAILED" ] || die "--isolation landlock: step $PFAILED did not happen; the terminal showed: $(printf '%s' "$POUT" | tail -c 800)"
  fi
  # the control: a shell inside keeps its own job control (its job stops, not cordon):
  # t_job_control; and under --no-tty nothing of this applies (the command is on the
  # caller's terminal in a session of its own)
}

t_ctrl_z_in_a_session() {
  # The same for a session's command with a terminal (`cordon session exec NAME --tty`):
  # its shepherd leads the terminal's session and the command is its foreground group.
  # The command stops, the caller's shell gets its prompt back, the session serves other
  # commands meanwhile, `fg` resumes it; a shell inside keeps its own job control.
  local s="tz$$r$RANDOM"
  timeout -k 3 "$WATCHDOG" "$CORDON" session start "$s" --idle-timeout 600 </dev/null >/dev/null 2>"$CT/serr" ||
    die "cordon session start failed: $(head -c 400 "$CT/serr")"
  local sh=(/bin/bash --norc --noprofile -i)
  # (a pipeline: ^Z stops all of it, and fg continues all of it; "ready" comes once both
  # of its processes exist)
  SESS=$s PS1='PROMPT>' pty_cmd '[{"expect":"PROMPT>"},{"send":"\"$CORDON\" session exec \"$SESS\" -- sh -c \"cat | { echo re\\\"\\\"ady; exec tr a-z A-Z; }\"\r"},
      {"expect":"ready"},{"send":"\u001a"},{"expect":"Stopped"},{"expect":"PROMPT>"},
      {"send":"\"$CORDON\" session exec \"$SESS\" -- echo other-\"\"command\r"},{"expect":"other-command"},{"expect":"PROMPT>"},
      {"send":"fg\r"},{"expect":"tr a-z A-Z"},{"send":"two\r"},{"expect":"TWO"},{"send":"\u0004"},{"expect":"PROMPT>"},
      {"send":"echo rc=$?; exit 0\r"}]' "${sh[@]}"
  [ -z "$PFAILED" ] || { "$CORDON" session stop "$s" >/dev/null 2>&1; die "step $PFAILED did not happen; the terminal showed: $(printf '%s' "$POUT" | tail -c 800)"; }
  assert_contains "$POUT" "Stopped" "the caller's shell saw cordon session exec stop"
  assert_contains "$POUT" "rc=0" "cordon session exec's exit status after fg"
  # a full-screen program in raw mode that suspends itself on ^Z, as vim does
  printf '%s\n' 'import os, signal, sys, termios, tty
old = termios.tcgetattr(0)
tty.setraw(0)
os.write(1, b"ready\r\n")
c = os.read(0, 1)
termios.tcsetattr(0, termios.TCSADRAIN, old)
if c == b"\x1a":
    os.kill(0, signal.SIGTSTP)
print("resumed", flush=True)
print("got", sys.stdin.readline().strip())' >"$WS/suspend.py"
  SESS=$s PS1='PROMPT>' pty_cmd '[{"expect":"PROMPT>"},{"send":"\"$CORDON\" session exec \"$SESS\" -- '"$PY"' '"$WS"'/suspend.py\r"},
      {"expect":"ready"},{"send":"\u001a"},{"expect":"Stopped"},{"expect":"PROMPT>"},{"send":"fg\r"},
      {"expect":"resumed"},{"send":"three\r"},{"expect":"got three"},{"expect":"PROMPT>"},{"send":"echo rc=$?; exit 0\r"}]' "${sh[@]}"
  [ -z "$PFAILED" ] || { "$CORDON" session stop "$s" >/dev/null 2>&1; die "raw mode: step $PFAILED did not happen; the terminal showed: $(printf '%s' "$POUT" | tail -c 800)"; }
  assert_contains "$POUT" "rc=0" "the raw-mode program's exit status after fg"
  # a shell inside: its job stops and it says so; cordon session exec does not stop
  SESS=$s PS1='PROMPT>' pty_cmd '[{"expect":"PROMPT>"},{"send":"\"$CORDON\" session exec \"$SESS\" --env PS1=INNER: -- bash --norc --noprofile -i\r"},
      {"expect":"INNER:"},{"send":"sh -c \"echo in\"\"job; read x; echo inner-got \\$x\"\r"},{"expect":"injob"},
      {"send":"\u001a"},{"expect":"Stopped"},{"expect":"INNER:"},{"send":"fg\r"},{"expect":"inner-got \\$x"},
      {"send":"four\r"},
      {"expect":"inner-got four"},{"expect":"INNER:"},{"send":"exit 5\r"},{"expect":"PROMPT>"},{"send":"echo rc=$?; exit 0\r"}]' "${sh[@]}"
  [ -z "$PFAILED" ] || { "$CORDON" session stop "$s" >/dev/null 2>&1; die "shell inside: step $PFAILED did not happen; the terminal showed: $(printf '%s' "$POUT" | tail -c 800)"; }
  assert_contains "$POUT" "rc=5" "bash's exit status inside"
  assert_not_contains "$POUT" "no job control" "bash -i in a session"
  if printf '%s\n' "$POUT" | grep -q 'Stopped.*session exec'; then
    die "the caller's shell stopped cordon for a job of the shell inside: $(printf '%s' "$POUT" | tail -c 800)"
  fi
  "$CORDON" session stop "$s" >/dev/null 2>&1 || die "the session did not outlive its stopped commands"
}

run_case default_on_under_a_terminal t_default_on_under_a_terminal
run_case job_control t_job_control
run_case ctrl_c_and_quit_reach_the_foreground t_ctrl_c_and_quit_reach_the_foreground
run_case window_size t_window_size
run_case terminal_restored_on_every_exit t_terminal_restored_on_every_exit
run_case tty_with_piped_input t_tty_with_piped_input
run_case tiocsti_refused_on_its_own_terminal t_tiocsti_refused_on_its_own_terminal
run_case ctrl_z_reaches_the_callers_shell t_ctrl_z_reaches_the_callers_shell
run_case ctrl_z_in_a_session t_ctrl_z_in_a_session
finish
