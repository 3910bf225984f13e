#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cordon as Codex's Linux sandbox helper: invoked through a link named
# codex-linux-sandbox, with the command line Codex 0.169 passes
# (--sandbox-policy-cwd D --command-cwd D --permission-profile JSON -- CMD), JSON profiles
# mapped onto cordon's policy (doc/codex.md). Each case checks what the command can read,
# write and reach, with a positive control next to every refusal.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/codex_lib.sh"

# helper ARG...: the call Codex makes, with the workspace as project root and cwd.
helper() { cx --sandbox-policy-cwd "$WS" --command-cwd "$WS" "$@"; }

t_read_only_reads_anywhere() {
  echo "data" >"$WS/in-ws"
  helper --permission-profile "$(profile "$(sp root read)")" -- sh -c '
    cat "$1" "$2" /etc/passwd >/dev/null && echo read-ok
    for p in "$3/new" "$4/new" /tmp/cordon-codex-probe.$$; do
      if (echo x >"$p") 2>/dev/null; then echo "wrote $p"; fi
    done' sh "$OUTSIDE/secret" "$WS/in-ws" "$WS" "$OUTSIDE"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_contains "$OUT" read-ok "reading outside the project under a read-only root"
  assert_not_contains "$OUT" wrote "a write under a read-only profile"
  assert_absent "$WS/new"
  assert_absent "$OUTSIDE/new"
}

t_write_only_in_writable_roots() {
  local extra=$CT/extra
  mkdir -p "$extra"
  helper --permission-profile "$(profile "$(sp root read),$(sp project_roots write),$(pe "$extra" write)")" -- \
    sh -c "$WRITABLE" sh "$WS/a" "$extra/b" "$OUTSIDE/c" "$CT/d"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "$WS/a
$extra/b" "the paths the command could write"
  assert_file_content "$WS/a" written "a write in the project root reaches the host"
  assert_file_content "$extra/b" written "a write in a writable path entry reaches the host"
  assert_absent "$OUTSIDE/c"
  assert_absent "$CT/d"
}

t_workspace_write_profile() {
  # the profile of Codex's workspace-write mode: /tmp and $TMPDIR writable as the host's
  local tmpd=$CT/tmpdir outside
  mkdir -p "$tmpd"
  outside=$(scratch_outside_tmp) # the case's own $OUTSIDE lies under /tmp, writable here
  TMPDIR=$tmpd helper --permission-profile "$(ws_profile)" -- sh -c '
    echo "$TMPDIR"; echo t >"$TMPDIR/t" && echo tmpdir-ok
    f=$(mktemp /tmp/cordon-codex.XXXXXX) && echo slash-tmp-ok && rm -f "$f"
    echo w >"$1/w" && echo ws-ok; (echo x >"$2/x") 2>/dev/null || echo outside-refused' sh "$WS" "$outside"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "$tmpd
tmpdir-ok
slash-tmp-ok
ws-ok
outside-refused" "workspace-write: TMPDIR kept and writable, /tmp and the project writable, the rest not"
  assert_file_content "$tmpd/t" t "a write in \$TMPDIR reaches the host's TMPDIR"
}

t_deny_carveouts_reopened() {
  mkdir -p "$WS/a/b"
  echo top >"$WS/a/secret"
  echo deeper >"$WS/a/b/keep"
  helper --permission-profile "$(profile "$(sp root read),$(pe "$WS" write),$(pe "$WS/a" deny),$(pe "$WS/a/b" write)")" -- \
    sh -c 'cat "$1/a/secret" 2>/dev/null || echo secret-hidden; cat "$1/a/b/keep"; echo n >"$1/a/b/new" && echo reopened-writable
      (echo n >"$1/a/new") 2>/dev/null || echo denied-unwritable; echo r >"$1/root-ok" && echo root-writable' sh "$WS"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "secret-hidden
deeper
reopened-writable
denied-unwritable
root-writable" "/repo = write, /repo/a = deny, /repo/a/b = write"
  assert_file_content "$WS/a/b/new" n
  assert_absent "$WS/a/new"
  # equal paths: deny beats write
  helper --permission-profile "$(profile "$(sp root read),$(pe "$WS/a" write),$(pe "$WS/a" deny)")" -- \
    sh -c 'cat "$1/a/secret" 2>/dev/null || echo hidden' sh "$WS"
  assert_eq "$OUT" hidden "at one path deny beats write"
}

t_glob_denies() {
  mkdir -p "$WS/src/deep"
  echo k >"$WS/.env"
  echo k >"$WS/src/.env"
  echo k >"$WS/src/deep/prod.env"
  echo code >"$WS/src/main.c"
  # readable: the content shows (cordon hides a match as an empty file, Codex as an unreadable one)
  local show='for f do if [ -n "$(cat "$f" 2>/dev/null)" ]; then echo "readable ${f#$0/}"; fi; done'
  helper --permission-profile "$(profile "$(sp root read),$(sp project_roots write),$(ge '**/*.env' deny)")" -- \
    sh -c "$show" "$WS" "$WS/.env" "$WS/src/.env" "$WS/src/deep/prod.env" "$WS/src/main.c"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "readable src/main.c" "a relative glob denies every match under the project root"
  # glob_scan_max_depth 2: the walk stops two levels below the prefix
  helper --permission-profile "$(profile "$(sp root read),$(sp project_roots write),$(ge "$WS/**/*.env" deny)" restricted '"glob_scan_max_depth":2')" -- \
    sh -c "$show" "$WS" "$WS/.env" "$WS/src/.env" "$WS/src/deep/prod.env"
  assert_eq "$OUT" "readable src/deep/prod.env" "glob_scan_max_depth 2"
  # a glob that does not parse fails closed (Codex runs without it): exit 1, nothing runs
  helper --permission-profile "$(profile "$(sp root read),$(sp project_roots write),$(ge "$WS/[a" deny)")" -- touch "$WS/ran"
  [ "$RC" = 1 ] || die "a malformed glob: expected exit 1, got $(last_run)"
  assert_absent "$WS/ran"
  # a glob that names no directory prefix cannot be expanded safely: exit 1, nothing runs
  helper --permission-profile "$(profile "$(sp root read),$(ge '/**/*.env' deny)")" -- touch "$WS/ran"
  [ "$RC" = 1 ] || die "a glob without a static prefix: expected exit 1, got $(last_run)"
  assert_cordon_stderr
  assert_absent "$WS/ran"
}

t_protected_metadata() {
  command -v git >/dev/null || skip_case "git not installed"
  git -C "$WS" init -q
  mkdir "$WS/.codex" "$WS/.agents"
  echo cfg >"$WS/.codex/config.toml"
  local before
  before=$(snapshot "$WS/.git")
  helper --permission-profile "$(ws_profile)" -- sh -c '
    for p in .git/config .git/HEAD .git/newfile .codex/config.toml .codex/x .agents/x .aws .agents/skills; do
      if (echo x >"$p") 2>/dev/null || mkdir "$p" 2>/dev/null; then echo "changed $p"; fi
    done
    cat .codex/config.toml; echo ok >plain && echo plain-ok'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "cfg
plain-ok" ".git (wholly), .codex, .agents and .aws are read-only and cannot be created under the project root"
  assert_unchanged "$before" "$WS/.git" ".git changed"
  assert_absent "$WS/.aws"
  assert_file_content "$WS/.codex/config.toml" cfg
  assert_contains "$ERR" "cordon: refused" "the refusals are explained on stderr"
}

t_worktree_gitdir_read_only() {
  command -v git >/dev/null || skip_case "git not installed"
  local repo=$CT/repo wt=$CT/wt
  git init -q "$repo"
  git -C "$repo" -c user.email=t@e -c user.name=t commit -q --allow-empty -m init
  git -C "$repo" worktree add -q "$wt" 2>/dev/null
  cd "$wt"
  cx --sandbox-policy-cwd "$wt" --command-cwd "$wt" --permission-profile "$(ws_profile)" -- sh -c '
    (echo x >.git) 2>/dev/null && echo ".git file changed"
    gd=$(sed -n "s/^gitdir: //p" .git); (echo x >"$gd/HEAD") 2>/dev/null && echo "gitdir changed"
    echo ok >f && echo worktree-writable'
  cd "$WS"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" worktree-writable "the .git file and its gitdir: target are read-only"
  git -C "$wt" status --short >/dev/null || die "the worktree is broken after the run"
}

t_parent_repo_stays_discoverable() {
  command -v git >/dev/null || skip_case "git not installed"
  local repo=$CT/repo
  git init -q "$repo"
  mkdir "$repo/sub"
  cd "$repo/sub"
  cx --sandbox-policy-cwd "$repo/sub" --command-cwd "$repo/sub" --permission-profile "$(ws_profile)" -- \
    sh -c 'git rev-parse --show-toplevel; ls -A; mkdir .git 2>/dev/null && echo made-git; git init -q . 2>/dev/null && echo init-ok; true'
  cd "$WS"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "$repo" "git finds the parent repository from a project root without .git, which stays uncreatable"
  assert_absent "$repo/sub/.git"
}

t_network_restricted() {
  start_tcp_server 30
  local got
  got=$("$PY" -c "$TCP_CLIENT" "$SERVER_PORT" 2>&1 || true)
  [ "$got" = pong ] || die "positive control: the host cannot reach its test server ($got)"
  local probe='
    (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null && echo devtcp-connected
    "$2" -c "$3" "$1" 2>/dev/null | grep -q pong && echo python-connected
    if command -v curl >/dev/null; then curl -s -m 3 "http://127.0.0.1:$1/" >/dev/null 2>&1 && echo curl-connected; fi
    getent ahosts cordon-codex-test.invalid >/dev/null 2>&1 && echo resolved
    echo done'
  helper --permission-profile "$(profile "$(sp root read)")" -- bash -c "$probe" bash "$SERVER_PORT" "$PY" "$TCP_CLIENT"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" done "network restricted: /dev/tcp, python, curl and name lookups reach nothing"
  # what does work with the network restricted (0.169's helper refuses both): a socket
  # pair's send and setsockopt, and loopback inside the sandbox's own network namespace
  helper --permission-profile "$(profile "$(sp root read)")" -- "$PY" -c '
import socket
a, b = socket.socketpair(); a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536); a.send(b"x")
print("pair", b.recv(1).decode())
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
c = socket.create_connection(s.getsockname(), timeout=3); print("loopback-inside ok")'
  assert_eq "$OUT" "pair x
loopback-inside ok" "socket pairs and the sandbox's own loopback with the network restricted"
  # positive control: "enabled" reaches the host's loopback
  helper --permission-profile "$(profile "$(sp root read)" enabled)" -- bash -c "$probe" bash "$SERVER_PORT" "$PY" "$TCP_CLIENT"
  assert_contains "$OUT" python-connected "network enabled reaches the host"
  assert_contains "$OUT" devtcp-connected "network enabled reaches the host"
}

t_proxy_mode() {
  # a loopback HTTP proxy on the host that answers every request itself
  local portfile=$CT/proxy.port
  "$PY" -c '
import http.server, socketserver, sys, os
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"proxied " + self.path.encode())
    def log_message(self, *a): pass
s = socketserver.TCPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".t", "w").write(str(s.server_address[1])); os.rename(sys.argv[1] + ".t", sys.argv[1])
s.timeout = 30; s.handle_request(); s.handle_request()' "$portfile" &
  track_pid $! "$portfile"
  local i
  for ((i = 0; i < 100; i++)); do [ -s "$portfile" ] && break; sleep 0.05; done
  local port
  port=$(cat "$portfile")
  local fetch='import os, urllib.request
print(urllib.request.urlopen("http://example.invalid/x", timeout=5).read().decode())'
  http_proxy=http://127.0.0.1:$port helper --permission-profile "$(profile "$(sp root read)")" \
    --managed-network '{"loopbackPorts":[],"dangerouslyAllowAllUnixSockets":false}' -- "$PY" -c "$fetch"
  case $ERR in *"not on this build"*) skip_case "proxy mode not on this build (--network proxy, issue 12): $(head -c 200 "$ERRF")" ;; esac
  [ "$RC" = 0 ] || die "proxy mode: expected exit 0, got $(last_run)"
  assert_eq "$OUT" "proxied http://example.invalid/x" "the request went through the loopback proxy"
  # nothing else is reachable: the host's loopback test server
  start_tcp_server 30
  http_proxy=http://127.0.0.1:$port helper --permission-profile "$(profile "$(sp root read)")" \
    --managed-network '{}' -- "$PY" -c "$TCP_CLIENT" "$SERVER_PORT"
  assert_ne "$OUT" pong "proxy mode reached a host server that is not a proxy"
  # AF_UNIX sockets: refused (socket pairs stay), unless dangerouslyAllowAllUnixSockets
  local unix='import socket
a, b = socket.socketpair(); a.send(b"x"); print("pair", b.recv(1).decode())
try:
    socket.socket(socket.AF_UNIX).close(); print("unix allowed")
except PermissionError:
    print("unix refused")'
  http_proxy=http://127.0.0.1:$port helper --permission-profile "$(profile "$(sp root read)")" --managed-network '{}' -- "$PY" -c "$unix"
  assert_eq "$OUT" "pair x
unix refused" "proxy mode: AF_UNIX sockets refused, socket pairs kept"
  http_proxy=http://127.0.0.1:$port helper --permission-profile "$(profile "$(sp root read)")" \
    --managed-network '{"dangerouslyAllowAllUnixSockets":true}' -- "$PY" -c "$unix"
  assert_eq "$OUT" "pair x
unix allowed" "proxy mode with dangerouslyAllowAllUnixSockets"
}

# A host service's Unix socket in a writable root is refused (EACCES) in every network
# mode; allowUnixSockets names the ones the command may reach (as cordon run's
# --allow-socket; socket(AF_UNIX) itself needs dangerouslyAllowAllUnixSockets in proxy mode).
t_host_unix_sockets() {
  local sock=$WS/agent.sock ready=$CT/agent.ready i
  "$PY" -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4); open(sys.argv[2], "w").close()
s.settimeout(0.5); end = time.time() + 30
while time.time() < end:
    try:
        c, _ = s.accept()
    except socket.timeout:
        continue
    c.sendall(b"pong\n"); c.close()
' "$sock" "$ready" </dev/null >/dev/null 2>&1 &
  track_pid $! "$sock"
  for ((i = 0; i < 100; i++)); do [ -e "$ready" ] && break; sleep 0.05; done
  [ -e "$ready" ] || die "could not start the host Unix socket server"
  local client='import socket, sys
try:
    c = socket.socket(socket.AF_UNIX); c.settimeout(3); c.connect(sys.argv[1])
    print(c.makefile().readline().strip())
except OSError as e:
    print("refused", e.errno)'
  helper --permission-profile "$(profile "$(sp root read),$(sp project_roots write)")" -- "$PY" -c "$client" "$sock"
  assert_eq "$OUT" "refused 13" "restricted network: a host socket in the project root ($(last_run))"
  start_tcp_server 30
  http_proxy=http://127.0.0.1:$SERVER_PORT helper --permission-profile "$(profile "$(sp root read)")" \
    --managed-network '{"dangerouslyAllowAllUnixSockets":true}' -- "$PY" -c "$client" "$sock"
  case $ERR in *"not on this build"*) skip_case "proxy mode not on this build: $(head -c 200 "$ERRF")" ;; esac
  assert_eq "$OUT" "refused 13" "proxy mode: a host socket allowUnixSockets does not name ($(last_run))"
  http_proxy=http://127.0.0.1:$SERVER_PORT helper --permission-profile "$(profile "$(sp root read)")" \
    --managed-network "{\"dangerouslyAllowAllUnixSockets\":true,\"allowUnixSockets\":[\"$sock\"]}" -- "$PY" -c "$client" "$sock"
  assert_eq "$OUT" "pong" "proxy mode: a host socket allowUnixSockets names ($(last_run))"
}

t_proxy_mode_needs_proxy() {
  # no proxy variable, or a remote one, or one outside loopbackPorts: exit 1, nothing runs
  env -u http_proxy -u HTTP_PROXY -u https_proxy -u HTTPS_PROXY -u ALL_PROXY -u all_proxy \
    "$CODEX_CORDON" --sandbox-policy-cwd "$WS" --permission-profile "$(profile "$(sp root read),$(sp project_roots write)")" \
    --managed-network '{}' -- touch "$WS/ran" >"$OUTF" 2>"$ERRF" && RC=0 || RC=$?
  [ "$RC" = 1 ] || die "proxy mode without proxy variables: expected exit 1, got $(last_run)"
  assert_contains "$(cat "$ERRF")" "proxy variables"
  HTTPS_PROXY=http://10.255.0.1:3128 helper --permission-profile "$(profile "$(sp root read),$(sp project_roots write)")" \
    --allow-network-for-proxy -- touch "$WS/ran"
  [ "$RC" = 1 ] || die "a remote proxy: expected exit 1, got $(last_run)"
  HTTPS_PROXY=http://127.0.0.1:3128 helper --permission-profile "$(profile "$(sp root read),$(sp project_roots write)")" \
    --managed-network '{"loopbackPorts":[8080]}' -- touch "$WS/ran"
  [ "$RC" = 1 ] || die "a proxy port outside loopbackPorts: expected exit 1, got $(last_run)"
  assert_contains "$ERR" loopbackPorts
  assert_absent "$WS/ran"
}

t_malformed_input() {
  local good
  good=$(profile "$(sp root read),$(sp project_roots write)")
  local -a bad=(
    '{'
    '[]'
    '{"type":"bogus"}'
    '{"type":"managed","file_system":{"type":"restricted"},"network":"restricted"}'
    "$(profile "$(sp nowhere read)")"
    "$(profile "$(sp root everything)")"
    "$(profile "$(pe relative/path read)")"
    "$(profile "$(pe /x read ',"missing_path_behavior":"fail"')")"
  )
  local b
  for b in "${bad[@]}"; do
    helper --permission-profile "$b" -- touch "$WS/ran"
    [ "$RC" = 2 ] || die "malformed profile $b: expected exit 2 (as the helper's parser), got $(last_run)"
    assert_cordon_stderr
  done
  helper --permission-profile "$good" --bogus -- touch "$WS/ran"
  [ "$RC" = 2 ] || die "an unknown flag: expected exit 2, got $(last_run)"
  cx --permission-profile "$good" -- touch "$WS/ran"
  [ "$RC" = 2 ] || die "no --sandbox-policy-cwd: expected exit 2, got $(last_run)"
  helper --managed-network '{' --permission-profile "$good" -- touch "$WS/ran"
  [ "$RC" = 2 ] || die "malformed --managed-network: expected exit 2, got $(last_run)"
  helper --sandbox-policy '{"type":"workspace-write","writable_roots":["rel"]}' -- touch "$WS/ran"
  [ "$RC" = 2 ] || die "a relative legacy writable root: expected exit 2, got $(last_run)"
  # set-up failures: exit 1
  helper -- touch "$WS/ran"
  [ "$RC" = 1 ] || die "no profile: expected exit 1, got $(last_run)"
  helper --permission-profile "$good"
  [ "$RC" = 1 ] || die "no command: expected exit 1, got $(last_run)"
  assert_cordon_stderr
  assert_absent "$WS/ran"
  # positive control
  helper --permission-profile "$good" -- touch "$WS/ran"
  [ "$RC" = 0 ] || die "the good profile: expected exit 0, got $(last_run)"
  assert_exists "$WS/ran"
}

t_exit_status() {
  local p
  p=$(profile "$(sp root read),$(sp project_roots write)")
  helper --permission-profile "$p" -- sh -c 'exit 3'
  assert_eq "$RC" 3 "the command's own status"
  helper --permission-profile "$p" -- sh -c 'kill -TERM $$'
  assert_eq "$RC" 143 "killed by SIGTERM: 128+15"
  helper --permission-profile "$p" -- cordon-codex-no-such-command
  assert_eq "$RC" 127 "a command that does not exist"
}

t_signals_forwarded() {
  # Codex (or a terminal) signals the helper to mean the command
  local m
  m=$(new_mark)
  "$CODEX_CORDON" --sandbox-policy-cwd "$WS" --permission-profile "$(profile "$(sp root read)")" -- \
    sh -c 'trap "echo got-term; exit 7" TERM; echo ready; sleep "30.$1" & wait' sh "$m" >"$OUTF" 2>"$ERRF" &
  local pid=$!
  wait_for_sleepers "$m" 10 >/dev/null || { kill -9 "$pid"; die "the command did not start: $(cat "$ERRF")"; }
  kill -TERM "$pid"
  local rc=0
  wait "$pid" || rc=$?
  assert_eq "$rc" 7 "SIGTERM to the helper reaches the command, whose status is the helper's"
  assert_eq "$(cat "$OUTF")" "ready
got-term"
  wait_no_sleepers "$m" 5 || die "the command's child survived"
}

t_legacy_sandbox_policy() {
  local extra=$CT/extra
  mkdir -p "$extra"
  helper --sandbox-policy "{\"type\":\"workspace-write\",\"writable_roots\":[\"$extra\"],\"network_access\":false,\"exclude_slash_tmp\":true,\"exclude_tmpdir_env_var\":true}" -- \
    sh -c "$WRITABLE" sh "$WS/a" "$extra/b" "$OUTSIDE/c" /tmp/cordon-codex-legacy.$$
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "$WS/a
$extra/b" "legacy workspace-write: the cwd and writable_roots, not /tmp (excluded)"
  helper --sandbox-policy '{"type":"read-only"}' -- sh -c "$WRITABLE" sh "$WS/z"
  assert_eq "$OUT" "" "legacy read-only"
}

t_disabled_runs_unsandboxed() {
  # {"type":"disabled"}: the helper execs the command as it is; so does cordon
  helper --permission-profile '{"type":"disabled"}' -- sh -c 'echo x >"$1/free" && echo wrote; readlink /proc/self/ns/mnt' sh "$OUTSIDE"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_contains "$OUT" wrote
  assert_contains "$OUT" "$(readlink /proc/self/ns/mnt)" "no new mount namespace"
  # unrestricted file system, restricted network: sandboxed, whole disk writable, no network
  start_tcp_server 30
  helper --permission-profile '{"type":"managed","file_system":{"type":"unrestricted"},"network":"restricted"}' -- \
    sh -c 'echo x >"$1/free2" && echo wrote; "$2" -c "$3" "$4" >/dev/null 2>&1 || echo no-network' sh "$OUTSIDE" "$PY" "$TCP_CLIENT" "$SERVER_PORT"
  assert_eq "$OUT" "wrote
no-network" "unrestricted file system with the network restricted"
  assert_file_content "$OUTSIDE/free2" x
}

t_legacy_landlock_refused() {
  helper --use-legacy-landlock --permission-profile "$(profile "$(sp root read),$(sp project_roots write)")" -- touch "$WS/ran"
  [ "$RC" = 1 ] || die "--use-legacy-landlock with a restricted file system: expected exit 1, got $(last_run)"
  assert_contains "$ERR" "--use-legacy-landlock"
  assert_absent "$WS/ran"
  helper --use-legacy-landlock --permission-profile '{"type":"managed","file_system":{"type":"unrestricted"},"network":"restricted"}' -- touch "$WS/ran"
  [ "$RC" = 0 ] || die "--use-legacy-landlock with an unrestricted file system: expected exit 0, got $(last_run)"
}

t_no_proc() {
  helper --no-proc --permission-profile "$(profile "$(sp root read)")" -- sh -c 'ls /proc/self >/dev/null 2>&1 && echo proc || echo no-proc; ls -A /proc | wc -l'
  assert_eq "$OUT" "no-proc
0" "--no-proc: no /proc (nor the host's, which the host root bound whole would bring)"
  # the same for cordon run --base host, whose root is the host's bound whole
  crun run --base host --no-proc -- sh -c 'ls -A /proc | wc -l'
  assert_eq "$OUT" 0 "cordon run --base host --no-proc shows nothing of the host's /proc"
  helper --permission-profile "$(profile "$(sp root read)")" -- sh -c 'echo $$; ls -d /proc/[0-9]* | wc -l'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  [ "${OUT%%$'\n'*}" = 2 ] && [ "${OUT##*$'\n'}" -le 4 ] ||
    die "expected a fresh /proc of the sandbox's own PID namespace (the command is PID 2, a handful of processes), got '$(printf '%s' "$OUT" | _one_line)'"
}

t_inherit_pid_namespace() {
  local m h pids
  m=$(new_mark)
  h=$(new_mark)
  sleep "300.$h" &
  local host_pid=$!
  helper --inherit-pid-namespace --permission-profile "$(profile "$(sp root read),$(sp project_roots write)")" -- sh -c '
    [ "$$" -gt 2 ] && echo host-pid
    [ -d "/proc/$1" ] && echo sees-caller-process
    (echo x >/proc/self/comm) 2>/dev/null || echo proc-read-only
    sleep "301.$2" & echo left-behind' sh "$host_pid" "$m"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "host-pid
sees-caller-process
proc-read-only
left-behind" "--inherit-pid-namespace: the caller's PID namespace and its /proc, read-only"
  kill "$host_pid" 2>/dev/null || true
  wait_no_sleepers "$m" 5 || die "the process the command left behind survived: $(find_sleepers "$m")"
  # positive control: without the option, a PID namespace of the sandbox's own
  helper --permission-profile "$(profile "$(sp root read)")" -- sh -c 'echo $$'
  assert_eq "$OUT" 2 "the command's PID in a PID namespace of the sandbox's own"
}

t_masked_proc_fallback() {
  # a container whose /proc is partly masked (a file bound over /proc/keys, as Docker
  # does): no new user namespace may mount a fresh /proc there; the helper runs with the
  # container's /proc kept, read-only (sandbox/root.c), and with --inherit-pid-namespace
  [ "$MY_UID" -eq 0 ] || skip_case "needs root to mask /proc in a mount namespace of its own (runs in the root pass)"
  command -v unshare >/dev/null || skip_case "unshare not installed"
  [ -e /proc/keys ] || skip_case "no /proc/keys to mask"
  local prof
  prof=$(profile "$(sp root read),$(sp project_roots write)")
  unshare -m --propagation private sh -c 'mount --bind /dev/null /proc/keys && exec "$@"' sh \
    "$CODEX_CORDON" --sandbox-policy-cwd "$WS" --permission-profile "$prof" -- sh -c 'touch "$1/ran"; cat /proc/keys 2>/dev/null | wc -c' sh "$WS" >"$OUTF" 2>"$ERRF" && RC=0 || RC=$?
  [ "$RC" = 0 ] || die "a masked /proc: expected exit 0 (the container's /proc kept), got $(last_run)"
  assert_exists "$WS/ran"
  assert_eq "$(tr -d ' ' <"$OUTF")" 0 "the mask over /proc/keys is kept (nothing to read)"
  rm -f "$WS/ran"
  unshare -m --propagation private sh -c 'mount --bind /dev/null /proc/keys && exec "$@"' sh \
    "$CODEX_CORDON" --sandbox-policy-cwd "$WS" --inherit-pid-namespace --permission-profile "$prof" -- touch "$WS/ran" >"$OUTF" 2>"$ERRF" && RC=0 || RC=$?
  [ "$RC" = 0 ] || die "a masked /proc with --inherit-pid-namespace: expected exit 0, got $(last_run)"
  assert_exists "$WS/ran"
}

t_environment_passed_whole() {
  CODEX_TEST_VAR=kept helper --permission-profile "$(profile "$(sp root read)")" -- sh -c 'echo "$CODEX_TEST_VAR $HOME"'
  assert_eq "$OUT" "kept $HOME" "the helper passes its environment to the command"
}

t_library_entry_point() {
  # a program that embeds libcordon.so (tests/lib/codex_embed.c) and dispatches with
  # cordon_codex_is_helper() and cordon_codex_main(), as Codex's own binary would
  local embed
  embed=$(dirname "$CORDON")/tests/codex_embed
  [ -x "$embed" ] || skip_case "$embed is not built (built with the tests, next to the cordon binary; a copied binary has none)"
  mkdir -p "$CT/embed"
  ln -s "$embed" "$CT/embed/codex-linux-sandbox"
  local out rc=0
  out=$("$CT/embed/codex-linux-sandbox" --sandbox-policy-cwd "$WS" --permission-profile "$(profile "$(sp root read),$(sp project_roots write)")" -- \
    sh -c 'echo x >"$1/by-embedder" && (echo y >"$2/z") 2>/dev/null || echo confined' sh "$WS" "$OUTSIDE" 2>"$CT/embed.err") || rc=$?
  check_sanitizer "$CT/embed.err" codex_embed
  assert_eq "$rc/$out" "0/confined" "the embedder as codex-linux-sandbox runs the command in cordon's sandbox ($(head -c 300 "$CT/embed.err"))"
  assert_file_content "$WS/by-embedder" x
  assert_absent "$OUTSIDE/z"
  rc=0
  out=$("$embed" --sandbox-policy-cwd "$WS" -- true 2>&1) || rc=$?
  assert_eq "$rc/$out" "3/embedder" "under its own name the embedder is its own program"
}

t_help() {
  cx_expect 0 --help
  assert_contains "$OUT" "--permission-profile"
}

run_case read_only_reads_anywhere t_read_only_reads_anywhere
run_case write_only_in_writable_roots t_write_only_in_writable_roots
run_case workspace_write_profile t_workspace_write_profile
run_case deny_carveouts_reopened t_deny_carveouts_reopened
run_case glob_denies t_glob_denies
run_case protected_metadata t_protected_metadata
run_case worktree_gitdir_read_only t_worktree_gitdir_read_only
run_case parent_repo_stays_discoverable t_parent_repo_stays_discoverable
run_case network_restricted t_network_restricted
run_case proxy_mode t_proxy_mode
run_case proxy_mode_needs_proxy t_proxy_mode_needs_proxy
run_case host_unix_sockets t_host_unix_sockets
run_case malformed_input t_malformed_input
run_case exit_status t_exit_status
run_case signals_forwarded t_signals_forwarded
run_case legacy_sandbox_policy t_legacy_sandbox_policy
run_case disabled_runs_unsandboxed t_disabled_runs_unsandboxed
run_case legacy_landlock_refused t_legacy_landlock_refused
run_case no_proc t_no_proc
run_case inherit_pid_namespace t_inherit_pid_namespace
run_case masked_proc_fallback t_masked_proc_fallback
run_case environment_passed_whole t_environment_passed_whole
run_case library_entry_point t_library_entry_point
run_case help t_help
finish
