#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Subagents (issue 10): a harness confines a whole subagent — its workspace, its agent
# directory and the settings' allowedPaths — so that every process the subagent starts,
# its own sandboxed tool calls (cordon run, and the library through the Python binding)
# included, stays inside, and an inner policy can only narrow the outer one. The harness
# here is the one doc/api.md describes: it reads its settings file through the library,
# sees orchestration.sandboxed, and spawns the subagent under a policy of those paths.
#
# As root, the kernel lets only CAP_SETFCAP map uid 0 into a nested user namespace, which
# the sandbox never grants: there the subagent's own cordon fails with 125 and says why
# (the contract), while the subagent itself stays confined.
. "$(dirname "$0")/lib.sh"

BUILD=$(dirname "$CORDON")
LIB=$BUILD/libcordon.so

python_ok() {
  [ -e "$LIB" ] || skip_case "$LIB not found"
  ! ldd "$LIB" 2>/dev/null | grep -q libasan || skip_case "a sanitizer build's libcordon.so cannot be loaded into python3"
  [ -r "$REPO_ROOT/python/cordon/__init__.py" ] || skip_case "$REPO_ROOT/python cannot be read by $WHO"
}

# The subagent: works in its workspace and agent directory, tries to reach out, and makes
# tool calls of its own through cordon, which try to widen what they see.
write_subagent() {
  mkdir -p "$CT/bin"
  cat >"$CT/bin/subagent.sh" <<'SH'
set -u
echo "subagent: in $(pwd)"
echo "work" >result.txt && echo "wrote-workspace"
echo "state" >"$AGENT_DIR/state.json" && echo "wrote-agent-dir"
cat "$SHARED/input.txt"
cat "$SECRET" 2>/dev/null && echo "LEAK: the subagent read a host file"
(echo x >"$OTHER/planted") 2>/dev/null && echo "LEAK: the subagent wrote outside"
(cat "$SECRET" 2>/dev/null && echo "LEAK: a process the subagent started read a host file") &
wait
# a tool call through the command line, asking for more than the subagent has
"$CORDON" run --base host --allow "$(dirname "$SECRET")" --allow "$OTHER" --network host -- sh -c '
  echo "tool-cli: ran"
  cat "$1" 2>/dev/null && echo "LEAK: the cli tool read a host file"
  (echo y >"$2/planted-by-tool") 2>/dev/null && echo "LEAK: the cli tool wrote outside"
  echo "tool-cli: interfaces $(grep -c ":" /proc/net/dev)"
  echo tool >tool_cli.txt' sh "$SECRET" "$OTHER" 2>"$AGENT_DIR/tool_cli.err"
echo "tool-cli-exit: $?"
head -c 600 "$AGENT_DIR/tool_cli.err" | tr '\n' ' '; echo
# a tool call through the library, narrower than the subagent: its agent directory hidden
if [ -n "${CORDON_LIBRARY:-}" ]; then
  python3 - "$AGENT_DIR" "$SECRET" <<'PY'
import os, sys
import cordon
agent, secret = sys.argv[1:3]
p = cordon.Policy(workspace=os.getcwd(), deny=[agent], allow=[os.path.dirname(secret)], timeout=30)
out = []
try:
    r = cordon.run(["sh", "-c", 'echo "tool-lib: ran"; cat "$0/state.json" 2>/dev/null && echo "LEAK: the narrower tool read the agent dir"; '
                    'cat "$1" 2>/dev/null && echo "LEAK: the lib tool read a host file"; echo lib >tool_lib.txt', agent, secret],
                   policy=p, on_output=out.append)
    print(b"".join(out).decode(), end="")
    print("tool-lib-exit:", r.exit_code)
except cordon.CordonError as e:
    print("tool-lib-error:", e.stage, e)
PY
fi
SH
}

# harness KIND: run the subagent as a harness does (KIND py: through the library; cli:
# through cordon run with the same settings), output in $OUT.
harness() {
  mkdir -p "$CT/agent" "$CT/shared" "$CT/other"
  echo "shared input" >"$CT/shared/input.txt"
  chmod 0755 "$CT/agent" "$CT/shared" "$CT/other"
  cat >"$CT/harness.json" <<JSON
{
  "model": "some-model",
  "orchestration": {"sandboxed": true, "maxSubagents": 4},
  "sandbox": {"enabled": true, "network": false, "allowedPaths": ["$CT/shared"]}
}
JSON
  write_subagent
  local env=(AGENT_DIR="$CT/agent" SHARED="$CT/shared" SECRET="$OUTSIDE/secret" OTHER="$CT/other" CORDON="$CORDON")
  if [ "$1" = py ]; then
    python_ok
    env+=(CORDON_LIBRARY="$LIB" PYTHONPATH="$REPO_ROOT/python")
    OUT=$(CORDON_LIBRARY="$LIB" PYTHONPATH="$REPO_ROOT/python" timeout 120 "$PY" - "$CT" "$WS" "$BUILD" "$REPO_ROOT/python" "${env[@]}" <<'PY'
import sys
import cordon
ct, ws, build, pydir, *env = sys.argv[1:]
policy = cordon.Policy(settings=f"{ct}/harness.json")
if policy.settings_sandboxed is not True:
    sys.exit("the harness settings do not say orchestration.sandboxed")
# the subagent's workspace, its agent directory, what it runs (cordon and the binding)
policy = cordon.Policy(settings=f"{ct}/harness.json", workspace=ws, allow=[f"{ct}/agent"],
                       allow_ro=[build, pydir, f"{ct}/bin"], env=dict(e.split("=", 1) for e in env), timeout=90)
with cordon.spawn(["sh", f"{ct}/bin/subagent.sh"], policy=policy, stdin=None, merge_stderr=True) as c:
    out = c.stdout.read()
    r = c.wait(timeout=90)
print(out.decode(), end="")
print("subagent-exit:", r.exit_code)
PY
) || die "the harness failed: $OUT"
  else
    local args=()
    for e in "${env[@]}"; do args+=(--env "$e"); done
    if [ -e "$LIB" ] && ! ldd "$LIB" 2>/dev/null | grep -q libasan && [ -r "$REPO_ROOT/python/cordon/__init__.py" ]; then
      args+=(--env CORDON_LIBRARY="$LIB" --env PYTHONPATH="$REPO_ROOT/python" --allow-ro "$REPO_ROOT/python")
    fi
    crun run --settings "$CT/harness.json" --workspace "$WS" --allow "$CT/agent" --allow-ro "$BUILD" \
      --allow-ro "$CT/bin" --timeout 90 "${args[@]}" -- sh "$CT/bin/subagent.sh"
    [ "$RC" = 0 ] || die "the subagent failed: $(last_run)"
    OUT="$OUT"$'\n'"subagent-exit: $RC"
  fi
}

check_confined() {
  assert_contains "$OUT" "wrote-workspace"
  assert_contains "$OUT" "wrote-agent-dir"
  assert_contains "$OUT" "shared input"
  assert_not_contains "$OUT" "LEAK" "a process of the subagent got out"
  assert_not_contains "$OUT" "host secret" "a process of the subagent read a host file"
  [ "$(cat "$WS/result.txt")" = work ] || die "the subagent's work is not in its workspace"
  [ "$(cat "$CT/agent/state.json")" = state ] || die "the subagent's state is not in its agent directory"
  [ -z "$(ls -A "$CT/other")" ] || die "something was planted outside: $(ls -A "$CT/other")"
  [ ! -e "$(dirname "$OUTSIDE")/planted-by-tool" ] || die "a tool call planted a file"
}

check_tools() {
  if [ "$MY_UID" -eq 0 ]; then
    # the kernel's rule for root: the nested sandbox refuses, saying why
    assert_contains "$OUT" "tool-cli-exit: 125"
    assert_contains "$OUT" "CAP_SETFCAP"
    assert_not_contains "$OUT" "tool-cli: ran"
    return
  fi
  assert_contains "$OUT" "tool-cli: ran"
  assert_contains "$OUT" "tool-cli-exit: 0"
  # --network host inside a subagent without network is the subagent's network: loopback
  assert_contains "$OUT" "tool-cli: interfaces 1"
  [ "$(cat "$WS/tool_cli.txt")" = tool ] || die "the cli tool call's work is not in the workspace"
  if [ "$1" = py ] || grep -q "tool-lib" <<<"$OUT"; then
    assert_contains "$OUT" "tool-lib: ran"
    assert_contains "$OUT" "tool-lib-exit: 0"
    [ "$(cat "$WS/tool_lib.txt")" = lib ] || die "the library tool call's work is not in the workspace"
  fi
}

t_subagent_library_harness() {
  harness py
  check_confined
  check_tools py
}

t_subagent_cli_harness() {
  harness cli
  check_confined
  check_tools cli
}

require_cordon
run_case subagent_library_harness t_subagent_library_harness
run_case subagent_cli_harness t_subagent_cli_harness
finish
