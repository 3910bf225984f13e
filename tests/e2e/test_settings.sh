#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The settings file: allowedPaths, deniedPaths, readOnly, <workspace>, <data-root>, ~,
# relative paths (against the workspace), and flags adding to it.
. "$(dirname "$0")/lib.sh"

settings() { printf '%s\n' "$1" >"$CT/settings.json"; }

t_allowed_paths() {
  mkdir "$CT/extra"
  settings "{\"sandbox\": {\"allowedPaths\": [\"<workspace>\", \"$CT/extra\"]}}"
  expect_ok run --settings "$CT/settings.json" -- sh -c 'echo ws >in-ws && echo extra >"$1/in-extra"' sh "$CT/extra"
  assert_file_content "$WS/in-ws" "ws"
  assert_file_content "$CT/extra/in-extra" "extra"
}

t_denied_paths() {
  mkdir "$WS/secrets"
  echo "s3cr3t" >"$WS/secrets/key"
  settings '{"sandbox": {"deniedPaths": ["<workspace>/secrets"]}}'
  crun run --settings "$CT/settings.json" -- sh -c 'cat secrets/key 2>/dev/null; (echo x >secrets/new) 2>/dev/null && echo wrote; echo ok >visible; exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "deniedPaths <workspace>/secrets"
  assert_absent "$WS/secrets/new"
  assert_file_content "$WS/visible" "ok"
}

t_relative_paths_against_workspace() {
  mkdir "$WS/secrets"
  echo "s3cr3t" >"$WS/secrets/key"
  settings '{"sandbox": {"deniedPaths": ["secrets"]}}'
  # run from elsewhere inside the workspace: relative means the workspace, not the cwd
  mkdir "$WS/sub"
  cd "$WS/sub"
  crun run --workspace "$WS" --settings "$CT/settings.json" -- sh -c 'cat "$1/secrets/key" 2>/dev/null; exit 0' sh "$WS"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "deniedPaths [\"secrets\"] (relative to the workspace)"
}

t_read_only() {
  settings '{"sandbox": {"readOnly": true}}'
  crun run --settings "$CT/settings.json" -- sh -c '(echo x >new) 2>/dev/null && echo wrote; exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "readOnly: true"
  assert_absent "$WS/new"
  settings '{"sandbox": {"readOnly": false}}'
  expect_ok run --settings "$CT/settings.json" -- sh -c 'echo x >new'
  assert_file_content "$WS/new" "x"
}

t_data_root() {
  mkdir "$CT/data"
  settings '{"sandbox": {"allowedPaths": ["<workspace>", "<data-root>"]}}'
  expect_ok run --settings "$CT/settings.json" --data-root "$CT/data" -- sh -c 'echo d >"$1/f"' sh "$CT/data"
  assert_file_content "$CT/data/f" "d"
}

t_tilde_is_home() {
  mkdir -p "$HOME/.cache/pip"
  settings '{"sandbox": {"allowedPaths": ["<workspace>", "~/.cache/pip"]}}'
  expect_ok run --settings "$CT/settings.json" -- sh -c 'echo cached >"$1/wheel"' sh "$HOME/.cache/pip"
  assert_file_content "$HOME/.cache/pip/wheel" "cached"
}

t_flags_add_to_settings() {
  mkdir "$WS/secrets" "$CT/extra"
  echo "s3cr3t" >"$WS/secrets/key"
  settings '{"sandbox": {"deniedPaths": ["<workspace>/secrets"]}}'
  crun run --settings "$CT/settings.json" --allow "$CT/extra" -- sh -c 'cat secrets/key 2>/dev/null; echo e >"$1/f" || echo "cannot write extra"; exit 0' sh "$CT/extra"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "settings deny plus --allow flag"
  assert_file_content "$CT/extra/f" "e"
}

t_enabled_true_and_empty() {
  settings '{"sandbox": {"enabled": true}}'
  expect_output "ok" run --settings "$CT/settings.json" -- echo ok
  settings '{}'
  expect_output "ok" run --settings "$CT/settings.json" -- echo ok
  settings '{"sandbox": {}}'
  expect_output "ok" run --settings=$CT/settings.json -- echo ok
}

t_settings_still_sandboxed() {
  # a settings file adds rules; it never exposes what it does not name
  settings '{"sandbox": {"allowedPaths": ["<workspace>"]}}'
  crun run --settings "$CT/settings.json" -- sh -c '[ -e "$1" ] && echo visible; exit 0' sh "$OUTSIDE/secret"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "a path outside the settings' rules"
}

t_relative_settings_file() {
  # the settings file itself may be named relative to the current directory
  printf '{"sandbox": {"readOnly": true}}\n' >"$WS/agent.json"
  crun run --settings agent.json -- sh -c '(echo x >new) 2>/dev/null && echo wrote; exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "readOnly from a settings file named relatively"
  assert_absent "$WS/new"
}

# Issue 9, item 9: every `cordon run` flag has a settings key (the camelCase of the flag),
# and a flag wins over the key whatever the order.
t_every_flag_has_a_key() {
  local flags key bad="" known
  flags=$("$CORDON" help run | grep -o '^  --[a-z-]*' | tr -d ' ')
  printf '{"sandbox": {"noSuchKey": 1}}\n' >"$CT/k.json"
  crun run --settings "$CT/k.json" -- true
  known=$(printf '%s' "$ERR" | sed -n 's/.*known keys: //p' | tr -d ')')
  for f in $flags; do
    case $f in
      --settings | --help) continue ;; # the file itself; not a setting
      --allow) key=allowedPaths ;;
      --allow-ro) key=readOnlyPaths ;;
      --deny) key=deniedPaths ;;
      --hide) key=hiddenPaths ;;
      --deny-glob) key=deniedGlobs ;;
      --allow-domain) key=allowedDomains ;;
      --deny-domain) key=deniedDomains ;;
      --add-host) key=addHosts ;;
      --dns-server) key=dnsServers ;;
      --forward-port) key=forwardPorts ;;
      --publish-port) key=publishPorts ;;
      --allow-socket) key=allowedSockets ;;
      --tty | --no-tty) key=tty ;;
      *) key=$("$PY" -c 'import sys; w = sys.argv[1][2:].split("-"); print(w[0] + "".join(x.title() for x in w[1:]))' "$f") ;;
    esac
    case ", $known, " in *", $key, "*) ;; *) bad+=" $f($key)" ;; esac
  done
  [ -z "$bad" ] || die "flags without a settings key:$bad (known: $known)"
}

t_run_keys_take_effect() {
  mkdir -p "$WS/sub" "$WS/secrets" "$CT/ro"
  echo "data" >"$CT/ro/file"
  echo "k" >"$WS/secrets/key.pem"
  cat >"$CT/s.json" <<JSON
{
  "sandbox": {
    "base": "host",
    "workspace": "$WS",
    "chdir": "$WS/sub",
    "readOnlyPaths": ["$CT/ro"],
    "deniedGlobs": ["<workspace>/**/*.pem"],
    "globDepth": 4,
    "protect": [".tool-config"],
    "env": {"FROM_SETTINGS": "yes", "SHARED": "settings"},
    "keepEnv": ["KEPT_VAR"],
    "timeout": 30,
    "statusJson": "$CT/status.json",
    "noNested": true
  },
  "harness": {"model": "whatever"}
}
JSON
  KEPT_VAR=kept crun run --settings "$CT/s.json" --env SHARED=flag -- sh -c '
    echo "cwd=$PWD from=$FROM_SETTINGS shared=$SHARED kept=$KEPT_VAR"
    cat "'"$CT"'/ro/file"; echo x >"'"$CT"'/ro/new" 2>/dev/null && echo "ro written"
    grep -q k "'"$WS"'/secrets/key.pem" 2>/dev/null && echo "pem read"
    mkdir "'"$WS"'/.tool-config" 2>/dev/null && echo "protected made"
    test -d /home && echo "base host"'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_contains "$OUT" "cwd=$WS/sub from=yes shared=flag kept=kept" "chdir, env (the flag wins), keepEnv"
  assert_contains "$OUT" "data" "readOnlyPaths shows"
  assert_not_contains "$OUT" "ro written" "readOnlyPaths is read-only"
  assert_not_contains "$OUT" "pem read" "deniedGlobs hides"
  assert_not_contains "$OUT" "protected made" "protect"
  assert_contains "$OUT" "base host"
  [ -s "$CT/status.json" ] || die "statusJson: no document written"
  crun explain --json --settings "$CT/s.json"
  "$PY" - "$OUTF" <<'PYEOF' || die "explain --json with the settings: $(cat "$OUTF.why" 2>/dev/null)"
import json, sys
d = json.load(open(sys.argv[1]))["policy"]
bad = [k for k, v in (("base", "host"), ("timeout", 30), ("no_nested", True)) if d.get(k) != v]
if bad:
    open(sys.argv[1] + ".why", "w").write("%s: %s" % (bad, d))
    sys.exit(1)
PYEOF
  # flags win over the keys, before or after --settings
  printf '{"sandbox": {"timeout": 0.2, "noProc": true, "clearEnv": true, "tty": true}}\n' >"$CT/t.json"
  expect_exit 124 run --settings "$CT/t.json" -- sleep 5
  expect_ok run --timeout 5 --settings "$CT/t.json" -- sleep 0.5
  expect_ok run --settings "$CT/t.json" --timeout 5 --no-tty -- sh -c 'test -d /proc/self && echo proc; echo "lc=${LC_ALL:-none}"'
  assert_contains "$OUT" "lc=none" "clearEnv (LC_ALL=C is in the passlist otherwise)"
  assert_not_contains "$OUT" "proc" "noProc"
  # "tty": true is --tty: even with stdin and stdout piped, the command is on a terminal
  expect_ok run --settings "$CT/t.json" --timeout 5 -- sh -c 'test -t 0 && test -t 1 && echo on-a-terminal'
  assert_contains "$OUT" "on-a-terminal" "tty"
  # wrong values name the file, line and key
  printf '{\n  "sandbox": {\n    "timeout": "soon"\n  }\n}\n' >"$CT/bad.json"
  expect_exit 125 run --settings "$CT/bad.json" -- true
  assert_contains "$ERR" "$CT/bad.json:3" "file and line"
  assert_contains "$ERR" "sandbox.timeout"
  printf '{"sandbox": {"base": "hots"}}\n' >"$CT/bad.json"
  expect_exit 125 run --settings "$CT/bad.json" -- true
  assert_contains "$ERR" "did you mean 'host'?"
  printf '{"sandbox": {"workspace": "relative/dir"}}\n' >"$CT/bad.json"
  expect_exit 125 run --settings "$CT/bad.json" -- true
  assert_contains "$ERR" "sandbox.workspace"
}

# A misspelt top-level key drops every rule in it (issue 23): said, with the nearest known
# key; --strict-settings (or "strictSettings": true) refuses the file instead.  The keys
# of the harness settings cordon shares (pi's, Claude Code's) stay silent.
t_top_level_typo() {
  echo "s3cr3t" >"$WS/.env"
  # the positive control: spelt right, the rule hides the file, and nothing is said
  printf '{"sandbox": {"deniedPaths": ["<workspace>/.env"]}, "permissions": {"allow": []}, "defaultModel": "m", "$schema": "x"}\n' >"$CT/ok.json"
  expect_ok run --settings "$CT/ok.json" -- sh -c 'cat .env 2>/dev/null; exit 0'
  assert_eq "$OUT" "" "deniedPaths spelt right"
  assert_not_contains "$ERR" "warning" "pi's and Claude Code's keys are accepted silently"
  expect_ok run --strict-settings --settings "$CT/ok.json" -- true
  # misspelt: the run goes on (as before), but says so and names the key to use
  printf '{\n  "sanbox": {"deniedPaths": ["<workspace>/.env"]}\n}\n' >"$CT/typo.json"
  expect_ok run --settings "$CT/typo.json" -- cat .env
  assert_contains "$ERR" "cordon: warning: $CT/typo.json:2: unknown top-level key \"sanbox\" (did you mean \"sandbox\"?)" \
    "the typo is named with the nearest known key"
  assert_contains "$ERR" "ignored, with everything in it"
  # refused with --strict-settings, before or after --settings, and by the key
  expect_exit 125 run --strict-settings --settings "$CT/typo.json" -- cat .env
  assert_eq "$OUT" "" "nothing ran under --strict-settings"
  assert_contains "$ERR" "unknown top-level key \"sanbox\" (did you mean \"sandbox\"?)"
  assert_contains "$ERR" "(--strict-settings)"
  expect_exit 125 run --settings "$CT/typo.json" --strict-settings -- cat .env
  assert_eq "$OUT" "" "nothing ran with --strict-settings after --settings"
  printf '{"sanbox": {}, "sandbox": {"strictSettings": true}}\n' >"$CT/strict.json"
  expect_exit 125 run --settings "$CT/strict.json" -- cat .env
  assert_eq "$OUT" "" "nothing ran under strictSettings"
  assert_contains "$ERR" "strictSettings refuses"
  # explain says it too
  crun explain --settings "$CT/typo.json"
  assert_contains "$ERR" "unknown top-level key \"sanbox\""
}

run_case allowed_paths t_allowed_paths
run_case denied_paths t_denied_paths
run_case relative_paths_against_workspace t_relative_paths_against_workspace
run_case read_only t_read_only
run_case data_root t_data_root
run_case tilde_is_home t_tilde_is_home
run_case flags_add_to_settings t_flags_add_to_settings
run_case enabled_true_and_empty t_enabled_true_and_empty
run_case settings_still_sandboxed t_settings_still_sandboxed
run_case relative_settings_file t_relative_settings_file
run_case every_flag_has_a_key t_every_flag_has_a_key
run_case run_keys_take_effect t_run_keys_take_effect
run_case top_level_typo t_top_level_typo
finish
