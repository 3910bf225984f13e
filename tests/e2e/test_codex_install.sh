#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A real Codex installation (Codex CLI 0.169, as bootstrap.sh installs it with
# CORDON_CODEX=1) with cordon, as doc/codex.md ("Using cordon with a Codex installation")
# describes it: `codex exec` against a local mock of the Responses API, which asks for one
# shell command and records what came back. Codex executes its own binary as its sandbox
# helper and offers no setting to name another, so the arrangement tested is Codex inside
# cordon with Codex's own sandbox off; the command it runs must be confined by cordon.
. "$(dirname "$0")/lib.sh"

find_codex() {
  local c
  if [ -n "${CORDON_CODEX_HELPER:-}" ]; then
    [ -x "$CORDON_CODEX_HELPER" ] && { printf '%s\n' "$CORDON_CODEX_HELPER"; return 0; }
    return 1
  fi
  for c in "${CORDON_CODEX_PREFIX:-/opt/cordon-test/codex}"/node_modules/@openai/codex-linux-*/vendor/*/bin/codex; do
    [ -x "$c" ] && { printf '%s\n' "$c"; return 0; }
  done
  return 1
}
CODEX=$(find_codex || true)
CODEX_WHY="Codex is not installed (run CORDON_CODEX=1 ./bootstrap.sh, as CI does, or set CORDON_CODEX_HELPER to Codex 0.169's Linux binary)"

# A mock of the Responses API: the first request gets one exec_command call (or shell)
# running $MOCK_CMD, the next a final message; every command output is logged as a line
# "OUTPUT <json>".
MOCK='
import http.server, json, os, socketserver, sys
log = open(sys.argv[2], "a")
cmd = os.environ["MOCK_CMD"]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def reply(self, ctype, body):
        self.send_response(200); self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def do_GET(self):
        self.reply("application/json", b"{\"data\": [], \"models\": []}")
    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        outs = [i for i in req.get("input", []) if i.get("type") == "function_call_output"]
        for o in outs:
            log.write("OUTPUT " + json.dumps(o.get("output")) + "\n"); log.flush()
        tools = [t.get("name") for t in req.get("tools", [])]
        if outs:
            item = {"type": "message", "role": "assistant", "id": "m", "content": [{"type": "output_text", "text": "done"}]}
        elif "shell" in tools:
            item = {"type": "function_call", "name": "shell", "call_id": "c", "arguments": json.dumps({"command": ["bash", "-c", cmd]})}
        else:
            item = {"type": "function_call", "name": "exec_command", "call_id": "c", "arguments": json.dumps({"cmd": cmd})}
        ev = [{"type": "response.created", "response": {"id": "r"}}, {"type": "response.output_item.done", "item": item},
              {"type": "response.completed", "response": {"id": "r", "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}}]
        self.reply("text/event-stream", "".join("event: %s\ndata: %s\n\n" % (e["type"], json.dumps(e)) for e in ev).encode())
socketserver.ThreadingTCPServer.allow_reuse_address = True
s = socketserver.ThreadingTCPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".t", "w").write(str(s.server_address[1])); os.rename(sys.argv[1] + ".t", sys.argv[1])
s.timeout = 60
for _ in range(8):
    s.handle_request()
'

# start_mock CMD: the mock, and a CODEX_HOME whose config points Codex at it.
start_mock() {
  local portfile=$CT/mock.port i
  MOCK_LOG=$CT/mock.log
  : >"$MOCK_LOG"
  MOCK_CMD=$1 "$PY" -c "$MOCK" "$portfile" "$MOCK_LOG" </dev/null >/dev/null 2>"$CT/mock.err" &
  track_pid $! "$portfile"
  for ((i = 0; i < 100; i++)); do [ -s "$portfile" ] && break; sleep 0.05; done
  [ -s "$portfile" ] || die "the mock model server did not start: $(cat "$CT/mock.err")"
  export CODEX_HOME=$CT/codex-home OPENAI_API_KEY=unused
  mkdir -p "$CODEX_HOME"
  cat >"$CODEX_HOME/config.toml" <<EOF
model = "mock-model"
model_provider = "mock"
[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:$(cat "$portfile")/v1"
wire_api = "responses"
EOF
}

# What the command printed, as Codex reported it to the model.
command_output() { sed -n 's/^OUTPUT //p' "$MOCK_LOG" | "$PY" -c 'import json, sys
for l in sys.stdin: print(json.loads(l))'; }

# The command: write in the project and outside it, and say whose PID 1 it sees.
PROBE='echo x >in-project && echo project-writable; (echo x >"$OUTSIDE/escaped") 2>/dev/null && echo outside-writable; echo "pid1=$(cat /proc/1/comm)"'

t_codex_inside_cordon() {
  [ -n "$CODEX" ] || skip_case "$CODEX_WHY"
  start_tcp_server 30 # a host server that is not Codex's model
  local probe="OUTSIDE=$OUTSIDE; $PROBE; $PY -c '$TCP_CLIENT' $SERVER_PORT >/dev/null 2>&1 && echo reached-host-server"
  start_mock "$probe"
  # positive control: the same Codex, its sandbox off, without cordon: the command is free
  timeout 60 "$CODEX" exec --skip-git-repo-check -s danger-full-access "probe" >"$CT/plain.out" 2>&1 ||
    die "codex exec failed: $(tail -c 300 "$CT/plain.out")"
  local plain
  plain=$(command_output)
  assert_contains "$plain" outside-writable "positive control: Codex with its sandbox off writes outside the project"
  assert_contains "$plain" reached-host-server "positive control: Codex with its sandbox off reaches the host server"
  rm -f "$OUTSIDE/escaped" "$WS/in-project"
  # Codex reaches its model (here the mock, on the host's loopback) through --forward-port,
  # and nothing else
  start_mock "$probe"
  crun run --base host --forward-port "$(cat "$CT/mock.port")" --allow "$CODEX_HOME" --keep-env CODEX_HOME \
    --keep-env OPENAI_API_KEY -- "$CODEX" exec --skip-git-repo-check -s danger-full-access "probe"
  [ "$RC" = 0 ] || die "codex exec inside cordon: expected exit 0, got $(last_run)"
  local got
  got=$(command_output)
  assert_contains "$got" project-writable "the command Codex ran inside cordon writes in the project"
  assert_not_contains "$got" outside-writable "the command Codex ran inside cordon writes outside the project"
  assert_not_contains "$got" reached-host-server "the command Codex ran inside cordon reached a host server"
  assert_contains "$got" "pid1=cordon" "the command runs in cordon's sandbox"
  assert_absent "$OUTSIDE/escaped"
  assert_file_content "$WS/in-project" x
}

t_codex_own_sandbox_here() {
  # Not an assertion about cordon: what Codex's own helper does on this host, for the
  # record (with Debian 12's bubblewrap 0.8.0, which has no --argv0, 0.169's helper looks
  # for codex-linux-sandbox on PATH inside its sandbox and fails without one).
  [ -n "$CODEX" ] || skip_case "$CODEX_WHY"
  start_mock "echo codex-sandbox-ran"
  timeout 60 "$CODEX" exec --skip-git-repo-check -s workspace-write "probe" >"$CT/own.out" 2>&1 ||
    die "codex exec failed: $(tail -c 300 "$CT/own.out")"
  local got
  got=$(command_output)
  case $got in
    *codex-sandbox-ran*) ;;
    *"execvp codex-linux-sandbox"*) echo "# codex_install: Codex 0.169's own sandbox cannot run commands here: $(printf '%s' "$got" | grep -m1 bwrap) (bwrap $(bwrap --version 2>/dev/null | cut -d' ' -f2))" ;;
    *) die "unexpected output of a command in Codex's own sandbox: $(printf '%s' "$got" | _one_line)" ;;
  esac
}

run_case codex_inside_cordon t_codex_inside_cordon
run_case codex_own_sandbox_here t_codex_own_sandbox_here
finish
