#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --network proxy over the proxy variables (the loopback proxies they name, bridged into
# the sandbox's own network namespace, the variables rewritten), --forward-port and
# --publish-port, the seccomp filter of proxy mode, and the network helper's lifetime.
# Every server is the test's own, on 127.0.0.1.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netlib.sh"

t_bridge_end_to_end() {
  start_py_server P "$FAKE_PROXY_SERVE"
  # positive control: the host reaches its fake proxy; without a bridge the sandbox does not
  got=$("$PY" -c "$CLIENT" "$P" "GET / HTTP/1.0" 2>&1 || true)
  assert_eq "$got" "proxy saw: GET / HTTP/1.0" "host control"
  crun run --network none -- "$PY" -c "$CLIENT" "$P" hello
  [ "$RC" = 3 ] || die "--network none reached the host's loopback: $(last_run)"
  crun run --network proxy --env "HTTP_PROXY=http://127.0.0.1:$P" -- sh -c \
    'echo "$HTTP_PROXY"; port=${HTTP_PROXY##*:}; "$0" -c "$1" "$port" "GET http://x/ HTTP/1.1"' "$PY" "$CLIENT"
  [ "$RC" = 0 ] || die "bridged run failed: $(last_run)"
  assert_eq "$OUT" "http://127.0.0.1:$P
proxy saw: GET http://x/ HTTP/1.1" "the bridged proxy, through its rewritten variable"
}

t_bridge_rewrites_variables() {
  start_py_server P "$FAKE_PROXY_SERVE"
  start_py_server Q "$FAKE_PROXY_SERVE"
  # localhost, user information, a path, no scheme, IPv6 loopback's form, several variables
  # naming one proxy (one bridge), two proxies (two bridges); NO_PROXY untouched
  crun run --network proxy --forward-port "$Q" \
    --env "HTTPS_PROXY=http://user:pw@localhost:$P/" --env "https_proxy=localhost:$P" \
    --env "ALL_PROXY=socks5h://127.0.0.1:$Q" --env "npm_config_proxy=http://127.0.0.1:$P" \
    --env "NO_PROXY=localhost" -- sh -c 'env | grep -i proxy | sort'
  [ "$RC" = 0 ] || die "run failed: $(last_run)"
  # Q is also forwarded, so the bridge to the proxy on Q gets another port inside (30000)
  assert_eq "$OUT" "ALL_PROXY=socks5h://127.0.0.1:30000
HTTPS_PROXY=http://user:pw@127.0.0.1:$P/
NO_PROXY=localhost
https_proxy=127.0.0.1:$P
npm_config_proxy=http://127.0.0.1:$P" "rewritten proxy variables"
  expect_ok explain --network proxy --forward-port "$Q" --env "HTTPS_PROXY=http://localhost:$P" \
    --env "ALL_PROXY=socks5h://127.0.0.1:$Q"
  assert_contains "$OUT" "bridge   127.0.0.1:$P" "explain: the bridge"
  assert_contains "$OUT" "-> host 127.0.0.1:$P (or [::1]:$P)  [HTTPS_PROXY]" "explain: localhost's two addresses"
  assert_contains "$OUT" "bridge   127.0.0.1:30000" "explain: the moved bridge"
  assert_contains "$OUT" "forward  127.0.0.1:$Q" "explain: the forwarded port"
}

t_bridge_keep_env() {
  start_py_server P "$FAKE_PROXY_SERVE"
  export HTTPS_PROXY=http://127.0.0.1:$P
  crun run --network proxy --keep-env HTTPS_PROXY -- "$PY" -c "$CLIENT" "$P" "CONNECT a:1 HTTP/1.1"
  assert_eq "$OUT" "proxy saw: CONNECT a:1 HTTP/1.1" "a proxy variable passed with --keep-env is bridged ($(last_run))"
  # not passed to the command: not bridged, and proxy mode has nothing to reach
  expect_exit 125 run --network proxy -- true
  assert_contains "$ERR" "no proxy variable" "message without proxy variables"
  assert_contains "$ERR" "keep HTTPS_PROXY from the caller's environment" "the message names the fix"
  assert_contains "$ERR" "(--network)" "the command line names the flag"
}

t_bridge_bad_variables() {
  local v
  for v in "ftp2://127.0.0.1:3128" "http://" "http://127.0.0.1:0" "http://127.0.0.1:70000" \
    "http://127.0.0.1:12a" "http://[::1" "http://a b:1" "http://0x7f.1:3128"; do
    expect_exit 125 run --network proxy --env "HTTP_PROXY=$v" -- true
    assert_contains "$ERR" "cannot be bridged" "HTTP_PROXY=$v"
    assert_cordon_stderr
  done
  expect_exit 125 run --network proxy --env "HTTPS_PROXY=http://proxy.example.com:3128" -- true
  assert_contains "$ERR" "not on this host's loopback" "a remote proxy"
  # an empty variable names nothing; with a loopback one beside it, the run goes on
  start_py_server P "$FAKE_PROXY_SERVE"
  expect_ok run --network proxy --env "FTP_PROXY=" --env "HTTP_PROXY=http://127.0.0.1:$P" -- true
}

t_direct_egress_refused() {
  start_py_server P "$FAKE_PROXY_SERVE"
  start_py_server S "$PONG_SERVE"
  got=$("$PY" -c "$CLIENT" "$S" 2>&1 || true)
  assert_eq "$got" pong "host control"
  # one run: the bridged proxy works (control), the host's other loopback port and a
  # documentation address (192.0.2.1, never routed) do not
  crun run --network proxy --env "HTTP_PROXY=http://127.0.0.1:$P" -- "$PY" -c '
import socket, sys
def try_(addr):
    try:
        socket.create_connection(addr, timeout=3).close()
        return "connected"
    except OSError as e:
        return "refused"
print(try_(("127.0.0.1", int(sys.argv[1]))), try_(("127.0.0.1", int(sys.argv[2]))), try_(("192.0.2.1", 80)))
' "$P" "$S"
  [ "$RC" = 0 ] || die "run failed: $(last_run)"
  assert_eq "$OUT" "connected refused refused" "bridge / host loopback port / 192.0.2.1"
}

t_half_close_and_bulk() {
  start_py_server S "$SINK_SERVE" 60
  # the server answers only once it has read EOF: the half-close must come through, and
  # 32 MiB must arrive whole (back-pressure: the pipes never hold more than they can)
  crun run --forward-port "$S" -- "$PY" -c "$SINK_CLIENT" "$S" 33554432
  [ "$RC" = 0 ] || die "run failed: $(last_run)"
  a=$(printf '%s\n' "$OUT" | sed -n 1p)
  b=$(printf '%s\n' "$OUT" | sed -n 2p)
  [ -n "$a" ] || die "no answer after the half-close: $(last_run)"
  assert_eq "$a" "$b" "what the server read vs what was sent"
}

t_forward_port() {
  start_py_server S "$PONG_SERVE"
  crun run -- "$PY" -c "$CLIENT" "$S"
  [ "$RC" = 3 ] || die "without --forward-port the host port was reachable: $(last_run)"
  expect_output pong run --forward-port "$S" -- "$PY" -c "$CLIENT" "$S"
  expect_output pong run --network none --forward-port "$S" -- "$PY" -c "$CLIENT" "$S"
  start_py_server P "$FAKE_PROXY_SERVE"
  expect_output pong run --network proxy --env "HTTP_PROXY=http://127.0.0.1:$P" --forward-port "$S" -- \
    "$PY" -c "$CLIENT" "$S"
  # nothing listens on the host: the connection inside is reset, the log says why
  local free
  free=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  crun run --forward-port "$free" --network-log "$CT/log" --status-json "$CT/st.json" -- "$PY" -c "$CLIENT" "$free"
  [ "$RC" = 3 ] || die "expected the client to fail: $(last_run)"
  assert_eq "$(json_lines "$CT/log" '[(e["kind"], e["decision"]) for e in L]')" "[('forward', 'failed')]" "log"
  assert_contains "$(cat "$CT/log")" "Connection refused" "log reason"
  assert_eq "$(json_get "$CT/st.json" network)" '{"allowed": 0, "refused": 0, "failed": 1}' "status-json"
}

# A server inside on 127.0.0.1:$1 answering "from inside"; it writes $2 when listening and
# exits after one connection.
INSIDE_SERVER='
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(4)
open(sys.argv[2], "w").close()
s.settimeout(20)
c, _ = s.accept()
c.sendall(b"from inside\n")
c.close()
'

t_publish_port() {
  local inside=18091 host ready=$WS/ready
  host=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  timeout 30 "$CORDON" run --publish-port "127.0.0.1:$host:$inside" --network-log "$CT/log" -- \
    "$PY" -c "$INSIDE_SERVER" "$inside" "$ready" >"$CT/out" 2>"$CT/err" &
  local pid=$! i
  for ((i = 0; i < 200; i++)); do [ -e "$ready" ] && break; sleep 0.05; done
  [ -e "$ready" ] || die "the server inside did not start: $(cat "$CT/err")"
  got=$("$PY" -c "$CLIENT" "$host" 2>&1 || true)
  wait "$pid" || die "cordon failed: $(cat "$CT/err")"
  assert_eq "$got" "from inside" "the published port, from the host"
  assert_eq "$(json_lines "$CT/log" '[(e["kind"], e["decision"]) for e in L]')" "[('publish', 'allowed')]" "log"
}

t_localhost_both_families() {
  start_py_server S "$PONG_SERVE"
  # a forwarded port answers on ::1 inside too (clients of "localhost" may try it first)
  crun run --forward-port "$S" -- "$PY" -c '
import socket, sys
c = socket.create_connection(("::1", int(sys.argv[1])), timeout=5)
print(c.makefile().readline().strip())' "$S"
  if [ "$RC" != 0 ] && grep -q "Cannot assign requested address" "$ERRF"; then
    skip_case "no IPv6 loopback in the sandbox's network namespace"
  fi
  assert_eq "$OUT" pong "a forwarded port on [::1] inside ($(last_run))"
  # a published port whose server inside listens on ::1 only
  local inside=18092 host ready=$WS/ready6
  host=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  timeout 30 "$CORDON" run --publish-port "127.0.0.1:$host:$inside" -- "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_INET6)
s.bind(("::1", int(sys.argv[1])))
s.listen(4)
open(sys.argv[2], "w").close()
s.settimeout(20)
c, _ = s.accept()
c.sendall(b"from ::1 inside\n")
c.close()' "$inside" "$ready" >"$CT/out" 2>"$CT/err" &
  local pid=$! i
  for ((i = 0; i < 200; i++)); do [ -e "$ready" ] && break; sleep 0.05; done
  [ -e "$ready" ] || die "the server inside did not start: $(cat "$CT/err")"
  got=$("$PY" -c "$CLIENT" "$host" 2>&1 || true)
  wait "$pid" || die "cordon failed: $(cat "$CT/err")"
  assert_eq "$got" "from ::1 inside" "a published port served on ::1 inside"
}

t_publish_port_in_use() {
  start_py_server S "$PONG_SERVE"
  expect_exit 125 run --publish-port "127.0.0.1:$S:8000" -- true
  assert_contains "$ERR" "port $S of the host's loopback is in use" "message"
  assert_cordon_stderr
}

t_ports_bad_input() {
  local v
  for v in 0 65536 -1 abc "" 80x 1:0 1:65536 ":80" "80:" 0.0.0.0:8000:3000 127.0.0.1:8000; do
    expect_exit 125 run --publish-port "$v" -- true
    assert_cordon_stderr
  done
  # A:B is HOST:CONTAINER to a Docker user and was PORT:HOSTPORT to cordon: refused, with
  # both readings and the spelling that means one thing (issue 23)
  expect_exit 125 run --publish-port 3000:8000 -- true
  assert_contains "$ERR" "'3000:8000' is ambiguous" "the ambiguous form"
  assert_contains "$ERR" "'127.0.0.1:3000:8000' (the host's 3000 to the command's 8000)" "the fix, in Docker's order"
  assert_contains "$ERR" "cordon: --publish-port: "
  for v in 0 65536 abc "" 22:33; do
    expect_exit 125 run --forward-port "$v" -- true
    assert_cordon_stderr
  done
  expect_exit 125 run --network host --forward-port 5432 -- true
  assert_contains "$ERR" "forwarded ports need the sandbox's own network" "with --network host"
  assert_contains "$ERR" "(--forward-port)" "with --network host: the flag"
  expect_exit 125 run --forward-port 5432 --publish-port 5432 -- true
  assert_contains "$ERR" "one port cannot carry both" "forward and publish one port"
  expect_exit 125 run --forward-port 5432 --forward-port 5432 -- true
  expect_exit 125 run --network-log "$CT/log" -- true
  assert_contains "$ERR" "nothing to record" "--network-log without a network to log"
}

t_proxy_mode_sockets() {
  start_py_server P "$FAKE_PROXY_SERVE"
  local probe='
import socket
def t(f, k):
    try:
        socket.socket(f, k).close()
        return "ok"
    except OSError:
        return "refused"
a, b = socket.socketpair()
a.sendall(b"x")
print(t(socket.AF_INET, socket.SOCK_STREAM), t(socket.AF_INET6, socket.SOCK_DGRAM),
      t(socket.AF_UNIX, socket.SOCK_STREAM), t(socket.AF_NETLINK, socket.SOCK_RAW), b.recv(1).decode())
'
  expect_output "ok ok ok ok x" run --network none -- "$PY" -c "$probe"
  expect_output "ok ok refused refused x" run --network proxy --env "HTTP_PROXY=http://127.0.0.1:$P" -- "$PY" -c "$probe"
  expect_output "ok ok ok ok x" run --network proxy --allow-unix-sockets --env "HTTP_PROXY=http://127.0.0.1:$P" -- \
    "$PY" -c "$probe"
  expect_ok explain --verbose --network proxy --env "HTTP_PROXY=http://127.0.0.1:$P"
  assert_contains "$OUT" "socket(family not AF_INET, AF_INET6)" "explain: the seccomp row"
}

# cordon_procs MARK: pids of cordon processes (cordon itself, its network helper) whose
# command line holds MARK.
cordon_procs() {
  local p cmd
  for p in /proc/[0-9]*; do
    cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
    case $cmd in *cordon*"MARK=$1"*) echo "${p#/proc/}" ;; esac
  done
}

t_helper_invisible_and_gone() {
  start_py_server P "$FAKE_PROXY_SERVE"
  local m
  m=$(new_mark)
  # inside, only the command's own processes: PID 1 and the command (nothing of the helper)
  crun run --network proxy --env "HTTP_PROXY=http://127.0.0.1:$P" --env "MARK=$m" -- sh -c \
    'for p in /proc/[0-9]*; do echo "${p#/proc/}"; done'
  assert_eq "$(printf '%s\n' "$OUT" | sort -n | tr '\n' ' ')" "1 2 " "processes visible inside (PID 1 and sh)"
  # after the run, no process of it is left (the helper's command line holds the mark)
  local left
  left=$(cordon_procs "$m")
  [ -z "$left" ] || die "processes of the run are left: $left"
  # the helper holds nothing of cordon's stdout: a reader sees EOF when cordon exits
  local start end
  start=$(date +%s%N)
  out=$(timeout 10 "$CORDON" run --network proxy --env "HTTP_PROXY=http://127.0.0.1:$P" -- echo hi)
  end=$(date +%s%N)
  assert_eq "$out" hi "output"
  [ $(((end - start) / 1000000)) -lt 5000 ] || die "the reader of cordon's stdout waited $(((end - start) / 1000000)) ms"
}

t_helper_dies_with_cordon() {
  start_py_server P "$FAKE_PROXY_SERVE"
  local m
  m=$(new_mark)
  "$CORDON" run --network proxy --env "HTTP_PROXY=http://127.0.0.1:$P" --env "MARK=$m" -- sleep "1000.$m" \
    </dev/null >/dev/null 2>&1 &
  local pid=$!
  wait_for_sleepers "$m" 10 >/dev/null || die "the sandbox did not start"
  # the helper is cordon's child, outside the sandbox
  local helper
  helper=$(cordon_procs "$m" | while read -r p; do [ "$p" != "$pid" ] && [ "$(awk '{print $4}' "/proc/$p/stat")" = "$pid" ] && echo "$p"; done | head -n 1)
  [ -n "$helper" ] || die "no network helper found beside cordon"
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  local i
  for ((i = 0; i < 100; i++)); do
    [ -d "/proc/$helper" ] || break
    [ "$(awk '{print $3}' "/proc/$helper/stat" 2>/dev/null)" = Z ] && break
    sleep 0.05
  done
  [ ! -d "/proc/$helper" ] || [ "$(awk '{print $3}' "/proc/$helper/stat" 2>/dev/null)" = Z ] ||
    die "the network helper $helper outlived a killed cordon"
  wait_no_sleepers "$m" 5 || die "the sandbox outlived a killed cordon"
}

run_case bridge_end_to_end t_bridge_end_to_end
run_case bridge_rewrites_variables t_bridge_rewrites_variables
run_case bridge_keep_env t_bridge_keep_env
run_case bridge_bad_variables t_bridge_bad_variables
run_case direct_egress_refused t_direct_egress_refused
run_case half_close_and_bulk t_half_close_and_bulk
run_case forward_port t_forward_port
run_case publish_port t_publish_port
run_case localhost_both_families t_localhost_both_families
run_case publish_port_in_use t_publish_port_in_use
run_case ports_bad_input t_ports_bad_input
run_case proxy_mode_sockets t_proxy_mode_sockets
run_case helper_invisible_and_gone t_helper_invisible_and_gone
run_case helper_dies_with_cordon t_helper_dies_with_cordon
finish
