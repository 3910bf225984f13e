#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Getting out through --network proxy and cordon's filtering proxy: a host Unix socket in
# the view, taking over the listening sockets, killing what holds them, and the address
# forms and names that would reach the host's loopback through the proxy. Each attempt
# next to a positive control (the same route for what is allowed). Servers and traffic
# stay on 127.0.0.1; names come from --add-host.
. "$(dirname "$0")/lib.sh"
. "$E2E_DIR/netlib.sh"

t_unix_socket_in_view() {
  start_py_server P "$FAKE_PROXY_SERVE"
  local sock=$OUTSIDE/agent.sock ready=$CT/unix.ready
  "$PY" -c '
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1]); s.listen(4); open(sys.argv[2], "w").close()
s.settimeout(0.5); end = time.time() + 30
while time.time() < end:
    try:
        c, _ = s.accept()
    except socket.timeout:
        continue
    c.sendall(b"pong\n"); c.close()
' "$sock" "$ready" </dev/null >/dev/null 2>&1 &
  track_pid $! "$sock"
  local i
  for ((i = 0; i < 100; i++)); do [ -e "$ready" ] && break; sleep 0.05; done
  local client='
import socket, sys
try:
    c = socket.socket(socket.AF_UNIX); c.settimeout(3); c.connect(sys.argv[1])
    print(c.makefile().readline().strip())
except OSError as e:
    print("refused", e.errno)
'
  # control: a view that shows the socket, and --allow-socket that names it, let connect(2)
  # through (without it the supervisor refuses it: escape/sockets)
  crun run --allow-ro "$OUTSIDE" --allow-socket "$sock" -- "$PY" -c "$client" "$sock"
  assert_eq "$OUT" pong "control: the host socket through the view ($(last_run))"
  crun run --allow-ro "$OUTSIDE" -- "$PY" -c "$client" "$sock"
  assert_eq "$OUT" "refused 13" "a host Unix socket the view shows, not named by --allow-socket"
  crun run --network proxy --env "HTTP_PROXY=http://127.0.0.1:$P" --allow-ro "$OUTSIDE" --allow-socket "$sock" -- "$PY" -c "$client" "$sock"
  assert_eq "$OUT" "refused 1" "a host Unix socket in proxy mode (EPERM from seccomp)"
}

t_listeners_cannot_be_taken() {
  start_py_server P "$FAKE_PROXY_SERVE"
  # the bridged proxy's port inside cannot be bound again (nor shared: the listener has no
  # SO_REUSEPORT), so no process of the command's can stand in for the proxy
  crun run --network proxy --env "HTTP_PROXY=http://127.0.0.1:$P" -- "$PY" -c '
import socket, sys
port = int(sys.argv[1])
def bind(reuseport):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuseport:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        s.bind(("127.0.0.1", port))
        s.listen(1)
        return "bound"
    except OSError:
        return "refused"
free = socket.socket(); free.bind(("127.0.0.1", 0))
print(bind(False), bind(True), "control", "bound" if free.getsockname()[1] else "?")
' "$P"
  assert_eq "$OUT" "refused refused control bound" "binding the bridged proxy's port inside ($(last_run))"
}

t_bridge_survives_kill_all() {
  start_py_server P "$FAKE_PROXY_SERVE"
  # a process stops everything it may signal (kill(-1) spares only itself and PID 1), then
  # uses the bridge: nothing it can reach holds the bridge up
  crun run --network proxy --env "HTTP_PROXY=http://127.0.0.1:$P" -- "$PY" -c '
import os, signal, socket, sys
port = int(sys.argv[1])
pid = os.fork()
if pid == 0:
    os.setsid()
    os.kill(-1, signal.SIGSTOP)
    try:
        c = socket.create_connection(("127.0.0.1", port), timeout=3)
        c.sendall(b"GET http://x/ HTTP/1.1\r\n")
        print(c.makefile().readline().strip(), flush=True)
    except OSError as e:
        print("error", e, flush=True)
    os.kill(-1, signal.SIGCONT)
    os._exit(0)
os.waitpid(pid, 0)
' "$P"
  assert_eq "$OUT" "proxy saw: GET http://x/ HTTP/1.1" "the bridge with every other process of the sandbox stopped ($(last_run))"
}

# raw_connect HOST:PORT inside: a CONNECT through cordon's proxy; prints the status line.
RAW_CONNECT='
import os, socket, sys
port = int(os.environ["HTTPS_PROXY"].rsplit(":", 1)[1])
for target in sys.argv[1:]:
    c = socket.create_connection(("127.0.0.1", port), timeout=5)
    c.sendall(b"CONNECT %s HTTP/1.1\r\n\r\n" % target.encode())
    print(target, c.makefile("rb").readline().decode().strip())
'

# SOCKS5 CONNECT with a raw address type: 1 IPv4, 4 IPv6, 3 a name; prints the reply code.
RAW_SOCKS='
import os, socket, struct, sys
port = int(os.environ["HTTPS_PROXY"].rsplit(":", 1)[1])
for spec in sys.argv[1:]:
    kind, addr, dport = spec.split(",")
    c = socket.create_connection(("127.0.0.1", port), timeout=5)
    c.sendall(b"\x05\x01\x00")
    c.recv(2)
    if kind == "4":
        a = b"\x01" + socket.inet_pton(socket.AF_INET, addr)
    elif kind == "6":
        a = b"\x04" + socket.inet_pton(socket.AF_INET6, addr)
    else:
        a = b"\x03" + bytes([len(addr)]) + addr.encode()
    c.sendall(b"\x05\x01\x00" + a + struct.pack("!H", int(dport)))
    r = c.recv(10)
    print(spec, r[1] if len(r) > 1 else "closed")
'

t_proxy_to_host_loopback() {
  start_py_server O "$HTTP_SERVE"
  start_py_server S "$PONG_SERVE"
  # only api.test (at 127.0.0.1, named exactly) is allowed: every other way to the host's
  # loopback is refused, however the address is written
  crun run --allow-domain api.test --add-host api.test=127.0.0.1 --allow-domain '*.evil.test' \
    --add-host rebind.evil.test=127.0.0.1 -- "$PY" -c "$RAW_CONNECT" \
    "api.test:$O" "127.0.0.1:$S" "[::1]:$S" "[::ffff:127.0.0.1]:$S" "127.1:$S" "2130706433:$S" \
    "0x7f000001:$S" "localhost:$S" "LOCALHOST.:$S" "rebind.evil.test:$S" "0.0.0.0:$S" "[::]:$S"
  [ "$RC" = 0 ] || die "run failed: $(last_run)"
  assert_eq "$OUT" "api.test:$O HTTP/1.1 200 Connection Established
127.0.0.1:$S HTTP/1.1 403 Forbidden
[::1]:$S HTTP/1.1 403 Forbidden
[::ffff:127.0.0.1]:$S HTTP/1.1 403 Forbidden
127.1:$S HTTP/1.1 400 Bad Request
2130706433:$S HTTP/1.1 400 Bad Request
0x7f000001:$S HTTP/1.1 400 Bad Request
localhost:$S HTTP/1.1 403 Forbidden
LOCALHOST.:$S HTTP/1.1 403 Forbidden
rebind.evil.test:$S HTTP/1.1 403 Forbidden
0.0.0.0:$S HTTP/1.1 403 Forbidden
[::]:$S HTTP/1.1 403 Forbidden" "CONNECT to the host's loopback"
  crun run --allow-domain api.test --add-host api.test=127.0.0.1 -- "$PY" -c "$RAW_SOCKS" \
    "n,api.test,$O" "4,127.0.0.1,$S" "6,::1,$S" "6,::ffff:127.0.0.1,$S" "n,127.0.0.1,$S" "n,localhost,$S" \
    "4,169.254.169.254,80"
  [ "$RC" = 0 ] || die "run failed: $(last_run)"
  assert_eq "$OUT" "n,api.test,$O 0
4,127.0.0.1,$S 2
6,::1,$S 2
6,::ffff:127.0.0.1,$S 2
n,127.0.0.1,$S 2
n,localhost,$S 2
4,169.254.169.254,80 2" "SOCKS5 to the host's loopback (0: granted, 2: not allowed by the rules)"
}

run_case unix_socket_in_view t_unix_socket_in_view
run_case listeners_cannot_be_taken t_listeners_cannot_be_taken
run_case bridge_survives_kill_all t_bridge_survives_kill_all
run_case proxy_to_host_loopback t_proxy_to_host_loopback
finish
