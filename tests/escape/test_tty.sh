#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# TIOCSTI: a command given the caller's terminal pushes keystrokes into it, which the
# caller's shell would run after the sandbox exits (CVE-2017-5226). cordon starts the
# command in a new session (no controlling terminal: TIOCSTI needs it, or CAP_SYS_ADMIN),
# and after issue 4 seccomp refuses TIOCSTI outright, compared on 32 bits (the 64-bit
# request variant, CVE-2019-10063). cordon runs under a pty that is its controlling
# terminal and standard input, as from a person's shell; the bytes waiting in that
# terminal's input afterwards must be none. Positive controls: descriptor 0 is that
# terminal inside, and the same program run on the host, without cordon, does inject.
. "$(dirname "$0")/lib.sh"
esc_build tiocsti tryops
HARNESS=$ESC_SRC/pty_harness.py

# under_pty INJECTED_FILE COMMAND...: run COMMAND under a fresh pty; output as crun's.
under_pty() {
  local inj=$1
  shift
  RC=0
  timeout -k 3 "$WATCHDOG" "$PY" "$HARNESS" "$inj" "$@" >"$OUTF" 2>"$ERRF" || RC=$?
  OUT=$(cat "$OUTF")
  ERR=$(cat "$ERRF")
  check_sanitizer "$ERRF" "cordon under a pty"
}

host_control() {
  under_pty "$CT/host-injected" "$BIN/tiocsti"
  HOST_INJECTS=0
  if [ "$(result tiocsti)" = ok ]; then
    [ "$(cat "$CT/host-injected")" = xy ] ||
      die "positive control: TIOCSTI worked on the host but the harness did not see the input ($(cat "$CT/host-injected"))"
    HOST_INJECTS=1
  fi
}

sandbox_expect() {
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  want_ok isatty
  want_refused ctty_sid ENOTTY
  want_refused open_dev_tty ENXIO
  want_refused tiocsti EPERM EIO
  want_refused tiocsti_high_bits EPERM EIO
  [ ! -s "$CT/injected" ] || die "ESCAPE: the sandbox pushed '$(cat "$CT/injected")' into the caller's terminal"
}

t_tiocsti() {
  host_control
  under_pty "$CT/injected" "$CORDON" run --allow-ro "$BIN" -- "$BIN/tiocsti"
  sandbox_expect
  [ "$HOST_INJECTS" = 1 ] || skip_case "refused inside, but the host refuses TIOCSTI too (dev.tty.legacy_tiocsti=0?), so the control cannot show the attack works: $(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null)"
}

t_tiocsti_base_host() {
  under_pty "$CT/injected" "$CORDON" run --base host --allow-ro "$BIN" -- "$BIN/tiocsti"
  sandbox_expect
}

t_tiocsti_from_shell_pipeline() {
  # a shell inside that backgrounds the injector and exits first (the keystrokes would
  # land after cordon returned): nothing arrives either
  under_pty "$CT/injected" "$CORDON" run --allow-ro "$BIN" -- sh -c '("$1" >/dev/null &); "$1"' sh "$BIN/tiocsti"
  sandbox_expect
}

t_host_ptys_invisible() {
  # the sandbox has a devpts of its own: the caller's terminals are not there to open
  under_pty "$CT/injected" "$CORDON" run --allow-ro "$BIN" -- "$BIN/tryops" ls devpts /dev/pts
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$(detail devpts)" "n=1 ptmx" "/dev/pts inside"
}

run_case tiocsti t_tiocsti
run_case tiocsti_base_host t_tiocsti_base_host
run_case tiocsti_background t_tiocsti_from_shell_pipeline
run_case host_ptys_invisible t_host_ptys_invisible
finish
