#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Bad input: every usage or settings error exits 125 with stderr lines starting
# "cordon: ", runs nothing (the command would create a marker) and creates nothing on the
# host (the case directory, holding the workspace, HOME and the settings files, is
# compared before and after, modification times included).
. "$(dirname "$0")/lib.sh"

# usage_error ARG...: cordon ARG... must be refused as described above. The command, if
# the arguments leave room for one, is appended by the caller via $MARKER_CMD.
MARKER_CMD=(sh -c 'touch "$1"' sh)

usage_error() {
  local before_ws before_home before_out
  before_ws=$(snapshot "$WS" strict)
  before_home=$(snapshot "$HOME" strict)
  before_out=$(snapshot "$OUTSIDE" strict)
  crun "$@"
  [ "$RC" = 125 ] || die "cordon $(_argstr "$@"): expected exit 125, got $(last_run)"
  assert_cordon_stderr
  assert_absent "$WS/marker" "the command ran despite the error"
  assert_unchanged "$before_ws" "$WS" "the workspace changed" strict
  assert_unchanged "$before_home" "$HOME" "HOME changed" strict
  assert_unchanged "$before_out" "$OUTSIDE" "a directory outside changed" strict
}

# run_usage NAME ARG...: a case for one refused command line ending in the marker command.
u_case() { usage_error "$@" -- "${MARKER_CMD[@]}" "$WS/marker"; }
run_usage() {
  local name=$1
  shift
  run_case "$name" u_case "$@"
}

t_missing_argument() {
  usage_error run --chdir
  usage_error run --allow
  usage_error run --timeout
  usage_error run --env
}

t_missing_command() {
  usage_error run
  usage_error run --
  usage_error run --allow "$OUTSIDE" --
}

write_settings() { printf '%s' "$2" >"$CT/$1"; }

t_settings_missing() {
  u_case run --settings "$CT/no-such-settings.json"
  assert_contains "$ERR" "no-such-settings.json" "the message names the missing file"
  assert_absent "$CT/no-such-settings.json" "the missing settings file was created"
}

t_settings_malformed() {
  write_settings bad.json '{
  "sandbox": {
    "readOnly": true,,
    "network": false
  }
}
'
  u_case run --settings "$CT/bad.json"
  assert_contains "$ERR" "bad.json" "the message names the file"
  printf '%s\n' "$ERR" | grep -Eq '(line 3|:3([^0-9]|$))' || die "the message does not name line 3: $(printf '%s' "$ERR" | _one_line)"
}

t_settings_truncated() {
  write_settings trunc.json '{"sandbox": {"readOnly": true'
  u_case run --settings "$CT/trunc.json"
  assert_contains "$ERR" "trunc.json" "the message names the file"
}

t_settings_unknown_key() {
  write_settings unknown.json '{
  "sandbox": {
    "readOnly": false,
    "allowedPathz": ["/tmp"]
  }
}
'
  u_case run --settings "$CT/unknown.json"
  assert_contains "$ERR" "allowedPathz" "the message names the unknown key"
  assert_contains "$ERR" "unknown.json" "the message names the file"
  printf '%s\n' "$ERR" | grep -Eq '(line 4|:4([^0-9]|$))' || die "the message does not name line 4: $(printf '%s' "$ERR" | _one_line)"
}

# A harness's own settings file holds much besides "sandbox" (README, "Settings file"):
# other top-level keys are ignored, "sandbox" still applies, and a typo inside "sandbox"
# is still an error.
t_settings_unknown_top_key() {
  write_settings top.json '{"model": "m", "permissions": {"allow": []}, "orchestration": {"sandboxed": true},
    "sandbox": {"readOnly": true}}'
  crun run --settings "$CT/top.json" -- sh -c 'touch "$1" 2>/dev/null; echo ran' sh "$WS/marker"
  [ "$RC" = 0 ] || die "a harness's other top-level keys were not ignored: $(last_run)"
  assert_contains "$OUT" "ran"
  assert_absent "$WS/marker" "readOnly in the same file was not applied"
  write_settings typo.json '{"sandbox": {"readOnlyy": true}}'
  u_case run --settings "$CT/typo.json"
  assert_contains "$ERR" "readOnlyy" "the message names the unknown key"
  write_settings orch.json '{"orchestration": {"sandboxed": "yes"}}'
  u_case run --settings "$CT/orch.json"
  assert_contains "$ERR" "orchestration.sandboxed" "the message names the key"
}

t_settings_wrong_type() {
  write_settings type.json '{
  "sandbox": {
    "readOnly": "yes"
  }
}
'
  u_case run --settings "$CT/type.json"
  assert_contains "$ERR" "readOnly" "the message names the key"
  assert_contains "$ERR" "type.json" "the message names the file"
}

t_settings_wrong_type_list() {
  write_settings list.json '{"sandbox": {"allowedPaths": "/tmp"}}'
  u_case run --settings "$CT/list.json"
  assert_contains "$ERR" "allowedPaths" "the message names the key"
  write_settings item.json '{"sandbox": {"deniedPaths": [42]}}'
  u_case run --settings "$CT/item.json"
  assert_contains "$ERR" "deniedPaths" "the message names the key"
}

t_settings_not_object() {
  write_settings array.json '["sandbox"]'
  u_case run --settings "$CT/array.json"
  write_settings empty.json ''
  u_case run --settings "$CT/empty.json"
}

t_settings_enabled_false() {
  write_settings off.json '{"sandbox": {"enabled": false}}'
  u_case run --settings "$CT/off.json"
  assert_contains "$ERR" "enabled" "the message says that enabled:false is refused"
}

t_settings_is_directory() {
  mkdir "$CT/settings.d"
  u_case run --settings "$CT/settings.d"
}

t_unknown_subcommand() {
  crun no-such-subcommand
  [ "$RC" != 0 ] || die "an unknown subcommand succeeded: $(last_run)"
  assert_cordon_stderr
}

t_options_after_command_belong_to_it() {
  expect_output "--allow rel --bogus" run -- echo --allow rel --bogus
  expect_output "--network bogus" run echo --network bogus
}

t_timeout_values_refused() {
  local v
  for v in abc 1x -1 '' nan; do
    usage_error run "--timeout=$v" -- "${MARKER_CMD[@]}" "$WS/marker"
  done
}

t_network_proxy_without_proxy() {
  # proxy mode with no loopback proxy in the proxy variables must fail closed
  unset HTTP_PROXY HTTPS_PROXY ALL_PROXY http_proxy https_proxy all_proxy NO_PROXY no_proxy
  u_case run --network proxy
}

t_workspace_missing() {
  u_case run --workspace "$CT/no-such-ws"
  assert_absent "$CT/no-such-ws" "a missing workspace was created on the host"
}

run_usage unknown_flag run --no-such-flag
run_usage unknown_flag_equals run --no-such-flag=1
# Issue 23's wrong invocations: a misspelt top-level key under --strict-settings (a
# warning without it: test_settings.sh), the new toolchains key of the wrong type, a
# workspace that is a file, a --chdir that a --workspace elsewhere does not make visible.
t_issue23_settings() {
  write_settings sanbox.json '{"sanbox": {"deniedPaths": ["<workspace>/.env"]}}'
  u_case run --strict-settings --settings "$CT/sanbox.json"
  assert_contains "$ERR" '"sanbox"' "the message names the key"
  assert_contains "$ERR" '"sandbox"' "the message names the nearest known key"
  write_settings strict.json '{"sanbox": {}, "sandbox": {"strictSettings": true}}'
  u_case run --settings "$CT/strict.json"
  write_settings tc.json '{"sandbox": {"toolchains": "yes"}}'
  u_case run --settings "$CT/tc.json"
  assert_contains "$ERR" "toolchains" "the message names the key"
}

t_issue23_workspace_chdir() {
  echo f >"$CT/file"
  u_case run --workspace "$CT/file"
  mkdir -p "$CT/proj"
  u_case run --workspace "$CT/proj" --chdir "$OUTSIDE"
  assert_contains "$ERR" "would not be visible"
}

run_case missing_argument t_missing_argument
run_case missing_command t_missing_command
run_case settings_missing t_settings_missing
run_case settings_malformed t_settings_malformed
run_case settings_truncated t_settings_truncated
run_case settings_unknown_key t_settings_unknown_key
run_case settings_unknown_top_key t_settings_unknown_top_key
run_case settings_wrong_type t_settings_wrong_type
run_case settings_wrong_type_list t_settings_wrong_type_list
run_case settings_not_object t_settings_not_object
run_case settings_enabled_false t_settings_enabled_false
run_case settings_is_directory t_settings_is_directory
run_usage relative_allow run --allow relative/dir
run_usage relative_allow_ro run --allow-ro relative/dir
run_usage relative_deny run --deny relative/dir
run_usage relative_chdir run --chdir relative/dir
run_usage relative_data_root run --data-root relative/dir
run_usage dot_relative_allow run --allow ./ws
run_usage empty_allow run --allow ''
run_usage empty_allow_ro run --allow-ro=
run_usage empty_deny run --deny ''
run_usage empty_chdir run --chdir ''
run_usage empty_workspace run --workspace ''
run_usage unknown_base run --base bogus
run_usage empty_base run --base ''
run_usage unknown_network run --network bogus
run_case network_proxy_without_proxy t_network_proxy_without_proxy
run_usage timeout_abc run --timeout abc
run_case timeout_values_refused t_timeout_values_refused
run_usage env_without_value_name run --env =value
run_usage flag_value_missing_before_dashdash run --settings --
run_case workspace_missing t_workspace_missing
run_case unknown_subcommand t_unknown_subcommand
run_case options_after_command_belong_to_it t_options_after_command_belong_to_it
run_usage explain_unknown_flag explain --no-such-flag
run_usage toolchains_with_value run --toolchains=yes
run_usage publish_port_ambiguous run --publish-port 8000:3000
run_usage docker_p_flag run -p 8000:3000
run_case issue23_settings t_issue23_settings
run_case issue23_workspace_chdir t_issue23_workspace_chdir
run_usage explain_relative_allow explain --allow relative/dir
finish
