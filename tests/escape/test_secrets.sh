#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Host secrets handed to cordon by accident: variables in its environment (outside the
# passlist, not named with --keep-env) and descriptors it inherits (open files and
# directories: openat() below a directory descriptor would reach past the view). Inside,
# neither /proc/self/environ nor PID 1's /proc/1/environ shows the variable (PID 1 is a
# copy of cordon, with its whole environment in memory: it must not be readable), and
# only descriptors 0, 1 and 2 are open. Positive controls: --keep-env does pass the
# variable, and the same program run on the host with the same descriptors reads the
# secret through them.
. "$(dirname "$0")/lib.sh"
esc_build tryops procwalk

t_environment() {
  export CORDON_ESCAPE_TOKEN=host-secret-$RANDOM
  local base
  for base in system host; do
    esc_ok --base "$base" -- tryops environ self /proc/self/environ CORDON_ESCAPE_TOKEN \
      environ pid1 /proc/1/environ CORDON_ESCAPE_TOKEN read pid1_cmdline /proc/1/cmdline
    assert_eq "$(detail self | cut -d' ' -f1)" absent "ESCAPE: the host variable is in the command's environment (--base $base)"
    case $(result pid1) in
      ok) assert_eq "$(detail pid1 | cut -d' ' -f1)" absent "ESCAPE: the host variable is readable in PID 1's environment" ;;
      *) want_refused pid1 EACCES EPERM ;;
    esac
    assert_not_contains "$OUT" "$CORDON_ESCAPE_TOKEN" "ESCAPE: the secret's value appeared inside"
  done
  # positive control: asked for, it is there, so the check above can see it
  esc_ok --keep-env CORDON_ESCAPE_TOKEN -- tryops environ self /proc/self/environ CORDON_ESCAPE_TOKEN
  assert_eq "$(detail self | cut -d' ' -f1)" present "positive control: --keep-env CORDON_ESCAPE_TOKEN"
}

t_inherited_descriptors() {
  echo "host log" >"$CT/hostlog"
  local before ops=(fdlist fds fdread fd5 5 fdopenat fd6_openat 6 secret fdread fd7 7 \
    fdopenat fd9_openat 9 secret)
  before=$(md5sum <"$CT/hostlog")
  # positive control: on the host, with the same descriptors, the program reads the secret
  "$BIN/tryops" "${ops[@]}" 5<"$OUTSIDE/secret" 6<"$OUTSIDE" 7>>"$CT/hostlog" 9<"$OUTSIDE" >"$OUTF" 2>&1
  OUT=$(cat "$OUTF")
  assert_eq "$(detail fd5)" "host secret outside the workspace" "positive control: reading the inherited descriptor on the host"
  assert_eq "$(detail fd6_openat)" "host secret outside the workspace" "positive control: openat below the inherited directory on the host"
  RC=0
  timeout -k 3 "$WATCHDOG" "$CORDON" run --allow-ro "$BIN" -- "$BIN/tryops" "${ops[@]}" \
    5<"$OUTSIDE/secret" 6<"$OUTSIDE" 7>>"$CT/hostlog" 9<"$OUTSIDE" </dev/null >"$OUTF" 2>"$ERRF" || RC=$?
  OUT=$(cat "$OUTF")
  ERR=$(cat "$ERRF")
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$(detail fds)" "0 1 2" "descriptors open inside"
  want_refused fd5 EBADF
  want_refused fd6_openat EBADF
  want_refused fd7 EBADF
  want_refused fd9_openat EBADF
  assert_not_contains "$OUT" "host secret" "ESCAPE: the secret was read through an inherited descriptor"
  assert_eq "$(md5sum <"$CT/hostlog")" "$before" "the host file open for writing changed"
}

t_descriptors_of_pid1() {
  # and none through PID 1's descriptors either
  echo "control-$CASE" >"$WS/control"
  RC=0
  timeout -k 3 "$WATCHDOG" "$CORDON" run --allow-ro "$BIN" -- "$BIN/procwalk" "host secret" \
    "$WS/control" "control-$CASE" "$OUTSIDE/secret" 5<"$OUTSIDE/secret" 6<"$OUTSIDE" </dev/null >"$OUTF" 2>"$ERRF" || RC=$?
  OUT=$(cat "$OUTF")
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  want_ok control_fd
  want_refused pid1_fd EACCES EPERM ENOENT EMPTY
  assert_contains "$OUT" "leaks 0" "ESCAPE: a host file was read through /proc"
}

run_case environment t_environment
run_case inherited_descriptors t_inherited_descriptors
run_case descriptors_of_pid1 t_descriptors_of_pid1
finish
