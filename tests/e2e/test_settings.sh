#!/usr/bin/env bash
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
finish
