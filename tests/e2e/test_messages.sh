#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What cordon says (issue 9, items 7 and 10): a "cordon: warning:" line for each rule that
# changes nothing (the run goes on), suggestions for misspelt flags, values and settings
# keys, and messages that name the real cause.
. "$(dirname "$0")/lib.sh"
require_cordon

t_warnings_for_rules_that_do_nothing() {
  crun run --allow /nonexistent-cordon/dir -- true
  [ "$RC" = 0 ] || die "a rule that does nothing is not an error: $(last_run)"
  assert_contains "$ERR" "cordon: warning: --allow /nonexistent-cordon/dir: does not exist" "a missing path"
  # the writable workspace wins at equal length: --allow-ro of it changes nothing
  crun run --allow-ro "$WS" -- sh -c 'touch made && echo touched'
  assert_contains "$OUT" "touched" "the workspace stays writable"
  assert_contains "$ERR" "cordon: warning: --allow-ro $WS: overridden by" "a rule overridden at equal length"
  # a read rule below what the base already shows read-only adds nothing
  crun run --base host -- true
  local quiet=$ERR
  crun run --base host --allow-ro /usr/share -- true
  assert_contains "$ERR" "cordon: warning: --allow-ro /usr/share: already read-only through /" "a redundant rule"
  # settings paths that do not exist are named with their file and line
  printf '{\n  "sandbox": {\n    "allowedPaths": ["~/no-such-cache"]\n  }\n}\n' >"$CT/s.json"
  crun run --settings "$CT/s.json" -- true
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_contains "$ERR" "cordon: warning: $CT/s.json:3 $HOME/no-such-cache: does not exist"
  crun explain --allow /nonexistent-cordon/dir
  assert_contains "$ERR" "cordon: warning:" "explain says it too"
  # positive controls: rules that do something say nothing
  crun run --allow-ro "$OUTSIDE" --deny "$WS/sub" -- true
  assert_not_contains "$ERR" "warning" "rules that change the view"
  assert_not_contains "$quiet" "warning" "no rule at all"
}

t_suggestions() {
  expect_exit 125 run --alow /x -- true
  assert_contains "$ERR" "did you mean --allow?"
  expect_exit 125 run -allow /x -- true
  assert_contains "$ERR" "did you mean '--allow'?"
  expect_exit 125 run --timout 3 -- true
  assert_contains "$ERR" "did you mean --timeout?"
  expect_exit 125 run --base hots -- true
  assert_contains "$ERR" "did you mean 'host'?"
  expect_exit 125 run --isolation landlok -- true
  assert_contains "$ERR" "did you mean 'landlock'?"
  printf '{"sandbox": {"alowedPaths": []}}\n' >"$CT/s.json"
  expect_exit 125 run --settings "$CT/s.json" -- true
  assert_contains "$ERR" 'did you mean "sandbox.allowedPaths"?'
  # nothing close: no guess
  expect_exit 125 run --xyzzy -- true
  assert_not_contains "$ERR" "did you mean"
  # every mode --network names works here: none, host, proxy
  expect_exit 125 run --network everywhere -- true
  assert_contains "$ERR" "none, host, proxy"
}

t_option_needs_a_value() {
  expect_exit 125 run --allow -- true
  assert_contains "$ERR" "--allow needs a value (PATH)" "not '--' taken as a path"
  assert_not_contains "$ERR" "relative path"
  expect_exit 125 run --allow-ro --deny /x -- true
  assert_contains "$ERR" "--allow-ro needs a value (PATH) before --deny"
  # positive control: a value that merely starts with a dash is a value
  expect_ok run --env X=--deny -- true
}

t_no_nested_says_so() {
  [ "$MY_UID" -ne 0 ] || skip_case "as root no sandbox nests anyway (CAP_SETFCAP); uid 65534 runs this"
  crun run --no-nested --allow-ro "$(dirname "$CORDON")" -- "$CORDON" run -- true
  [ "$RC" = 125 ] || die "expected 125 from the nested cordon, got $(last_run)"
  assert_contains "$ERR" "--no-nested" "the nested run names --no-nested"
  assert_not_contains "$ERR" "Docker" "it does not blame a container"
  # positive control: without --no-nested the same nested run works
  expect_ok run --allow-ro "$(dirname "$CORDON")" -- "$CORDON" run -- true
}

t_workspace_root_says_so() {
  expect_exit 125 run --workspace / -- true
  assert_contains "$ERR" "root directory" "a workspace of / says so"
  assert_not_contains "$ERR" "missing paths"
}

t_limits_mechanism_reported() {
  # cordon check says what cordon run uses for --limit-*
  local checked used
  checked=$("$CORDON" check --json 2>/dev/null | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["checks"]["cgroup_delegation"]["mechanism"])')
  # (--limit-memory only: as root without a cgroup it holds through RLIMIT_AS, where
  # --limit-pids would be refused, which tests/e2e/test_limits.sh checks)
  crun run --limit-memory 512M --status-json "$CT/st.json" -- true
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  used=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["limits"]["mechanism"])' "$CT/st.json")
  assert_eq "$checked" "$used" "cordon check's mechanism for --limit-* against cordon run's"
  if [ "$used" = rlimit ]; then
    assert_contains "$ERR" "cordon: note: --limit-* were enforced with rlimits" "the fallback is said"
  else
    assert_not_contains "$ERR" "rlimits" "no note with a cgroup"
  fi
}

t_help_layout() {
  local help
  help=$("$CORDON" help run)
  # the --isolation row: a long option on a line of its own, help below it
  printf '%s\n' "$help" | grep -qx '  --isolation namespaces|landlock|auto' || die "the --isolation row: $(printf '%s\n' "$help" | grep -- --isolation | head -1)"
  local long
  long=$(printf '%s\n' "$help" | sed -n '/^options:/,/^$/p' | awk 'length > 80' | head -3)
  [ -z "$long" ] || die "option lines longer than 80 columns: $long"
  help=$("$CORDON" help check)
  ! printf '%s\n' "$help" | grep -q '; for$' || die "help check breaks a sentence: $help"
}

t_enabled_false_names_the_file() {
  printf '{\n  "sandbox": {\n    "enabled": false\n  }\n}\n' >"$CT/off.json"
  expect_exit 125 run --settings "$CT/off.json" -- true
  assert_contains "$ERR" "$CT/off.json:3" "the message names the file and line"
}

run_case warnings_for_rules_that_do_nothing t_warnings_for_rules_that_do_nothing
run_case suggestions t_suggestions
run_case option_needs_a_value t_option_needs_a_value
run_case no_nested_says_so t_no_nested_says_so
run_case workspace_root_says_so t_workspace_root_says_so
run_case limits_mechanism_reported t_limits_mechanism_reported
run_case help_layout t_help_layout
run_case enabled_false_names_the_file t_enabled_false_names_the_file
finish
