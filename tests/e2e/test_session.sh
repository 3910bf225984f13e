#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cordon session start | exec | list | stop (issue 14): one sandbox, many commands.
#
# A session outlives the process that ran `start` (issue 22): each case stops its
# sessions itself, the end of the file stops whatever a failed case left, and sstart
# gives each an idle timeout, so that even a killed run of this file leaves nothing for
# long.
. "$(dirname "$0")/lib.sh"

SP="t$$r$RANDOM"    # session names unique to this file's run (others may run at once)
HTTP_PORT=8765      # free in any session: each has a network namespace of its own

# sstart NAME [RUN OPTIONS...]: start a session (a case's own --idle-timeout wins)
sstart() {
  local name=$1
  shift
  timeout -k 3 "$WATCHDOG" "$CORDON" session start "$name" --idle-timeout 600 "$@" >"$T/.sout" 2>"$T/.serr" </dev/null ||
    die "cordon session start $name failed (status $?): $(head -c 400 "$T/.serr")"
  check_sanitizer "$T/.serr" "cordon session start"
  echo "$name" >>"$T/.sessions"
}

sstop() { "$CORDON" session stop "$1" >/dev/null 2>&1 || true; }

# The holder's pid of session NAME (from `cordon session list --json`).
holder_pid() {
  "$CORDON" session list --json | "$PY" -c 'import json, sys
for s in json.load(sys.stdin)["sessions"]:
    if s["name"] == sys.argv[1]:
        print(s["pid"])' "$1"
}

# Where this identity's sessions live (as `cordon session` says).
state_dir() { "$CORDON" session list --json | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["dir"])'; }

# ---------------------------------------------------------------------------------------

case_basic_exec() {
  local s=${SP}basic
  sstart "$s"
  expect_output "hello" session exec "$s" -- echo hello
  # the working directory is the caller's, the workspace is writable
  expect_output "$WS" session exec "$s" -- pwd
  expect_ok session exec "$s" -- sh -c 'echo made >file'
  assert_file_content "$WS/file" "made"
  # --chdir and --env
  mkdir -p "$WS/sub"
  expect_output "$WS/sub v1" session exec "$s" --chdir "$WS/sub" --env X=v1 -- sh -c 'echo "$(pwd) $X"'
  # what one command leaves in the session's private /tmp the next one sees; nothing on the host
  expect_ok session exec "$s" -- sh -c 'echo shared >/tmp/x.'"$s"
  expect_output "shared" session exec "$s" -- cat /tmp/x."$s"
  assert_absent "/tmp/x.$s" "the session's /tmp is its own"
  # outside the view stays outside
  expect_exit 1 session exec "$s" -- cat "$OUTSIDE/secret"
  crun session list
  assert_contains "$OUT" "$s"
  sstop "$s"
  crun session list
  assert_not_contains "$OUT" "$s" "a stopped session is not listed"
}

case_exit_statuses() {
  local s=${SP}exit
  sstart "$s"
  expect_exit 0 session exec "$s" -- true
  expect_exit 7 session exec "$s" -- sh -c 'exit 7'
  expect_exit 143 session exec "$s" -- sh -c 'kill -TERM $$'
  expect_exit 137 session exec "$s" -- sh -c 'kill -KILL $$'
  expect_exit 127 session exec "$s" -- no-such-command-"$s"
  assert_contains "$ERR" "command not found"
  printf 'not a program\n' >"$WS/notexec"
  chmod 0644 "$WS/notexec"
  expect_exit 126 session exec "$s" -- "$WS/notexec"
  expect_exit 124 session exec "$s" --timeout 0.3 -- sleep 30
  assert_contains "$ERR" "timed out"
  # the same as cordon run, for the record
  crun run -- sh -c 'exit 7'
  assert_eq "$RC" 7 "cordon run as the reference"
  # usage errors: 125 with a message
  expect_exit 125 session exec "$s" --timeout abc -- true
  assert_cordon_stderr
  expect_exit 125 session exec "$s" --bogus -- true
  expect_exit 125 session exec "$s"
  sstop "$s"
}

case_missing_session() {
  expect_exit 125 session exec "${SP}never" -- true
  assert_cordon_stderr
  assert_contains "$ERR" "no session '${SP}never'"
  expect_exit 125 session stop "${SP}never"
  assert_contains "$ERR" "no session"
  # the options before the NAME: said so, with the order, and nothing started
  expect_exit 125 session start --isolation landlock "${SP}never"
  assert_contains "$ERR" "the NAME comes first, then the options (got '--isolation')"
  expect_exit 125 session exec "${SP}never" -- true
  # where no session was ever started (no sessions directory yet): the same, and looking
  # makes nothing (before: "cannot use the sessions directory ...: No such file")
  local fresh=$CT/fresh-runtime
  mkdir -m 0700 "$fresh"
  XDG_RUNTIME_DIR=$fresh expect_exit 125 session exec "${SP}never" -- true
  assert_contains "$ERR" "no session '${SP}never' (no session has been started here"
  XDG_RUNTIME_DIR=$fresh expect_exit 125 session stop "${SP}never"
  assert_contains "$ERR" "no session '${SP}never' (no session has been started here"
  [ -z "$(ls -A "$fresh")" ] || die "looking for a session made something in $fresh: $(ls -A "$fresh")"
  expect_exit 125 session exec "bad/../name" -- true
  expect_exit 125 session start ".hidden"
  assert_contains "$ERR" "bad session name"
  # a stopped one: the same, clearly
  local s=${SP}gone
  sstart "$s"
  expect_ok session exec "$s" -- true
  sstop "$s"
  expect_exit 125 session exec "$s" -- true
  assert_contains "$ERR" "no session '$s'"
  # a name is taken while its session runs
  sstart "$s"
  expect_exit 125 session start "$s"
  assert_contains "$ERR" "running already"
  sstop "$s"
}

# http_get_py PORT TRIES: a Python program that prints 127.0.0.1:PORT/hello.txt, trying
# TRIES times 50 ms apart, and exits 3 when no try got it.
http_get_py() {
  printf '%s\n' "import sys, time, urllib.request
for i in range($2):
    try:
        print(urllib.request.urlopen('http://127.0.0.1:$1/hello.txt', timeout=2).read().decode().strip())
        sys.exit(0)
    except Exception as e:
        err = e
        time.sleep(0.05)
print('error:', err)
sys.exit(3)"
}

# A --keep HTTP server started by one exec answers a client in the next; without --keep
# it dies with its command (the control).
case_keep_http_server() {
  local s=${SP}http
  echo "served-$s" >"$WS/hello.txt"
  sstart "$s"
  local client
  client=$(http_get_py "$HTTP_PORT" 100)
  # without --keep: the server is killed when its command (the shell) exits
  expect_ok session exec "$s" -- sh -c "$PY -m http.server --bind 127.0.0.1 $HTTP_PORT >/dev/null 2>&1 & sleep 0.5"
  expect_exit 3 session exec "$s" -- "$PY" -c "$(http_get_py "$HTTP_PORT" 3)"
  # with --keep it stays, and answers the next command
  expect_ok session exec "$s" --keep -- sh -c "$PY -m http.server --bind 127.0.0.1 $HTTP_PORT >/dev/null 2>&1 &"
  expect_output "served-$s" session exec "$s" -- "$PY" -c "$client"
  expect_output "served-$s" session exec "$s" -- "$PY" -c "$client"
  sstop "$s"
}

# --keep --detach: the command starts, exec returns at once with its pid in the session,
# the command holds none of exec's streams, stays (a later command reaches it) until
# stop; a command that cannot start says so as usual; --detach alone or with --tty is
# refused.
case_keep_detach() {
  local s=${SP}det m out rc=0 pid
  m=$(new_mark)
  echo "served-$s" >"$WS/hello.txt"
  sstart "$s"
  # under $(...): a command holding stdout would hold this for its 1000 s
  out=$(timeout 20 "$CORDON" session exec "$s" --keep --detach -- sh -c "echo noise; echo noise >&2; exec sleep 1000.$m" \
    </dev/null 2>"$CT/err") || rc=$?
  assert_eq "$rc" 0 "exec --keep --detach: $(cat "$CT/err")"
  [[ $out =~ ^[0-9]+$ ]] || die "exec --keep --detach printed '$out', not a pid"
  pid=$out
  assert_not_contains "$(cat "$CT/err")" "noise" "the detached command wrote to exec's stderr"
  wait_for_sleepers "$m" 10 >/dev/null || die "the detached command is not running"
  expect_output "sleep 1000.$m" session exec "$s" -- sh -c "tr '\0' ' ' </proc/$pid/cmdline | sed 's/ \$//'"
  # the README's server: started detached, it answers the next command
  expect_ok session exec "$s" --keep --detach -- "$PY" -m http.server --bind 127.0.0.1 "$HTTP_PORT"
  expect_output "served-$s" session exec "$s" -- "$PY" -c "$(http_get_py "$HTTP_PORT" 100)"
  # it can be stopped from a later command, by its pid
  expect_ok session exec "$s" -- kill "$pid"
  wait_no_sleepers "$m" 5 || die "the detached command outlived its kill"
  # one that ends at once (its leftovers kept, say) is started all the same: 0 and its pid,
  # whichever of its start and its end PID 1 sees first
  local i
  for i in 1 2 3 4 5; do
    crun session exec "$s" --keep --detach -- sh -c 'exit 3'
    assert_eq "$RC" 0 "a detached command that exits at once (try $i): $(last_run)"
    [[ $OUT =~ ^[0-9]+$ ]] || die "no pid printed for a detached command that exits at once (try $i): $(last_run)"
  done
  # what cannot start: 127, nothing printed
  expect_exit 127 session exec "$s" --keep --detach -- no-such-command-"$s"
  assert_eq "$OUT" "" "a pid printed for a command that did not start"
  # the controls
  expect_exit 125 session exec "$s" --detach -- true
  assert_contains "$ERR" "--detach needs --keep"
  expect_exit 125 session exec "$s" --keep --detach --tty -- true
  assert_contains "$ERR" "--detach takes no --tty"
  local k
  k=$(new_mark)
  expect_ok session exec "$s" --keep --detach -- sleep "1000.$k"
  wait_for_sleepers "$k" 10 >/dev/null || die "the second detached command is not running"
  sstop "$s"
  wait_no_sleepers "$k" 3 || die "stop left a detached command: $(find_sleepers "$k")"
}

# A session's network is a run's: a kept server on a --publish-port is reachable from the
# host's loopback until the session stops (sessions under --isolation landlock:
# test_llsession.sh).
case_publish_port() {
  local s=${SP}pub port
  port=$(host_py 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  echo "published-$s" >"$WS/hello.txt"
  sstart "$s" --publish-port "$port"
  expect_ok session exec "$s" --keep -- sh -c "$PY -m http.server --bind 127.0.0.1 $port >/dev/null 2>&1 &"
  local get
  get=$(http_get_py "$port" 60)
  local got
  got=$(host_py "$get") || die "the kept server was not reachable from the host: $got"
  assert_eq "$got" "published-$s"
  sstop "$s"
  if got=$(host_py "${get/range(60)/range(2)}"); then die "the server outlived its session: $got"; fi
}

# Without --keep, everything the command left is killed when it exits: background jobs,
# daemons that double-forked into a session of their own; with --keep they stay.
case_leftovers_die() {
  local s=${SP}left m k
  m=$(new_mark)
  k=$(new_mark)
  sstart "$s"
  expect_ok session exec "$s" -- sh -c "sleep 1000.$m & (setsid sleep 1001.$m &) ; (sh -c 'sleep 1002.$m &' &); sleep 0.2"
  wait_no_sleepers "$m" 3 || die "leftovers of a command outlived it: $(find_sleepers "$m")"
  expect_ok session exec "$s" --keep -- sh -c "sleep 1000.$k & (setsid sleep 1001.$k &); sleep 0.2"
  local n
  n=$(find_sleepers "$k" | wc -l)
  assert_eq "$n" 2 "--keep: what the command left keeps running"
  sstop "$s"
  wait_no_sleepers "$k" 3 || die "stop left kept processes running: $(find_sleepers "$k")"
}

# A timeout or a kill takes one command's process tree, nothing else of the session.
case_timeout_and_kill_one_tree() {
  local s=${SP}tree keep m1 m2 m3
  keep=$(new_mark)
  m1=$(new_mark)
  m2=$(new_mark)
  m3=$(new_mark)
  sstart "$s"
  expect_ok session exec "$s" --keep -- sh -c "sleep 1000.$keep &"
  wait_for_sleepers "$keep" 3 >/dev/null || die "the kept sleeper did not start"
  # the timeout
  expect_exit 124 session exec "$s" --timeout 0.5 -- sh -c "sleep 1000.$m1 & (setsid sleep 1001.$m1 &); sleep 1002.$m1"
  [ "$ELAPSED_MS" -lt 5000 ] || die "the timeout took ${ELAPSED_MS} ms"
  wait_no_sleepers "$m1" 3 || die "the timeout left the command's processes: $(find_sleepers "$m1")"
  # a kill: SIGKILL of the exec (its connection closes: the command's tree goes)
  "$CORDON" session exec "$s" -- sh -c "sleep 1000.$m2 & (setsid sleep 1001.$m2 &); sleep 1002.$m2" \
    </dev/null >/dev/null 2>&1 &
  local ex=$!
  track_pid "$ex" "$m2"
  wait_for_sleepers "$m2" 10 >/dev/null || die "the command did not start"
  sleep 0.3
  kill -9 "$ex"
  wait "$ex" 2>/dev/null || true
  wait_no_sleepers "$m2" 3 || die "killing the exec left the command's processes: $(find_sleepers "$m2")"
  # SIGTERM to the exec is forwarded to the command: it ends (143), and what it left dies
  "$CORDON" session exec "$s" -- sh -c "sleep 1000.$m3 & exec sleep 1001.$m3" </dev/null >/dev/null 2>&1 &
  ex=$!
  track_pid "$ex" "$m3"
  wait_for_sleepers "$m3" 10 2 >/dev/null || die "the command did not start: $(find_sleepers "$m3" | wc -l) of its 2 sleepers"
  kill -TERM "$ex"
  local rc=0
  wait "$ex" || rc=$?
  assert_eq "$rc" 143 "SIGTERM forwarded to the command"
  wait_no_sleepers "$m3" 3 || die "leftovers of the signalled command: $(find_sleepers "$m3")"
  # and the kept one lived through all of it
  [ -n "$(find_sleepers "$keep")" ] || die "a timeout or kill of one command took a kept process of another"
  expect_ok session exec "$s" -- true
  sstop "$s"
  wait_no_sleepers "$keep" 3 || die "stop left the kept sleeper"
}

# A command cannot escape the kill by killing its own shepherd (its parent, a subreaper):
# its whole tree dies then.
case_kill_own_shepherd() {
  local s=${SP}shep m
  m=$(new_mark)
  sstart "$s"
  crun session exec "$s" -- sh -c "sleep 1000.$m & (setsid sleep 1001.$m &); sleep 0.2; kill -9 \$PPID; sleep 1002.$m; echo escaped"
  assert_eq "$RC" 137 "killing the shepherd kills the command"
  assert_not_contains "$OUT" "escaped"
  wait_no_sleepers "$m" 3 || die "processes escaped the kill through their shepherd: $(find_sleepers "$m")"
  expect_ok session exec "$s" -- true
  sstop "$s"
}

# 64 execs at once, each with its own output and status.
case_concurrent_64() {
  local s=${SP}many i pids=() bad=0
  sstart "$s"
  for i in $(seq 1 64); do
    timeout -k 3 "$WATCHDOG" "$CORDON" session exec "$s" -- sh -c "echo out-$i; exit $((i % 5))" \
      >"$CT/o.$i" 2>"$CT/e.$i" </dev/null &
    pids+=($!)
  done
  for i in $(seq 1 64); do
    local rc=0
    wait "${pids[$((i - 1))]}" || rc=$?
    [ "$rc" = $((i % 5)) ] || { bad=$((bad + 1)); echo "exec $i: status $rc: $(cat "$CT/e.$i")" >>"$CT/bad"; }
    [ "$(cat "$CT/o.$i")" = "out-$i" ] || { bad=$((bad + 1)); echo "exec $i: output $(cat "$CT/o.$i")" >>"$CT/bad"; }
  done
  [ "$bad" = 0 ] || die "$bad of 64 concurrent execs went wrong: $(head -c 300 "$CT/bad")"
  sstop "$s"
}

# The starter (the session's PID 1) cannot be killed, traced or read by a command; nor
# can the command's shepherd be traced or read.
case_starter_protected() {
  local s=${SP}pid1
  sstart "$s"
  local probe='import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
out = []
for pid, name in ((1, "pid1"), (os.getppid(), "shepherd")):
    r = libc.ptrace(16, pid, 0, 0)  # PTRACE_ATTACH
    out.append("%s-ptrace=%s" % (name, "ok" if r == 0 else os.strerror(ctypes.get_errno())))
    for f in ("environ", "mem", "maps"):
        try:
            open("/proc/%d/%s" % (pid, f), "rb").read(16)
            out.append("%s-%s=read" % (name, f))
        except OSError as e:
            out.append("%s-%s=%s" % (name, f, e.strerror))
print(" ".join(out))'
  crun session exec "$s" -- "$PY" -c "$probe"
  [ "$RC" = 0 ] || die "the probe failed: $(last_run)"
  assert_not_contains "$OUT" "=ok" "a command could trace the starter or its shepherd"
  assert_not_contains "$OUT" "=read" "a command could read the starter's or its shepherd's memory"
  assert_contains "$OUT" "pid1-ptrace="
  # signals to PID 1 from inside are dropped; the session goes on
  crun session exec "$s" -- sh -c 'kill -KILL 1; kill -TERM 1; kill -STOP 1; sleep 0.2; echo alive'
  assert_eq "$OUT" "alive"
  expect_output "next" session exec "$s" -- echo next
  sstop "$s"
}

# kill -9 of the session's holder leaves nothing: processes, sockets (its janitor removes
# the socket), the session is not listed.
case_holder_kill9_leaves_nothing() {
  local s=${SP}k9 m dir h
  m=$(new_mark)
  sstart "$s"
  dir=$(state_dir)
  assert_exists "$dir/$s" "the session's socket"
  expect_ok session exec "$s" --keep -- sh -c "sleep 1000.$m & (setsid sleep 1001.$m &)"
  wait_for_sleepers "$m" 10 2 >/dev/null || die "the kept sleepers did not start"
  h=$(holder_pid "$s")
  [ -n "$h" ] || die "no holder pid for $s"
  kill -9 "$h"
  wait_no_sleepers "$m" 3 || die "kill -9 of the holder left the session's processes: $(find_sleepers "$m")"
  local i
  for ((i = 0; i < 40; i++)); do
    [ -e "$dir/$s" ] || break
    sleep 0.05
  done
  assert_absent "$dir/$s" "kill -9 of the holder left its socket"
  crun session list
  assert_not_contains "$OUT" "$s"
  expect_exit 125 session exec "$s" -- true
  # nothing of the holder's either (the session's PID 1, the janitor)
  local left
  left=$(for p in /proc/[0-9]*; do { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -q "session start $s" && echo "${p#/proc/}"; done || true)
  [ -z "$left" ] || die "processes of the session are left: $left"
}

# processes whose command line holds "session start NAME" (the holder, PID 1, janitor)
session_procs() {
  local p
  for p in /proc/[0-9]*; do
    { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -q "session start $1 " && echo "${p#/proc/}"
  done || true
}

# wait_session_gone NAME: until it is not listed, its socket is gone and none of its
# processes is left (10 s at most)
wait_session_gone() {
  local dir i
  dir=$(state_dir)
  for ((i = 0; i < 200; i++)); do
    if ! "$CORDON" session list | grep -q "^$1 " && [ ! -e "$dir/$1" ] && [ -z "$(session_procs "$1")" ]; then
      return 0
    fi
    sleep 0.05
  done
  return 1
}

# The session outlives the process that started it (a harness runs each command in a
# fresh shell), held by a daemon: not the starter's child, no terminal, nothing of the
# caller's open; `stop` ends it and leaves nothing.
case_outlives_its_starter() {
  local s=${SP}life h
  # started from a shell that exits right after (before: 125, "there is no session")
  sh -c '"$0" session start "$1" --idle-timeout 600; true' "$CORDON" "$s" </dev/null >/dev/null 2>"$CT/err" ||
    die "start: $(cat "$CT/err")"
  echo "$s" >>"$T/.sessions"
  expect_output "alive" session exec "$s" -- echo alive
  h=$(holder_pid "$s")
  [ -n "$h" ] || die "no holder pid for $s"
  local stat f
  stat=$(cat /proc/"$h"/stat)
  read -r -a f <<<"${stat##*) }" # state ppid pgrp session tty_nr ...
  [ "${f[1]}" != "$$" ] && [ "${f[1]}" != "$BASHPID" ] || die "the holder is the case's child"
  [ "${f[3]}" != "$h" ] || die "the holder leads its session (it could get a controlling terminal)"
  [ "${f[4]}" = 0 ] || die "the holder has a controlling terminal (tty_nr ${f[4]})"
  # its descriptors: /dev/null as 0, 1, 2, none of the caller's (started with a file as
  # stdout and descriptor 7 open on another)
  sstop "$s"
  wait_session_gone "$s" || die "stop left something of $s: $(session_procs "$s")"
  local t=${SP}fds
  exec 7>"$CT/seven"
  "$CORDON" session start "$t" --idle-timeout 600 </dev/null >"$CT/start-out" 2>"$CT/start-err" ||
    die "start: $(cat "$CT/start-err")"
  exec 7>&-
  echo "$t" >>"$T/.sessions"
  h=$(holder_pid "$t")
  local fd target
  for fd in /proc/"$h"/fd/*; do
    target=$(readlink "$fd") || continue
    case ${fd##*/} in
      0 | 1 | 2) [ "$target" = /dev/null ] || die "the holder's descriptor ${fd##*/} is $target, not /dev/null" ;;
    esac
    case $target in
      "$CT"/*) die "the holder kept the caller's descriptor ${fd##*/} ($target)" ;;
    esac
  done
  [ "$(readlink /proc/"$h"/cwd)" = / ] || die "the holder's working directory is $(readlink /proc/"$h"/cwd)"
  # a start whose stdout is a pipe returns (nothing of the session holds it)
  sstop "$t"
  local out rc=0
  out=$(timeout 20 "$CORDON" session start "$t" --idle-timeout 600 </dev/null 2>&1) || rc=$?
  assert_eq "$rc" 0 "start under \$(...): $out"
  expect_ok session exec "$t" -- true
  sstop "$t"
  wait_session_gone "$t" || die "stop left something of $t: $(session_procs "$t")"
}

# --idle-timeout: the session ends once no command has run for that long (a kept process
# does not count; a command that runs longer does), and leaves nothing; one without it
# lives on (the control); bad values are refused.
case_idle_timeout() {
  local s=${SP}idle c=${SP}busy m
  m=$(new_mark)
  sstart "$s" --idle-timeout 1.5
  sstart "$c" --idle-timeout 600
  expect_ok session exec "$s" --keep -- sh -c "sleep 1000.$m &"
  wait_for_sleepers "$m" 10 >/dev/null || die "the kept sleeper did not start"
  # a command longer than the idle timeout: the session lives through it
  expect_output "done" session exec "$s" -- sh -c 'sleep 2.5; echo done'
  expect_output "still" session exec "$s" -- echo still
  wait_session_gone "$s" || die "the idle session is still there: $(session_procs "$s")"
  wait_no_sleepers "$m" 3 || die "the idle timeout left a kept process: $(find_sleepers "$m")"
  expect_exit 125 session exec "$s" -- true
  assert_contains "$ERR" "no session"
  # the control, started at the same time
  expect_output "here" session exec "$c" -- echo here
  sstop "$c"
  expect_exit 125 session start "${s}x" --idle-timeout 0
  assert_contains "$ERR" "idle-timeout"
  expect_exit 125 session start "${s}x" --idle-timeout abc
  assert_contains "$ERR" "not a duration"
  expect_exit 125 session start "${s}x" --idle-timeout
  assert_contains "$ERR" "needs a DURATION"
  crun session list
  assert_not_contains "$OUT" "${s}x"
}

# Only the session's own user can exec into it (root's pass: with uid 65534 as the other).
case_other_uid_refused() {
  [ "$MY_UID" = 0 ] || skip_case "needs root, to act as another uid"
  command -v setpriv >/dev/null || skip_case "setpriv not found"
  local s=${SP}uid dir
  sstart "$s"
  dir=$(state_dir)
  expect_ok session exec "$s" -- true
  local as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH=$PATH HOME=/)
  local rc=0
  "${as_nobody[@]}" "$CORDON" session exec "$dir/$s" -- true >"$CT/o" 2>"$CT/e" </dev/null || rc=$?
  assert_eq "$rc" 125 "uid 65534 exec into root's session"
  assert_contains "$(cat "$CT/e")" "not yours"
  sstop "$s"
  # and root into a session of uid 65534 (root passes the directory's permissions: the
  # session itself refuses, by SO_PEERCRED)
  local u=${SP}nob nd
  mkdir -p "$CT/nob"
  chown 65534:65534 "$CT/nob"
  # (setpriv and env exec: the session follows this case's shell)
  cd "$CT/nob"
  "${as_nobody[@]}" "$CORDON" session start "$u" </dev/null >/dev/null 2>"$CT/e2" ||
    die "uid 65534 could not start a session: $(cat "$CT/e2")"
  cd "$WS"
  nd=$(cd "$CT/nob" && "${as_nobody[@]}" "$CORDON" session list --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["dir"])')
  rc=0
  "$CORDON" session exec "$nd/$u" -- true >"$CT/o" 2>"$CT/e" </dev/null || rc=$?
  (cd / && "${as_nobody[@]}" "$CORDON" session stop "$u") >/dev/null 2>&1 || true
  assert_eq "$rc" 125 "root exec into uid 65534's session"
  assert_contains "$(cat "$CT/e")" "another user"
}

# A sandboxed process cannot use a session, even with the sessions directory in view;
# and one session cannot see another's processes.
case_no_reach_from_sandboxes() {
  local s=${SP}reach t=${SP}other m dir bin
  m=$(new_mark)
  sstart "$s"
  dir=$(state_dir)
  bin=$(dirname "$CORDON")
  sstart "$t" --allow "$dir" --allow-ro "$bin"
  # the control: from the host it works
  expect_ok session exec "$dir/$s" -- true
  crun run --allow "$dir" --allow-ro "$bin" -- "$CORDON" session exec "$dir/$s" -- echo inside
  [ "$RC" = 125 ] || die "a sandboxed process could exec into a session: $(last_run)"
  assert_not_contains "$OUT" "inside"
  assert_contains "$ERR" "sandbox"
  # from a command of another session (which shows the directory): the same
  crun session exec "$t" -- "$CORDON" session exec "$dir/$s" -- echo inside
  [ "$RC" = 125 ] || die "a command of one session could exec into another: $(last_run)"
  assert_not_contains "$OUT" "inside"
  # under Landlock only (no namespaces): refused too
  crun run --allow "$dir" --allow-ro "$bin" --isolation landlock -- "$CORDON" session exec "$dir/$s" -- echo inside
  [ "$RC" != 0 ] || die "a Landlock-sandboxed process could exec into a session: $(last_run)"
  assert_not_contains "$OUT" "inside"
  # under Landlock with the host's base and network: the host's user namespace, Unix
  # sockets allowed, the sessions directory listable (Landlock's deny emulation lets a
  # directory be listed): cordon's supervisor refuses the connect to a host socket ...
  crun run --isolation landlock --base host --network host --allow-ro "$bin" -- "$CORDON" session exec "$dir/$s" -- echo inside
  [ "$RC" = 125 ] || die "a Landlock-sandboxed process (--base host --network host) could exec into a session: $(last_run)"
  assert_not_contains "$OUT" "inside"
  assert_contains "$ERR" "refused connect"
  # ... and with the socket allowed, and the directory even writable, the holder sees the
  # client's seccomp filter and no_new_privs through its pidfd, and refuses
  local ll
  for ll in "--allow-ro $bin" "--allow $dir --allow-ro $bin"; do
    # shellcheck disable=SC2086 # the options are split on purpose
    crun run --isolation landlock --base host --network host --allow-socket "$dir/$s" $ll -- "$CORDON" session exec "$dir/$s" -- echo inside
    [ "$RC" = 125 ] || die "a Landlock-sandboxed process (--base host --network host $ll) could exec into a session: $(last_run)"
    assert_not_contains "$OUT" "inside"
    assert_contains "$ERR" "inside a sandbox"
  done
  # the control again, after the attempts: from the host it still works
  expect_output "outside" session exec "$dir/$s" -- echo outside
  # one session does not see another's processes
  expect_ok session exec "$s" --keep -- sh -c "sleep 1000.$m &"
  crun session exec "$t" -- sh -c 'for p in /proc/[0-9]*; do tr "\0" " " <$p/cmdline; echo; done'
  assert_not_contains "$OUT" "1000.$m" "a session saw another's processes"
  crun session exec "$s" -- sh -c 'for p in /proc/[0-9]*; do tr "\0" " " <$p/cmdline; echo; done'
  assert_contains "$OUT" "1000.$m" "the control: the session sees its own"
  sstop "$s"
  sstop "$t"
}

# A session whose policy can no longer be met fails its commands with 125, and never
# runs them with less: the workspace deleted, a protected name created on the host.
case_policy_no_longer_met() {
  local s=${SP}pol w=$CT/w2
  mkdir -p "$w"
  cd "$w"
  sstart "$s"
  cd "$WS"
  expect_ok session exec "$s" --chdir "$w" -- true
  # a protected name made on the host: refused while it is there (the session has no
  # mount on it, a command could change it), naming it and the fix; it was not changed
  mkdir "$w/.vscode"
  expect_exit 125 session exec "$s" --chdir "$w" -- sh -c 'echo changed >.vscode/tasks.json'
  assert_contains "$ERR" "$w/.vscode was created on the host"
  assert_contains "$ERR" "remove it on the host"
  assert_absent "$w/.vscode/tasks.json"
  # ... and once the host removed it, commands run again, and it is protected as before
  rmdir "$w/.vscode"
  expect_ok session exec "$s" --chdir / -- true
  crun session exec "$s" --chdir "$w" -- mkdir .vscode
  [ "$RC" != 0 ] || die "a command created .vscode after the host removed its own"
  assert_absent "$w/.vscode"
  # a restarted session protects what the host made, as it is now
  mkdir "$w/.vscode"
  sstop "$s"
  cd "$w"
  sstart "$s"
  cd "$WS"
  crun session exec "$s" --chdir "$w" -- sh -c 'echo changed >.vscode/tasks.json'
  [ "$RC" != 0 ] || die "a command wrote into the protected .vscode"
  assert_not_contains "$ERR" "was created on the host"
  assert_absent "$w/.vscode/tasks.json"
  expect_ok session exec "$s" --chdir "$w" -- true
  # the host removes a protected name the session had a mount on (a checkout of another
  # branch): commands run on (before: 125 for good), and cannot create it
  echo '{}' >"$w/.mcp.json"
  sstop "$s"
  cd "$w"
  sstart "$s"
  cd "$WS"
  rm -rf "$w/.vscode"
  expect_ok session exec "$s" --chdir / -- true
  crun session exec "$s" --chdir "$w" -- mkdir .vscode
  [ "$RC" != 0 ] || die "a command created .vscode once the host removed the protected one"
  assert_absent "$w/.vscode"
  # ... made again by the host: refused while it is there, then fine again
  mkdir "$w/.vscode"
  expect_exit 125 session exec "$s" --chdir / -- true
  assert_contains "$ERR" "$w/.vscode was created on the host"
  rmdir "$w/.vscode"
  expect_ok session exec "$s" --chdir / -- true
  # a protected file replaced on the host (an editor's save by rename): refused while the
  # new one is there (it has no mount), then held as a missing name once it is removed
  echo '{"new": 1}' >"$w/.mcp.json.tmp"
  mv "$w/.mcp.json.tmp" "$w/.mcp.json"
  crun session exec "$s" --chdir "$w" -- sh -c 'echo changed >.mcp.json'
  assert_eq "$RC" 125 "a command ran while the replaced .mcp.json had no mount: $(last_run)"
  assert_contains "$ERR" "$w/.mcp.json was replaced on the host"
  assert_file_content "$w/.mcp.json" '{"new": 1}'
  rm "$w/.mcp.json"
  expect_ok session exec "$s" --chdir / -- true
  crun session exec "$s" --chdir "$w" -- sh -c 'echo x >.mcp.json'
  [ "$RC" != 0 ] || die "a command created .mcp.json once the host removed the protected one"
  assert_absent "$w/.mcp.json"
  sstop "$s"
  # the workspace deleted
  local u=${SP}pol2
  mkdir -p "$w"
  cd "$w"
  sstart "$u"
  cd "$WS"
  expect_ok session exec "$u" --chdir "$w" -- true
  rm -rf "$w"
  expect_exit 125 session exec "$u" --chdir / -- true
  assert_contains "$ERR" "deleted"
  # for good: the session's mount is gone, even once the host makes the directory again
  mkdir -p "$w"
  expect_exit 125 session exec "$u" --chdir / -- true
  assert_contains "$ERR" "stop the session and start it again"
  sstop "$u"
}

# The creation control holds in a session: refusals are reported per command.
case_creation_control() {
  local s=${SP}cc
  sstart "$s"
  crun session exec "$s" -- mkdir .codex
  [ "$RC" != 0 ] || die "a command of a session created .codex"
  assert_contains "$ERR" "refused mkdir .codex"
  assert_absent "$WS/.codex"
  crun session exec "$s" -- mkdir ok-dir
  assert_eq "$RC" 0 "mkdir ok-dir"
  assert_not_contains "$ERR" "refused" "a refusal reported for the wrong command"
  sstop "$s"
}

case_tty() {
  command -v script >/dev/null || skip_case "script (util-linux) not found"
  local s=${SP}tty
  sstart "$s"
  timeout 20 script -qec "$CORDON session exec $s -- sh -c 'tty; test -t 0 && echo is-a-tty'" /dev/null \
    </dev/null >"$CT/out" 2>&1 || true
  assert_contains "$(cat "$CT/out")" "/dev/pts/"
  assert_contains "$(cat "$CT/out")" "is-a-tty"
  # --no-tty: no terminal of the sandbox's (no controlling terminal at all: the command
  # only gets cordon's own streams, as under cordon run --no-tty)
  local probe="import os
try:
    os.open('/dev/tty', os.O_RDONLY)
    print('has-ctty')
except OSError:
    print('no-ctty')"
  timeout 20 script -qec "$CORDON session exec $s --no-tty -- $PY -c \"$probe\"" /dev/null \
    </dev/null >"$CT/out" 2>&1 || true
  assert_contains "$(cat "$CT/out")" "no-ctty"
  timeout 20 script -qec "$CORDON session exec $s --tty -- $PY -c \"$probe\"" /dev/null \
    </dev/null >"$CT/out" 2>&1 || true
  assert_contains "$(cat "$CT/out")" "has-ctty"
  sstop "$s"
}

case_stop_leaves_nothing() {
  local s=${SP}stop m dir
  m=$(new_mark)
  sstart "$s"
  dir=$(state_dir)
  expect_ok session exec "$s" --keep -- sh -c "sleep 1000.$m &"
  expect_ok session stop "$s"
  # when stop returns, it is all gone
  [ -z "$(find_sleepers "$m")" ] || die "stop returned before the session's processes were gone"
  assert_absent "$dir/$s"
  expect_exit 125 session exec "$s" -- true
}

run_case basic_exec case_basic_exec
run_case exit_statuses case_exit_statuses
run_case missing_session case_missing_session
run_case keep_http_server case_keep_http_server
run_case keep_detach case_keep_detach
run_case publish_port case_publish_port
run_case leftovers_die case_leftovers_die
run_case timeout_and_kill_one_tree case_timeout_and_kill_one_tree
run_case kill_own_shepherd case_kill_own_shepherd
run_case concurrent_64 case_concurrent_64
run_case starter_protected case_starter_protected
run_case holder_kill9_leaves_nothing case_holder_kill9_leaves_nothing
run_case outlives_its_starter case_outlives_its_starter
run_case idle_timeout case_idle_timeout
run_case other_uid_refused case_other_uid_refused
run_case no_reach_from_sandboxes case_no_reach_from_sandboxes
run_case policy_no_longer_met case_policy_no_longer_met
run_case creation_control case_creation_control
run_case tty case_tty
run_case stop_leaves_nothing case_stop_leaves_nothing

# whatever a failed case may have left running
if [ -f "$T/.sessions" ]; then
  while read -r s; do sstop "$s"; done <"$T/.sessions"
fi
finish
