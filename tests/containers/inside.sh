#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Inside one container of the matrix (tests/containers/matrix.sh): cordon check, the mode
# the default sandbox runs in, and the same confinement checks in each row.  Prints one
# line per fact, "NAME VALUE"; the caller judges them.  cordon is /usr/local/bin/cordon
# (the build's static binary, bound read-only), /probe.sh the checks run in the sandbox.
set -u
export HOME=${HOME:-/tmp}
say() { printf '%s %s\n' "$1" "$2"; }

say uid "$(id -u)"
cordon check --json >/tmp/check.json 2>/tmp/check.err
say check_exit $?
say mode "$(python3 -c 'import json; print(json.load(open("/tmp/check.json")).get("mode"))' 2>/dev/null || echo unparsable)"
say proc_ok "$(python3 -c 'import json; print(json.load(open("/tmp/check.json"))["checks"]["proc"]["ok"])' 2>/dev/null || echo unparsable)"
say userns_ok "$(python3 -c 'import json; print(json.load(open("/tmp/check.json"))["checks"]["user_namespaces"]["ok"])' 2>/dev/null || echo unparsable)"

# the outside: a secret beside the workspace, a loopback server, a process with a secret
base=$(mktemp -d /tmp/matrix.XXXXXX)
mkdir -p "$base/outside" "$base/ws"
echo outside-secret-31 >"$base/outside/secret"
cd "$base/ws" || exit 1
git init -q . && git -c user.email=m@x -c user.name=m commit -q --allow-empty -m init
python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
while True:
    c, _ = s.accept(); c.sendall(b"loopback-hello\n"); c.close()
' "$base/port" &
server=$!
CORDON_MATRIX_SECRET=env-secret-77 sleep 600 &
sleeper=$!
for _ in $(seq 100); do [ -s "$base/port" ] && break; sleep 0.1; done
port=$(cat "$base/port" 2>/dev/null)
# positive controls, outside the sandbox
say control_loopback "$(python3 -c "import socket; c=socket.create_connection(('127.0.0.1', $port), 5); print(c.recv(64).decode().strip())" 2>&1)"
say control_environ "$(tr '\0' '\n' </proc/$sleeper/environ | grep -c env-secret-77)"

cordon run --isolation auto --allow-ro /probe.sh --status-json "$base/status.json" -- bash /probe.sh "$base/outside" "$port" "$sleeper" >"$base/out" 2>"$base/err"
say run_exit $?
cat "$base/out"
say run_isolation "$(python3 -c "import json; print(json.load(open('$base/status.json'))['isolation'])" 2>/dev/null || echo none)"
say run_proc_kept "$(python3 -c "import json; print(bool(json.load(open('$base/status.json')).get('proc_kept')))" 2>/dev/null || echo none)"
# what reached the host
say host_outside_new "$([ -e "$base/outside/new" ] && echo present || echo absent)"
say host_codex "$([ -e "$base/ws/.codex" ] && echo present || echo absent)"
say host_hook "$([ -e "$base/ws/.git/hooks/pre-commit" ] && echo present || echo absent)"
if [ -s "$base/err" ]; then
  say stderr "$(head -c 300 "$base/err" | tr '\n' '|')"
fi
kill $server $sleeper 2>/dev/null
exit 0
