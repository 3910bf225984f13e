#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cordon explain: prints the resolved rules, then the plan; runs nothing, creates nothing.
. "$(dirname "$0")/lib.sh"

landlock_abi() { "$PY" -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
r = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint(1))
print(r if r > 0 else 0)'; }

t_explain_prints_rules_and_plan() {
  mkdir -p "$WS/secret" "$CT/extra" "$CT/ro"
  local before
  before=$(snapshot "$CT" strict)
  crun explain --allow "$CT/extra" --allow-ro "$CT/ro" --deny "$WS/secret" -- sh -c 'touch "$1"' sh "$WS/marker"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_absent "$WS/marker" "explain ran the command"
  assert_unchanged "$before" "$CT" "explain changed the host" strict
  local p
  for p in "$WS" "$CT/extra" "$CT/ro" "$WS/secret"; do
    assert_contains "$OUT" "$p" "explain output lacks a rule path"
  done
  printf '%s\n' "$OUT" | grep -F -- "$WS/secret" | grep -Eqi 'deny|denied|hid' ||
    die "no line of explain's output marks $WS/secret as denied/hidden"
  printf '%s\n' "$OUT" | grep -Eqi 'plan' || die "explain's output has no plan section"
}

t_explain_without_command() {
  expect_ok explain
  [ -n "$OUT" ] || die "explain printed nothing"
  assert_contains "$OUT" "$WS" "explain names the workspace"
}

t_explain_runs_nothing_with_timeout() {
  local m
  m=$(new_mark)
  crun explain --timeout 0.2 -- sleep "30.$m"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  [ -z "$(find_sleepers "$m")" ] || { reap_sleepers "$m"; die "explain started the command"; }
  [ "$ELAPSED_MS" -lt 3000 ] || die "explain took ${ELAPSED_MS}ms"
}

t_explain_settings() {
  mkdir "$WS/secrets"
  printf '{"sandbox": {"deniedPaths": ["<workspace>/secrets"], "readOnly": true}}\n' >"$CT/settings.json"
  expect_ok explain --settings "$CT/settings.json"
  assert_contains "$OUT" "$WS/secrets" "explain shows the settings' denied path"
}

t_explain_read_only_and_base() {
  expect_ok explain --base system
  local sys=$OUT
  assert_contains "$sys" "/usr" "explain --base system mentions /usr"
  expect_ok explain --base host
  assert_ne "$OUT" "$sys" "explain --base host prints the same as --base system"
}

t_explain_bad_usage() {
  expect_exit 125 explain --network bogus
  assert_cordon_stderr
  printf '{"sandbox": {"bogus": 1}}' >"$CT/bad.json"
  expect_exit 125 explain --settings "$CT/bad.json"
  assert_cordon_stderr
  assert_contains "$ERR" "bogus" "the message names the unknown key"
}

t_explain_json() {
  mkdir -p "$WS/sub"
  expect_ok explain --json --deny "$WS/sub" --allow /nonexistent-cordon-x -- make test
  "$PY" - "$OUTF" "$WS" <<'PYEOF' || die "explain --json: $(cat "$OUTF.why" 2>/dev/null || head -c 300 "$OUTF")"
import json, sys
d = json.load(open(sys.argv[1])); ws = sys.argv[2]
bad = []
for k in ("policy", "rules", "plan", "warnings", "environment", "command", "confinement"):
    if k not in d: bad.append("no " + k)
if d.get("command") != ["make", "test"]: bad.append("command %r" % d.get("command"))
if d["policy"].get("workspace") != ws: bad.append("workspace %r" % d["policy"].get("workspace"))
if not any(r["access"] == "deny" and r["path"] == ws + "/sub" for r in d["rules"]): bad.append("the deny rule")
if not any(op["kind"] == "hide" and op["dest"] == ws + "/sub" for op in d["plan"]): bad.append("the hide operation")
if not any("nonexistent-cordon-x" in w for w in d["warnings"]): bad.append("the warning")
if not d["confinement"]["seccomp"]["refused"]: bad.append("seccomp's refused calls")
if bad:
    open(sys.argv[1] + ".why", "w").write("; ".join(bad)); sys.exit(1)
PYEOF
}

# --allow-socket: a line of its own, and the JSON's allowed_sockets; a relative path is a
# usage error (125)
t_explain_allow_socket() {
  expect_ok explain --allow-socket /run/cordon-test/agent.sock -- true
  assert_contains "$OUT" "socket   /run/cordon-test/agent.sock  (--allow-socket"
  expect_ok explain --json --allow-socket /run/cordon-test/agent.sock -- true
  "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(d["policy"]["allowed_sockets"] != ["/run/cordon-test/agent.sock"])' "$OUTF" ||
    die "explain --json: allowed_sockets ($(head -c 300 "$OUTF"))"
  expect_ok explain --json -- true
  "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(d["policy"]["allowed_sockets"] != [])' "$OUTF" ||
    die "explain --json: allowed_sockets without the option"
  expect_exit 125 explain --allow-socket agent.sock -- true
  assert_contains "$ERR" "absolute path"
}

# Explain only reads the host: whatever the options (globs, protections, a git repository,
# credential stores, limits, Landlock isolation, the proxy, a network log), the
# workspace, HOME and TMPDIR are exactly as before, modification times included.
t_explain_changes_nothing() {
  command -v git >/dev/null || skip_case "git not installed (./bootstrap.sh installs it)"
  git -C "$WS" init -q
  mkdir -p "$WS/src/deep" "$WS/.claude" "$HOME/.ssh" "$HOME/.config/gh" "$CT/tmp" "$CT/ro"
  echo k >"$HOME/.ssh/id_ed25519"
  echo x >"$WS/src/deep/a.env"
  echo y >"$WS/.env"
  printf '{"sandbox": {"deniedPaths": ["<workspace>/**/*.env"], "allowedPaths": ["~/.cache"],
    "hiddenPaths": ["~/.config/gh"]}}\n' >"$CT/settings.json"
  local ws home tmp
  ws=$(snapshot "$WS" strict)
  home=$(snapshot "$HOME" strict)
  tmp=$(snapshot "$CT/tmp" strict)
  local opts
  for opts in "" "--base host" "--base empty --allow-ro /usr" "--deny-glob $WS/**/*.env --glob-depth 3" \
    "--settings $CT/settings.json" "--hide $HOME/.ssh --deny $WS/src --allow-ro $CT/ro" "--read-only --no-nested" \
    "--limit-pids 20 --limit-memory 64M --limit-cpu 5" "--isolation landlock" "--isolation auto" \
    "--network proxy --allow-domain example.com --network-log $WS/net.log" \
    "--forward-port 1 --publish-port 2" "--allow $HOME --workspace $HOME --chdir $HOME"; do
    # shellcheck disable=SC2086 # word splitting wanted: each entry is a set of options
    TMPDIR=$CT/tmp crun explain $opts -- sh -c 'touch "$1"' sh "$WS/marker"
    [ "$RC" = 0 ] || die "cordon explain $opts: expected exit 0, got $(last_run)"
    assert_unchanged "$ws" "$WS" "cordon explain $opts changed the workspace" strict
    assert_unchanged "$home" "$HOME" "cordon explain $opts changed HOME" strict
    assert_unchanged "$tmp" "$CT/tmp" "cordon explain $opts changed TMPDIR" strict
  done
  # positive control: a run with the same settings does change the workspace
  TMPDIR=$CT/tmp crun run -- sh -c 'touch "$1"' sh "$WS/marker"
  [ "$RC" = 0 ] || die "cordon run: $(last_run)"
  assert_exists "$WS/marker" "the control run did not write the workspace"
}

# `cordon explain --json` prints the plan a run executes: the run writes the plan it hands
# to the sandbox (CORDON_DEBUG_PLAN_JSON, HACKING.md) through the same code, and the two
# are byte for byte the same (under --isolation landlock but for the private directory's
# PID and random part, which explain names PID-RANDOM).  That plan is sealed before
# anything starts, and the command's process checks its hash before the exec: a run that
# changed it would fail instead of running (unit test_plan, test_seal).
t_explain_json_is_the_run() {
  mkdir -p "$WS/secret" "$CT/ro"
  local sets=("" "--timeout 30 --env A=1 --env HOME=/elsewhere --clear-env"
    "--network none --limit-pids 64 --deny $WS/secret" "--read-only --allow-ro $CT/ro --no-proc --base host")
  if [ "$(landlock_abi)" -gt 0 ]; then
    sets+=("--isolation landlock --allow-ro $CT/ro")
  else
    echo "# (no Landlock here: --isolation landlock not compared)"
  fi
  local i opts explained ran
  for i in "${!sets[@]}"; do
    read -r -a opts <<<"${sets[$i]}"
    expect_ok explain --json "${opts[@]}" -- sh -c 'echo "$A"'
    explained=$OUT
    CORDON_DEBUG_PLAN_JSON=$CT/plan$i.json crun run "${opts[@]}" -- sh -c 'echo "$A"'
    [ "$RC" = 0 ] || die "cordon run ${sets[$i]}: expected exit 0, got $(last_run)"
    [ -s "$CT/plan$i.json" ] || die "cordon run ${sets[$i]} wrote no plan to CORDON_DEBUG_PLAN_JSON"
    ran=$(sed -E 's/cordon-ll-[0-9]+-[0-9a-f]{16}/cordon-ll-PID-RANDOM/g' "$CT/plan$i.json")
    [ "$explained" = "$ran" ] ||
      die "cordon run ${sets[$i]} executed another plan than explain --json prints: $(diff <(printf '%s\n' "$explained") <(printf '%s\n' "$ran") | head -20)"
  done
  if [ "$(landlock_abi)" -gt 0 ]; then
    # the text says the same: under --isolation landlock HOME is a directory made at start
    expect_ok explain --isolation landlock -- true
    printf '%s\n' "$OUT" | grep -Eq '^  HOME +/.*/cordon-ll-PID-RANDOM/home ' ||
      die "explain --isolation landlock does not show the HOME a run gets: $(printf '%s\n' "$OUT" | grep HOME)"
    expect_ok run --isolation landlock -- sh -c 'echo "$HOME"'
    printf '%s\n' "$OUT" | grep -Eq '/cordon-ll-[0-9]+-[0-9a-f]{16}/home$' || die "a run's HOME under --isolation landlock: $OUT"
  fi
  # what it compares is the plan: the timeout and the environment are in it
  assert_contains "$(cat "$CT/plan1.json")" '"timeout": 30' "the timeout is the plan's"
  assert_contains "$(cat "$CT/plan1.json")" '"A=1"' "the environment is the plan's"
  assert_contains "$(cat "$CT/plan1.json")" '"HOME=/elsewhere"' "--env HOME is the plan's"
  # the positive control: another run's plan is not the same
  CORDON_DEBUG_PLAN_JSON=$CT/other.json crun run --env A=2 -- true
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  ! cmp -s "$CT/plan0.json" "$CT/other.json" || die "a run with --env A=2 wrote the same plan as one without"
  assert_contains "$(cat "$CT/other.json")" '"A=2"'
  # and a file it cannot write fails the run, which starts nothing
  CORDON_DEBUG_PLAN_JSON=$CT/nodir/plan.json crun run -- sh -c "touch '$WS/ran'"
  [ "$RC" = 125 ] || die "an unwritable CORDON_DEBUG_PLAN_JSON: expected exit 125, got $(last_run)"
  assert_contains "$ERR" "CORDON_DEBUG_PLAN_JSON"
  assert_absent "$WS/ran" "the command ran though its plan could not be written"
}

run_case explain_prints_rules_and_plan t_explain_prints_rules_and_plan
run_case explain_without_command t_explain_without_command
run_case explain_runs_nothing_with_timeout t_explain_runs_nothing_with_timeout
run_case explain_settings t_explain_settings
run_case explain_read_only_and_base t_explain_read_only_and_base
run_case explain_bad_usage t_explain_bad_usage
run_case explain_json t_explain_json
run_case explain_allow_socket t_explain_allow_socket
run_case explain_changes_nothing t_explain_changes_nothing
run_case explain_json_is_the_run t_explain_json_is_the_run
finish
