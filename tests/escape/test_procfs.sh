#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Reading outside the view through /proc: the magic links /proc/PID/root, /proc/PID/cwd
# and /proc/PID/fd/N of every process the sandbox can see (its PID 1 is cordon's reaper;
# cordon's outer process lives outside the PID namespace), and host pids, which must not be
# addressable at all. Positive control: the same routes read a file the view shows.
. "$(dirname "$0")/lib.sh"
esc_build procwalk

# walk_expect: the procwalk report in $OUT shows no leak, working controls, an unreadable
# PID 1 and unaddressable host pids.
walk_expect() {
  [ "$RC" = 0 ] || die "procwalk failed: $(last_run)"
  want_ok control_root
  want_ok control_fd
  want_refused pid1_root EACCES EPERM
  want_refused pid1_cwd EACCES EPERM
  want_refused pid1_exe EACCES EPERM
  want_refused pid1_fd EACCES EPERM ENOENT EMPTY
  local h
  for h in "$@"; do want_refused "hostpid_$h" ENOENT; done
  assert_contains "$OUT" "leaks 0" "a host file was read through /proc"
  # only the sandbox's own processes: PID 1 and the command
  local pids
  pids=$(printf '%s\n' "$OUT" | sed -n 's/^pids //p')
  case " $pids " in *" 1 "*) ;; *) die "PID 1 missing from the sandbox's /proc: '$pids'" ;; esac
  [ "$(wc -w <<<"$pids")" -le 3 ] || die "the sandbox's /proc shows more than its own processes: '$pids'"
}

start_host_sleeper() {
  local m
  m=$(new_mark)
  sleep "100.$m" &
  HOST_SLEEP=$!
}

t_magic_links_base_system() {
  echo "control-$CASE" >"$WS/control"
  start_host_sleeper
  esc -- procwalk "host secret" "$WS/control" "control-$CASE" "$OUTSIDE/secret" /etc/shadow \
    -- "$$" "$BASHPID" "$HOST_SLEEP"
  walk_expect "$$" "$BASHPID" "$HOST_SLEEP"
}

t_magic_links_base_host_denied() {
  # --base host shows the host read-only: the secret is a path it shows, then denies
  local d
  d=$(scratch_outside_tmp)
  mkdir "$d/private"
  echo "host secret in a denied directory" >"$d/private/secret"
  echo "host secret in a denied file" >"$d/secret.env"
  echo "control-$CASE" >"$WS/control"
  start_host_sleeper
  esc --base host --deny "$d/private" --deny "$d/secret.env" -- procwalk "host secret" \
    "$WS/control" "control-$CASE" "$d/private/secret" "$d/secret.env" "$OUTSIDE/secret" \
    -- "$$" "$BASHPID" "$HOST_SLEEP"
  walk_expect "$$" "$BASHPID" "$HOST_SLEEP"
}

t_magic_links_base_empty() {
  need_static
  echo "control-$CASE" >"$WS/control"
  esc --base empty -- procwalk "host secret" "$WS/control" "control-$CASE" "$OUTSIDE/secret" /etc/hostname
  walk_expect
}

t_magic_links_child_processes() {
  # a tree of processes (a shell, its children) does not widen what /proc/*/fd shows:
  # each holds the outside file it was given (none), nothing else
  echo "control-$CASE" >"$WS/control"
  crun run --allow-ro "$BIN" -- sh -c '
    sleep 5 & sleep 5 </dev/null &
    "$1" "host secret" "$2" "$3" "$4"; kill %1 %2 2>/dev/null; exit 0' sh \
    "$BIN/procwalk" "$WS/control" "control-$CASE" "$OUTSIDE/secret"
  [ "$RC" = 0 ] || die "procwalk failed: $(last_run)"
  want_ok control_root
  want_ok control_fd
  want_refused pid1_root EACCES EPERM
  want_refused pid1_fd EACCES EPERM ENOENT EMPTY
  assert_contains "$OUT" "leaks 0" "a host file was read through /proc"
}

run_case magic_links_base_system t_magic_links_base_system
run_case magic_links_base_host_denied t_magic_links_base_host_denied
run_case magic_links_base_empty t_magic_links_base_empty
run_case magic_links_child_processes t_magic_links_child_processes
finish
