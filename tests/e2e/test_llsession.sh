#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sessions under --isolation landlock (issue 22): where user namespaces are refused (a
# container's seccomp profile), a harness's sessions still work.  The session's holder
# supervises; each command runs as `cordon run --isolation landlock` runs one (the same
# Landlock rules, seccomp filter and creation control), so:
#   - commands run, with --chdir, --env, --timeout, exit statuses as cordon run's; state
#     persists between commands in the workspace and in the session's HOME;
#   - the protections hold in every command: writing outside refused, .git/hooks and
#     .codex refused (and reported), a host Unix socket refused (positive controls: the
#     workspace is writable, the host socket answers on the host, the command's own
#     socket works);
#   - a protected name the host creates after the start refuses commands while it is
#     there, and only then;
#   - --keep and --keep --detach keep what a command leaves; without --keep it dies;
#   - stop, the idle timeout and kill -9 of the holder leave nothing: no process, no
#     socket, no private directory;
#   - --isolation auto picks it where user namespaces are refused (bwrap --disable-userns).
# Each case stops its sessions; sstart gives each an idle timeout, so that even a killed
# run of this file leaves nothing for long.
. "$(dirname "$0")/lib.sh"

SP="l$$r$RANDOM"

landlock_abi() { "$PY" -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
r = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint(1))
print(r if r > 0 else 0)'; }
ABI=$(landlock_abi)
# (--network none, the default, needs ABI 4 under --isolation landlock)
need_landlock() { [ "$ABI" -ge 4 ] || skip_case "Landlock ABI $ABI on this kernel; --isolation landlock with --network none needs ABI 4 (Linux 6.7)"; }

# sstart NAME [RUN OPTIONS...]: start a Landlock session (a case's own --idle-timeout wins)
sstart() {
  local name=$1
  shift
  timeout -k 3 "$WATCHDOG" "$CORDON" session start "$name" --idle-timeout 600 --isolation landlock "$@" >"$T/.sout" 2>"$T/.serr" </dev/null ||
    die "cordon session start $name failed (status $?): $(head -c 400 "$T/.serr")"
  check_sanitizer "$T/.serr" "cordon session start"
  echo "$name" >>"$T/.sessions"
}

sstop() { "$CORDON" session stop "$1" >/dev/null 2>&1 || true; }

holder_pid() {
  "$CORDON" session list --json | "$PY" -c 'import json, sys
for s in json.load(sys.stdin)["sessions"]:
    if s["name"] == sys.argv[1]:
        print(s["pid"])' "$1"
}

state_dir() { "$CORDON" session list --json | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["dir"])'; }

# The session's private directory (its HOME's parent), as a command sees it.
private_dir() { "$CORDON" session exec "$1" -- sh -c 'dirname "$HOME"'; }

git_ws() {
  command -v git >/dev/null || skip_case "git is not installed (./bootstrap.sh installs it)"
  git -C "$WS" init -q
  git -C "$WS" config user.name cordon-test
  git -C "$WS" config user.email test@cordon.invalid
  echo one >"$WS/tracked"
  git -C "$WS" add tracked
  git -C "$WS" commit -q -m first
}

# ---------------------------------------------------------------------------------------

case_runs_and_keeps_state() {
  need_landlock
  local s=${SP}basic
  sstart "$s"
  # start says what differs from a namespace session
  assert_contains "$(cat "$T/.serr")" "isolation landlock"
  assert_contains "$(cat "$T/.serr")" "/tmp"
  expect_output "hello" session exec "$s" -- echo hello
  expect_output "$WS" session exec "$s" -- pwd
  # state between commands: the workspace, and the session's HOME
  expect_ok session exec "$s" -- sh -c 'echo made >file && echo kept >"$HOME/note"'
  assert_file_content "$WS/file" "made"
  expect_output "made kept" session exec "$s" -- sh -c 'echo "$(cat file) $(cat "$HOME/note")"'
  # --chdir and --env
  mkdir -p "$WS/sub"
  expect_output "$WS/sub v1" session exec "$s" --chdir "$WS/sub" --env X=v1 -- sh -c 'echo "$(pwd) $X"'
  # exit statuses as cordon run's
  expect_exit 7 session exec "$s" -- sh -c 'exit 7'
  expect_exit 143 session exec "$s" -- sh -c 'kill -TERM $$'
  expect_exit 127 session exec "$s" -- no-such-command-"$s"
  expect_exit 124 session exec "$s" --timeout 0.5 -- sleep 30
  assert_contains "$ERR" "timed out"
  # creating at the top of a workspace that is a repository, and git commit (the creation
  # control's own case: the positive control of the refusals below)
  if command -v git >/dev/null; then
    git_ws
    expect_ok session exec "$s" -- sh -c 'echo two >tracked && touch top && git add tracked && git commit -q -m second'
    assert_eq "$(git -C "$WS" log --format=%s -1)" "second" "git commit in a Landlock session"
  fi
  crun session list
  assert_contains "$OUT" "$s"
  sstop "$s"
}

case_protections_hold() {
  need_landlock
  git_ws
  local s=${SP}prot before
  echo secret >"$OUTSIDE/secret"
  before=$(snapshot "$OUTSIDE" strict)
  # (--network host: under --network none Unix sockets are refused outright, so the host
  # socket below would prove nothing about the creation control)
  sstart "$s" --network host
  # positive control: the workspace is writable
  expect_ok session exec "$s" -- sh -c 'echo ok >control'
  assert_file_content "$WS/control" "ok"
  # outside the view: not readable, not writable
  expect_exit 1 session exec "$s" -- cat "$OUTSIDE/secret"
  expect_exit 1 session exec "$s" -- sh -c "echo changed >'$OUTSIDE/secret' || exit 1"
  expect_exit 1 session exec "$s" -- sh -c "echo new >'$OUTSIDE/new' || exit 1"
  assert_unchanged "$before" "$OUTSIDE" "a Landlock session's command changed a directory outside its view" strict
  # git hooks and .codex: refused, and said
  expect_exit 1 session exec "$s" -- sh -c 'echo evil >.git/hooks/pre-commit || exit 1'
  assert_contains "$ERR" "refused"
  assert_absent "$WS/.git/hooks/pre-commit"
  expect_exit 1 session exec "$s" -- mkdir .codex
  assert_contains "$ERR" ".codex"
  assert_absent "$WS/.codex"
  # a host service's Unix socket in the view: refused (the host reaches it: control)
  mkdir "$WS/run"
  local ready=$CT/ready i
  "$PY" -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(8); open(sys.argv[2], "w").close()
s.settimeout(60)
while True:
    try:
        c, _ = s.accept()
    except OSError:
        break
    c.sendall(b"pong-from-host"); c.close()' "$WS/run/sock" "$ready" </dev/null >/dev/null 2>"$CT/server.err" &
  track_pid $! "run/sock"
  for ((i = 0; i < 200; i++)); do
    [ -e "$ready" ] && break
    sleep 0.05
  done
  [ -e "$ready" ] || die "could not start the host Unix socket server: $(cat "$CT/server.err")"
  local client='
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1]); print(s.recv(64).decode())
except OSError as e:
    print("refused", e.errno)'
  assert_eq "$(host_py "$client" "$WS/run/sock")" "pong-from-host" "positive control: the host reaches its own socket"
  crun session exec "$s" -- "$PY" -c "$client" "$WS/run/sock"
  assert_eq "$OUT" "refused 13" "a host Unix socket from a Landlock session's command (EACCES)"
  assert_contains "$ERR" "connect"
  # control: the command's own socket in the workspace works
  expect_output "own" session exec "$s" -- "$PY" -c '
import socket
s = socket.socket(socket.AF_UNIX); s.bind("own.sock"); s.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect("own.sock"); a, _ = s.accept(); a.sendall(b"own"); print(c.recv(8).decode())'
  sstop "$s"
}

# A protected name the host makes after the start: each command is refused while it is
# there (its Landlock rules were made without it), and runs again once it is gone.
case_host_creates_protected() {
  need_landlock
  local s=${SP}vsc
  sstart "$s"
  expect_ok session exec "$s" -- true
  mkdir "$WS/.vscode"
  echo '{}' >"$WS/.vscode/settings.json"
  expect_exit 125 session exec "$s" -- sh -c 'echo evil >.vscode/settings.json'
  assert_contains "$ERR" "created on the host after the session started"
  assert_file_content "$WS/.vscode/settings.json" "{}"
  rm -r "$WS/.vscode"
  expect_output "again" session exec "$s" -- echo again
  expect_exit 1 session exec "$s" -- mkdir .vscode
  assert_absent "$WS/.vscode"
  sstop "$s"
}

case_keep_detach_and_stop() {
  need_landlock
  local s=${SP}keep m k d dir priv
  m=$(new_mark)
  k=$(new_mark)
  d=$(new_mark)
  sstart "$s"
  dir=$(state_dir)
  priv=$(private_dir "$s")
  assert_exists "$priv" "the session's private directory"
  # without --keep, what a command leaves dies with it
  expect_ok session exec "$s" -- sh -c "sleep 1000.$m & (setsid sleep 1000.$m &) ; exit 0"
  wait_no_sleepers "$m" 10 || die "leftovers of a command without --keep survived: $(find_sleepers "$m")"
  # with --keep they stay; --keep --detach returns at once with the pid
  expect_ok session exec "$s" --keep -- sh -c "sleep 1000.$k & (setsid sleep 1000.$k &)"
  wait_for_sleepers "$k" 10 2 >/dev/null || die "the kept sleepers are not running"
  expect_ok session exec "$s" --keep --detach -- sleep "1000.$d"
  [ "$OUT" -gt 0 ] 2>/dev/null || die "--detach did not print a pid: '$OUT'"
  wait_for_sleepers "$d" 10 >/dev/null || die "the detached command is not running"
  # one that cannot start fails as any command does
  expect_exit 127 session exec "$s" --keep --detach -- no-such-command-"$s"
  expect_output "still" session exec "$s" -- echo still
  [ -n "$(find_sleepers "$k")" ] || die "a later command killed what --keep kept"
  expect_ok session stop "$s"
  # when stop returns, it is all gone
  [ -z "$(find_sleepers "$k")$(find_sleepers "$d")" ] || die "stop returned before the session's processes were gone"
  assert_absent "$dir/$s" "stop left the session's socket"
  assert_absent "$priv" "stop left the session's private directory"
  expect_exit 125 session exec "$s" -- true
}

case_holder_kill9_leaves_nothing() {
  need_landlock
  local s=${SP}k9 m dir h priv i
  m=$(new_mark)
  sstart "$s"
  dir=$(state_dir)
  priv=$(private_dir "$s")
  expect_ok session exec "$s" --keep -- sh -c "sleep 1000.$m & (setsid sleep 1001.$m &)"
  wait_for_sleepers "$m" 10 2 >/dev/null || die "the kept sleepers did not start"
  h=$(holder_pid "$s")
  [ -n "$h" ] || die "no holder pid for $s"
  kill -9 "$h"
  wait_no_sleepers "$m" 10 || die "kill -9 of the holder left the session's processes: $(find_sleepers "$m")"
  for ((i = 0; i < 200; i++)); do
    [ -e "$dir/$s" ] || [ -e "$priv" ] || break
    sleep 0.05
  done
  assert_absent "$dir/$s" "kill -9 of the holder left its socket"
  assert_absent "$priv" "kill -9 of the holder left the session's private directory"
  expect_exit 125 session exec "$s" -- true
}

case_idle_timeout() {
  need_landlock
  local s=${SP}idle dir i
  sstart "$s" --idle-timeout 1
  dir=$(state_dir)
  expect_output "x" session exec "$s" -- echo x
  for ((i = 0; i < 600; i++)); do
    [ -e "$dir/$s" ] || break
    sleep 0.1
  done
  assert_absent "$dir/$s" "the idle timeout did not end the session"
  expect_exit 125 session exec "$s" -- true
}

# --isolation auto where user namespaces are refused (bubblewrap's --disable-userns makes
# such a host): the session runs under Landlock, and start says so.
case_auto_falls_back() {
  need_landlock
  command -v bwrap >/dev/null || skip_case "bwrap not found (./bootstrap.sh installs bubblewrap)"
  bwrap --ro-bind / / --dev /dev --proc /proc --unshare-user --disable-userns true 2>/dev/null ||
    skip_case "bwrap --disable-userns does not work here"
  local top s=${SP}auto
  top=$(cd "$(dirname "$CORDON")/.." && pwd)
  RC=0
  # (all inside: a client in another user namespace than the holder's is refused)
  OUT=$(cd "$WS" && bwrap --ro-bind / / --tmpfs /tmp --ro-bind "$top" "$top" --bind "$CT" "$CT" --dev /dev --proc /proc \
    --unshare-user --disable-userns --setenv XDG_RUNTIME_DIR "$CT/rt" -- sh -c '
      mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
      "$1" session start "$2" --isolation auto --network host --idle-timeout 120 || exit 9
      "$1" session exec "$2" -- sh -c "echo ran; grep NoNewPrivs /proc/self/status"; rc=$?
      "$1" session stop "$2"; exit $rc' sh "$CORDON" "$s" 2>"$ERRF") || RC=$?
  ERR=$(cat "$ERRF")
  [ "$RC" = 0 ] || die "a session with --isolation auto without user namespaces: $(last_run)"
  assert_contains "$OUT" "ran"
  assert_contains "$OUT" "NoNewPrivs:	1"
  assert_contains "$ERR" "isolation landlock"
}

run_case runs_and_keeps_state case_runs_and_keeps_state
run_case protections_hold case_protections_hold
run_case host_creates_protected case_host_creates_protected
run_case keep_detach_and_stop case_keep_detach_and_stop
run_case holder_kill9_leaves_nothing case_holder_kill9_leaves_nothing
run_case idle_timeout case_idle_timeout
run_case auto_falls_back case_auto_falls_back

if [ -f "$T/.sessions" ]; then
  while read -r s; do sstop "$s"; done <"$T/.sessions"
fi
finish
