#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --version and help: `cordon help run` and `cordon run --help` list every run flag.
. "$(dirname "$0")/lib.sh"

RUN_FLAGS=(--base --workspace --no-workspace --allow --allow-ro --deny --deny-glob --glob-depth --read-only --settings
  --data-root --network --env --keep-env --clear-env --chdir --timeout --status-json --no-proc)

t_version() {
  expect_ok --version
  printf '%s\n' "$OUT" | grep -Eq '[0-9]+\.[0-9]+\.[0-9]+' || die "--version prints no version number: '$OUT'"
  assert_contains "$OUT" "cordon" "--version names the program"
}

check_flags() {
  local f missing=""
  for f in "${RUN_FLAGS[@]}"; do
    printf '%s\n' "$OUT" | grep -Eq -- "(^|[^a-z-])$f([^a-z-]|$)" || missing+=" $f"
  done
  [ -z "$missing" ] || die "$1 does not list:$missing"
}

t_help_run() {
  expect_ok help run
  check_flags "cordon help run"
}

t_run_help() {
  expect_ok run --help
  check_flags "cordon run --help"
}

t_run_help_runs_nothing() {
  crun run --help -- sh -c 'touch "$1"' sh "$WS/marker"
  [ "$RC" = 0 ] || [ "$RC" = 125 ] || die "expected 0 or 125, got $(last_run)"
  assert_absent "$WS/marker" "run --help ran the command"
}

t_help() {
  expect_ok help
  assert_contains "$OUT" "run" "help lists run"
  assert_contains "$OUT" "explain" "help lists explain"
  expect_ok --help
}

t_explain_help() {
  expect_ok explain --help
  [ -n "$OUT" ] || die "explain --help printed nothing"
  expect_ok help explain
}

t_help_unknown_topic() {
  crun help no-such-command
  [ "$RC" != 0 ] || die "help for an unknown command succeeded"
  assert_cordon_stderr
}

t_check() {
  # this host (and CI's) supports the default sandbox: check says so, in text and JSON
  expect_ok check
  [ -n "$OUT" ] || die "check printed nothing"
  expect_ok check --json
  "$PY" -c 'import json, sys; d = json.loads(sys.stdin.read()); assert isinstance(d, dict)' <<<"$OUT" ||
    die "check --json is not a JSON object: $(printf '%s' "$OUT" | head -c 300 | _one_line)"
  expect_exit 125 check --no-such-flag
  assert_cordon_stderr
}

run_case version t_version
run_case check t_check
run_case help_run t_help_run
run_case run_help t_run_help
run_case run_help_runs_nothing t_run_help_runs_nothing
run_case help t_help
run_case explain_help t_explain_help
run_case help_unknown_topic t_help_unknown_topic
finish
