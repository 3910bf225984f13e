#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Unix sockets of the host. Abstract sockets belong to a network namespace: with the
# default --network none the host's are out of reach. With --network host they are
# reachable (X11, D-Bus, ...) unless Landlock's abstract-socket scoping (Landlock ABI 6,
# Linux 6.12; issue 4) is applied. Path sockets: a socket in a directory no rule shows
# cannot be named; one the view does show (the workspace, an --allow-ro path, anything
# under --base host: connect(2) does not care about MS_RDONLY) is refused by the
# supervisor (EACCES, reported) unless the sandbox bound it itself or --allow-socket
# names it (issue 19: the host's tmux server under /tmp ran the command's commands). The
# host's service sockets live in /run, /var/run and $XDG_RUNTIME_DIR: --base host hides
# those unless a rule shows them. Positive controls: the host's server answers on the
# host, the same connect works with --allow-socket, and the command's own sockets (bound
# inside, socket pairs) work.
. "$(dirname "$0")/lib.sh"
esc_build tryops sockrace
SERVER=$ESC_SRC/unix_server.py

# start_unix_server ADDR: a host server on ADDR (a path or @name), for this case.
start_unix_server() {
  local ready=$CT/ready.$RANDOM i
  "$PY" "$SERVER" "$1" "$ready" 30 </dev/null >/dev/null 2>"$CT/server.err" &
  track_pid $! "$SERVER"
  for ((i = 0; i < 100; i++)); do
    [ -e "$ready" ] && break
    sleep 0.05
  done
  [ -e "$ready" ] || die "could not start the host Unix socket server: $(cat "$CT/server.err")"
  # positive control: it answers on the host
  host_run tryops connect host_control "$1"
  [ "$(detail host_control)" = pong-from-host ] || die "positive control: the host server does not answer on the host ($OUT)"
}

t_abstract_network_none() {
  local name=@cordon-escape-$$-$RANDOM
  start_unix_server "$name"
  esc_ok -- tryops connect abstract "$name" loopback control_own "cordon-escape-own-$$"
  want_ok control_own
  want_refused abstract ECONNREFUSED
}

landlock_abi() {
  host_run tryops landlock_abi abi
  detail abi
}

t_abstract_network_host() {
  local name=@cordon-escape-$$-$RANDOM abi
  abi=$(landlock_abi)
  start_unix_server "$name"
  esc_ok --network host -- tryops connect abstract "$name" loopback control_own "cordon-escape-own-$$"
  want_ok control_own
  if [ -n "$abi" ] && [ "$abi" -ge 6 ]; then
    # the kernel can scope abstract sockets: cordon must (issue 4)
    want_refused abstract EPERM
  else
    # known limitation on this kernel: reachable, as doc/security.md says
    assert_eq "$(result abstract)" ok "abstract socket of the host under --network host (Landlock ABI ${abi:-none}: no scoping)"
    skip_case "known limitation: with --network host and no Landlock scoping (ABI ${abi:-none} < 6) the host's abstract sockets are reachable"
  fi
}

t_path_socket_hidden() {
  # a socket in a host directory that no rule shows (--base system)
  mkdir "$OUTSIDE/run" "$WS/run"
  chmod 0755 "$OUTSIDE/run" "$WS/run"
  start_unix_server "$OUTSIDE/run/sock"
  start_unix_server "$WS/run/sock"
  esc_ok -- tryops connect hidden "$OUTSIDE/run/sock" connect shown "$WS/run/sock"
  want_refused hidden ENOENT
  want_refused shown EACCES
  # positive control: the same connect works for a socket --allow-socket names
  esc_ok --allow-socket "$WS/run/sock" -- tryops connect shown "$WS/run/sock"
  assert_eq "$(detail shown)" pong-from-host "connect to a host socket in the workspace named by --allow-socket"
}

# issue 19: a host service's socket the view shows is refused, wherever it is shown, and
# the refusal is reported; --allow-socket names one that may be used.
t_host_socket_workspace() {
  mkdir "$WS/srv"
  chmod 0755 "$WS/srv"
  start_unix_server "$WS/srv/sock"
  ln -s srv/sock "$WS/link"
  crun run --status-json "$CT/s.json" --allow-ro "$BIN" -- "$BIN/tryops" connect direct "$WS/srv/sock" \
    connect relative srv/sock connect via_link "$WS/link" connect via_proc "/proc/self/cwd/srv/sock" \
    connectfd via_fd "$WS/srv/sock"
  [ "$RC" = 0 ] || die "$(last_run)"
  want_refused direct EACCES
  want_refused relative EACCES
  want_refused via_link EACCES
  want_refused via_proc EACCES
  # an O_PATH descriptor of the socket file, named as /proc/self/fd/N: the file is checked
  want_refused via_fd EACCES
  assert_contains "$ERR" "cordon: refused connect $WS/srv/sock: a Unix socket the sandbox did not bind"
  assert_contains "$(cat "$CT/s.json")" "connect srv/sock"
  # positive control: named, it answers (through the link too: the socket file is named)
  esc_ok --allow-socket "$WS/srv/sock" -- tryops connect direct "$WS/srv/sock" connect via_link "$WS/link" \
    connectfd via_fd "$WS/srv/sock"
  assert_eq "$(detail direct)" pong-from-host "--allow-socket"
  assert_eq "$(detail via_link)" pong-from-host "--allow-socket, through a symlink"
  assert_eq "$(detail via_fd)" pong-from-host "--allow-socket, through /proc/self/fd/N"
  # the settings key does the same
  printf '{"sandbox": {"allowedSockets": ["%s"]}}\n' "$WS/srv/sock" >"$CT/settings.json"
  esc_ok --settings "$CT/settings.json" -- tryops connect direct "$WS/srv/sock"
  assert_eq "$(detail direct)" pong-from-host "allowedSockets"
}

t_host_socket_allow_ro() {
  local d
  d=$(scratch_outside_tmp)
  mkdir "$d/ro"
  chmod 0755 "$d/ro"
  start_unix_server "$d/ro/sock"
  esc_ok --allow-ro "$d/ro" -- tryops connect ro "$d/ro/sock"
  want_refused ro EACCES
  esc_ok --allow-ro "$d/ro" --allow-socket "$d/ro/sock" -- tryops connect ro "$d/ro/sock"
  assert_eq "$(detail ro)" pong-from-host "--allow-socket in an --allow-ro path"
}

t_path_socket_base_host() {
  # under --base host every host path socket the view shows read-only was reachable
  # (connect(2) ignores MS_RDONLY): now refused, and --allow-socket names one
  local d
  d=$(scratch_outside_tmp)
  mkdir "$d/run"
  chmod 0755 "$d/run"
  start_unix_server "$d/run/sock"
  esc_ok --base host -- tryops connect readonly_view "$d/run/sock" openw write_socket_file "$d/run/sock"
  want_refused write_socket_file EROFS ENXIO
  want_refused readonly_view EACCES
  esc_ok --base host --allow-socket "$d/run/sock" -- tryops connect readonly_view "$d/run/sock"
  assert_eq "$(detail readonly_view)" pong-from-host "--allow-socket under --base host"
  # --deny still hides it
  esc_ok --base host --deny "$d/run" -- tryops connect denied "$d/run/sock"
  want_refused denied ENOENT ECONNREFUSED
}

# A datagram to a host socket (syslog's, journald's, systemd's notify socket) is refused
# too, by sendto, sendmsg and sendmmsg alike; nothing arrives.
t_host_dgram_refused() {
  local got=$CT/got
  "$PY" -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1]); open(sys.argv[2] + ".ready", "w").close()
s.settimeout(20)
got = []
try:
    while len(got) < 3:
        got.append(s.recv(100))
except socket.timeout:
    pass
if got:
    open(sys.argv[2] + ".tmp", "wb").write(b" ".join(got))
    os.rename(sys.argv[2] + ".tmp", sys.argv[2])
' "$WS/dg.sock" "$got" </dev/null >/dev/null 2>&1 &
  track_pid $! dgram-server
  local i
  for ((i = 0; i < 100; i++)); do [ -e "$got.ready" ] && break; sleep 0.05; done
  [ -e "$got.ready" ] || die "could not start the host datagram server"
  esc_ok -- tryops sendto dgram "$WS/dg.sock" sendmsg dgram_msg "$WS/dg.sock" sendmmsg dgram_mmsg "$WS/dg.sock" \
    owndgram control "$WS/mine.dg"
  want_ok control
  want_refused dgram EACCES
  want_refused dgram_msg EACCES
  want_refused dgram_mmsg EACCES
  [ ! -e "$got" ] || die "ESCAPE: a datagram reached the host's socket: $(cat "$got")"
  # positive control: named, each is sent and arrives (the server reads three)
  esc_ok --allow-socket "$WS/dg.sock" -- tryops sendto dgram "$WS/dg.sock" sendmsg dgram_msg "$WS/dg.sock" \
    sendmmsg dgram_mmsg "$WS/dg.sock"
  want_ok dgram
  want_ok dgram_msg
  want_ok dgram_mmsg
  for ((i = 0; i < 100; i++)); do [ -s "$got" ] && break; sleep 0.05; done
  assert_file_content "$got" "from-inside from-inside from-inside"
}

# The command's own sockets keep working: a server and its client inside (stream and
# datagram, on a socket it bound), socket pairs (with a descriptor passed), and bind of
# an ordinary name; bind of a protected name is the creation control's refusal.
t_own_sockets_work() {
  esc_ok -- tryops ownstream stream "$WS/ok.sock" owndgram dgram "$WS/ok.dg" pair pair \
    ownstream claude "$WS/.claude" ownstream tmp /tmp/own.sock
  want_ok stream
  want_ok dgram
  want_ok pair
  want_ok tmp
  want_refused claude EPERM
  [ ! -e "$WS/.claude" ] || die "ESCAPE: a socket named .claude at the top of the workspace"
  [ -S "$WS/ok.sock" ] || die "the command's own socket is missing on the host"
  assert_contains "$ERR" "cordon: refused bind $WS/.claude"
}

# A session's commands: the same refusal, and a socket one command bound is the
# sandbox's own for the next (sessions live as long as this case's subshell, see
# e2e/session).
t_session_host_socket() {
  local name=sk$$r$RANDOM
  start_unix_server "$WS/host.sock"
  "$CORDON" session start "$name" --allow-ro "$BIN" </dev/null >/dev/null 2>"$CT/serr" ||
    die "cordon session start failed: $(head -c 300 "$CT/serr")"
  crun session exec "$name" -- "$BIN/tryops" connect host "$WS/host.sock"
  local out=$OUT err=$ERR
  crun session exec "$name" -- "$BIN/tryops" ownstream own "$WS/sess.sock"
  local own=$OUT
  "$CORDON" session stop "$name" >/dev/null 2>&1 || true
  OUT=$out
  want_refused host EACCES
  assert_contains "$err" "cordon: refused connect $WS/host.sock"
  OUT=$own
  want_ok own
  # positive control: a session started with --allow-socket
  "$CORDON" session start "$name" --allow-ro "$BIN" --allow-socket "$WS/host.sock" </dev/null >/dev/null 2>"$CT/serr" ||
    die "cordon session start failed: $(head -c 300 "$CT/serr")"
  crun session exec "$name" -- "$BIN/tryops" connect host "$WS/host.sock"
  "$CORDON" session stop "$name" >/dev/null 2>&1 || true
  assert_eq "$(detail host)" pong-from-host "--allow-socket in a session"
}

# --isolation landlock has no PID 1 to check where a datagram goes: with --network none a
# datagram socket pair (which could send to a host socket) is refused, a stream pair works.
t_landlock_datagram_pair_refused() {
  esc --isolation landlock -- tryops pair pair
  [ "$RC" != 125 ] || skip_case "no --isolation landlock here: $(head -c 200 "$ERRF")"
  [ "$RC" = 0 ] || die "$(last_run)"
  want_refused pair EPERM
  esc_ok -- tryops pair pair
  want_ok pair
}

# What was checked is what is connected to: a second thread flips the address in memory
# between the command's own socket and a host server's during thousands of connects.
t_race_rewrites_the_address() {
  start_unix_server "$WS/hst.sock"
  # positive control: without cordon the same program reaches both
  host_run sockrace "$WS/ow1.sock" "$WS/hst.sock" 0.5
  [ "$(result race_host)" = ok ] || skip_case "the race program never reached the host server without cordon ($OUT)"
  esc -- sockrace "$WS/own.sock" "$WS/hst.sock" 2
  [ "$RC" = 0 ] || die "the race program failed: $(last_run)"
  want_ok race_control
  want_refused race_host EACCES
}

# The case of issue 19: the host's tmux server, its socket in /tmp as the workspace.
t_tmux_server_refused() {
  command -v tmux >/dev/null || skip_case "tmux is not installed (./bootstrap.sh installs it)"
  local sockdir proof
  sockdir=$WS/tmux
  mkdir "$sockdir"
  chmod 0700 "$sockdir"
  proof=$OUTSIDE/proof
  # (its default shell: $SHELL, else the password file's, which is nologin for uid 65534)
  SHELL=/bin/sh tmux -S "$sockdir/default" -f /dev/null new-session -d -s cordon-escape "sleep 60" </dev/null || die "cannot start a host tmux server"
  # positive control: the server runs what a client asks, on the host
  local i
  for ((i = 0; i < 100; i++)); do
    tmux -S "$sockdir/default" run-shell "touch $CT/host-proof" 2>"$CT/tmux.err" && [ -e "$CT/host-proof" ] && break
    sleep 0.05
  done
  if [ ! -e "$CT/host-proof" ]; then
    tmux -S "$sockdir/default" kill-server 2>/dev/null || true
    die "positive control: the host tmux server does not run run-shell: $(head -c 300 "$CT/tmux.err"); $(ls -la "$sockdir" 2>&1 | tr '\n' ' ')"
  fi
  crun run -- tmux -S "$sockdir/default" run-shell "touch $proof"
  local rc=$RC
  tmux -S "$sockdir/default" kill-server 2>/dev/null || true
  [ ! -e "$proof" ] || die "ESCAPE: the host's tmux server ran a command from inside the sandbox"
  [ "$rc" != 0 ] || die "tmux inside reached the host server ($(last_run))"
  assert_contains "$ERR" "cordon: refused connect $sockdir/default"
}

# --base host: /run, /var/run and $XDG_RUNTIME_DIR are hidden (docker.sock, D-Bus, agents).
t_run_hidden_base_host() {
  local d rundir=""
  d=$(scratch_outside_tmp)
  mkdir "$d/xdg"
  chmod 0700 "$d/xdg"
  start_unix_server "$d/xdg/bus"
  if [ "$MY_UID" = 0 ]; then
    rundir=/run/cordon-escape-$$-$RANDOM
    mkdir "$rundir"
    echo "$rundir" >>"$T/.rmdirs"
    start_unix_server "$rundir/docker.sock"
  fi
  export XDG_RUNTIME_DIR=$d/xdg
  esc_ok --base host -- tryops connect xdg "$d/xdg/bus" ${rundir:+connect run "$rundir/docker.sock" connect var_run "/var/run/${rundir#/run/}/docker.sock"}
  want_refused xdg ENOENT
  if [ -n "$rundir" ]; then
    want_refused run ENOENT
    want_refused var_run ENOENT
  fi
  # /run itself is an empty directory inside (the host's is not)
  [ -n "$(ls -A /run)" ] || die "positive control: the host's /run is empty here"
  expect_output "" run --base host -- sh -c 'ls -A /run; ls -A /var/run/'
  # positive controls: a rule that shows them lifts the hiding (and --allow-socket lets
  # the command use the sockets shown)
  esc_ok --base host --allow-ro "$d/xdg" --allow-socket "$d/xdg/bus" ${rundir:+--allow-ro /run --allow-socket "$rundir/docker.sock"} -- tryops connect xdg "$d/xdg/bus" ${rundir:+connect run "$rundir/docker.sock"}
  assert_eq "$(detail xdg)" pong-from-host "a rule that shows \$XDG_RUNTIME_DIR"
  [ -z "$rundir" ] || assert_eq "$(detail run)" pong-from-host "a rule that shows /run"
}

# Files of /etc that point into /run (systemd-resolved's resolv.conf) still read.
t_etc_links_into_run() {
  local f found=""
  for f in /etc/resolv.conf /etc/machine-id /etc/hostname /etc/hosts /etc/localtime /etc/timezone; do
    [ -L "$f" ] && case $(readlink -f "$f") in /run/* | /var/run/*) found=$f; break ;; esac
  done
  [ -n "$found" ] || skip_case "no file of /etc is a symlink into /run on this host (systemd-resolved's resolv.conf is one)"
  expect_output "$(cat "$found")" run --base host -- cat "$found"
}

run_case run_hidden_base_host t_run_hidden_base_host
run_case etc_links_into_run t_etc_links_into_run
run_case abstract_network_none t_abstract_network_none
run_case abstract_network_host t_abstract_network_host
run_case path_socket_hidden t_path_socket_hidden
run_case path_socket_base_host t_path_socket_base_host
run_case host_socket_workspace t_host_socket_workspace
run_case host_socket_allow_ro t_host_socket_allow_ro
run_case host_dgram_refused t_host_dgram_refused
run_case own_sockets_work t_own_sockets_work
run_case race_rewrites_the_address t_race_rewrites_the_address
run_case session_host_socket t_session_host_socket
run_case landlock_datagram_pair_refused t_landlock_datagram_pair_refused
run_case tmux_server_refused t_tmux_server_refused
finish
