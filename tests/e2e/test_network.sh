#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --network none (the default): own namespace with only loopback, up; the host's loopback
# services (TCP and abstract unix sockets) are unreachable. --network host reaches the
# host's TCP loopback.
# Every server here listens on 127.0.0.1 or an abstract socket and stops by itself.
. "$(dirname "$0")/lib.sh"

host_can_reach() {
  local got
  got=$("$PY" -c "$TCP_CLIENT" "$SERVER_PORT" 2>&1 || true)
  [ "$got" = pong ] || die "positive control failed: the host cannot reach its own test server on 127.0.0.1:$SERVER_PORT ($got)"
}

t_none_blocks_host_loopback() {
  start_tcp_server 30
  host_can_reach
  crun run --network none -- "$PY" -c "$TCP_CLIENT" "$SERVER_PORT"
  case $OUT in
    pong*) die "--network none reached a server on the host loopback (127.0.0.1:$SERVER_PORT)" ;;
  esac
  [ "$RC" = 3 ] || die "expected the client to fail to connect (exit 3), got $(last_run)"
  host_can_reach
}

t_default_is_none() {
  start_tcp_server 30
  host_can_reach
  crun run -- "$PY" -c "$TCP_CLIENT" "$SERVER_PORT"
  case $OUT in
    pong*) die "the default network reached a server on the host loopback (127.0.0.1:$SERVER_PORT)" ;;
  esac
  [ "$RC" = 3 ] || die "expected the client to fail to connect (exit 3), got $(last_run)"
}

t_none_loopback_inside_works() {
  expect_output "pong" run --network none -- "$PY" -c '
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
c = socket.create_connection(s.getsockname(), timeout=3)
a, _ = s.accept()
a.sendall(b"pong\n")
print(c.makefile().readline().strip())
'
}

t_none_only_loopback_interface() {
  crun run --network none -- sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "lo" "network interfaces inside with --network none"
}

t_host_reaches_host_loopback() {
  start_tcp_server 30
  host_can_reach
  expect_output "pong" run --network host -- "$PY" -c "$TCP_CLIENT" "$SERVER_PORT"
}

t_abstract_unix_socket_isolated() {
  local m name ready=$CT/abstract.ready pid
  m=$(new_mark)
  name="cordon-e2e-$m"
  "$PY" -c '
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("\0" + sys.argv[1])
s.listen(8)
open(sys.argv[2], "w").close()
s.settimeout(0.5)
deadline = time.time() + 30
n = 0
while time.time() < deadline and n < 50:
    try:
        c, _ = s.accept()
    except socket.timeout:
        continue
    n += 1
    c.sendall(b"pong\n")
    c.close()
' "$name" "$ready" </dev/null >/dev/null 2>&1 &
  pid=$!
  track_pid "$pid" "$name"
  local i
  for ((i = 0; i < 100; i++)); do [ -e "$ready" ] && break; sleep 0.05; done
  [ -e "$ready" ] || die "could not start the abstract socket server"
  local client='
import socket, sys
try:
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.settimeout(3)
    c.connect("\0" + sys.argv[1])
    print(c.makefile().readline().strip())
except Exception as e:
    print("error:", type(e).__name__, e)
    sys.exit(3)
'
  local got
  got=$("$PY" -c "$client" "$name" 2>&1 || true)
  [ "$got" = pong ] || die "positive control failed: the host cannot reach its abstract socket ($got)"
  crun run --network none -- "$PY" -c "$client" "$name"
  case $OUT in pong*) die "--network none reached the host's abstract unix socket @$name" ;; esac
  [ "$RC" = 3 ] || die "expected the client to fail (exit 3), got $(last_run)"
  # (no claim about --network host: cordon also scopes abstract sockets to the sandbox
  # with Landlock where the kernel can, so that X11's and D-Bus's stay out of reach)
}

t_settings_network_true_is_host() {
  start_tcp_server 30
  host_can_reach
  printf '{"sandbox": {"network": true}}\n' >"$CT/settings.json"
  expect_output "pong" run --settings "$CT/settings.json" -- "$PY" -c "$TCP_CLIENT" "$SERVER_PORT"
  printf '{"sandbox": {"network": false}}\n' >"$CT/settings-off.json"
  crun run --settings "$CT/settings-off.json" -- "$PY" -c "$TCP_CLIENT" "$SERVER_PORT"
  case $OUT in pong*) die "settings network:false reached the host loopback" ;; esac
  [ "$RC" = 3 ] || die "expected the client to fail to connect (exit 3), got $(last_run)"
}

run_case none_blocks_host_loopback t_none_blocks_host_loopback
run_case default_is_none t_default_is_none
run_case none_loopback_inside_works t_none_loopback_inside_works
run_case none_only_loopback_interface t_none_only_loopback_interface
run_case host_reaches_host_loopback t_host_reaches_host_loopback
run_case abstract_unix_socket_isolated t_abstract_unix_socket_isolated
run_case settings_network_true_is_host t_settings_network_true_is_host
finish
