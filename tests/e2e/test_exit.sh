#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Exit status: the command's own, 128+N for a signal, 124 timeout (see test_timeout),
# 125 cordon failed before the command started, 126 not executable, 127 not found; and the
# same facts in --status-json.
. "$(dirname "$0")/lib.sh"

t_own_status() {
  expect_exit 0 run -- true
  expect_exit 1 run -- false
  expect_exit 7 run -- sh -c 'exit 7'
  expect_exit 255 run -- sh -c 'exit 255'
}

t_killed_by_signal() {
  expect_exit 143 run -- sh -c 'kill -TERM $$'
  expect_exit 137 run -- sh -c 'kill -KILL $$'
  expect_exit 129 run -- sh -c 'kill -HUP $$'
}

t_bad_usage_125() {
  expect_exit 125 run --no-such-option -- sh -c 'touch "$1"' sh "$WS/marker"
  assert_cordon_stderr
  assert_absent "$WS/marker" "the command ran despite the usage error"
}

t_not_executable_126() {
  printf '#!/bin/sh\necho ran\n' >"$WS/script.sh"
  chmod 0644 "$WS/script.sh"
  expect_exit 126 run -- ./script.sh
  assert_not_contains "$OUT" "ran"
  assert_cordon_stderr
  expect_exit 126 run -- "$WS/script.sh"
  mkdir "$WS/adir"
  expect_exit 126 run -- "$WS/adir"
  # positive control: the same script made executable runs
  chmod 0755 "$WS/script.sh"
  expect_output "ran" run -- ./script.sh
}

t_not_found_127() {
  expect_exit 127 run -- no-such-command-cordon-e2e
  assert_cordon_stderr
  expect_exit 127 run -- /no/such/dir/cmd
  # exists on the host, but not in the view
  cp /bin/true "$OUTSIDE/true-copy"
  expect_exit 127 run -- "$OUTSIDE/true-copy"
  expect_exit 127 run --no-workspace --chdir / -- "$OUTSIDE/true-copy"
}

t_status_json_exit() {
  expect_exit 7 run --status-json "$CT/s.json" -- sh -c 'exit 7'
  [ -s "$CT/s.json" ] || die "--status-json file not written"
  "$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$CT/s.json" 2>/dev/null || die "--status-json is not valid JSON: $(head -c 200 "$CT/s.json")"
  local k v bad="" want
  for k in exit_code status signal timed_out started stage error; do
    v=$(json_get "$CT/s.json" $k)
    case $k in
      exit_code | status) want=7 ;;
      signal | stage | error) want=null ;;
      timed_out) want=false ;;
      started) want=true ;;
    esac
    [ "$v" = "$want" ] || bad+=" $k=$v (want $want)"
  done
  [ -z "$bad" ] || die "status json for 'exit 7':$bad"
}

t_status_json_signal() {
  expect_exit 143 run --status-json "$CT/s.json" -- sh -c 'kill -TERM $$'
  [ -s "$CT/s.json" ] || die "--status-json file not written"
  local bad="" v
  v=$(json_get "$CT/s.json" exit_code); [ "$v" = 143 ] || bad+=" exit_code=$v"
  v=$(json_get "$CT/s.json" signal); [ "$v" = 15 ] || bad+=" signal=$v"
  v=$(json_get "$CT/s.json" status); [ "$v" = null ] || bad+=" status=$v"
  v=$(json_get "$CT/s.json" timed_out); [ "$v" = false ] || bad+=" timed_out=$v"
  [ -z "$bad" ] || die "status json for a command killed by SIGTERM:$bad"
}

t_status_json_setup_failure() {
  # the working directory is not visible inside: a setup failure before the command starts
  expect_exit 125 run --status-json "$CT/s.json" --chdir "$OUTSIDE" -- sh -c 'touch "$1"' sh "$WS/marker"
  assert_absent "$WS/marker" "the command ran despite the setup failure"
  [ -s "$CT/s.json" ] || die "--status-json file not written on a setup failure"
  local bad="" v
  v=$(json_get "$CT/s.json" exit_code); [ "$v" = 125 ] || bad+=" exit_code=$v"
  v=$(json_get "$CT/s.json" started); [ "$v" = false ] || bad+=" started=$v"
  v=$(json_get "$CT/s.json" stage); case $v in '"'?*'"') ;; *) bad+=" stage=$v (want a name)" ;; esac
  v=$(json_get "$CT/s.json" error); case $v in '"'?*'"') ;; *) bad+=" error=$v (want a message)" ;; esac
  [ -z "$bad" ] || die "status json for a setup failure:$bad"
}

t_status_json_not_found() {
  expect_exit 127 run --status-json "$CT/s.json" -- no-such-command-cordon-e2e
  [ -s "$CT/s.json" ] || die "--status-json file not written"
  assert_eq "$(json_get "$CT/s.json" exit_code)" 127 "exit_code"
}

t_status_json_checked_before_the_run() {
  # a file that cannot be written fails the run before anything runs: 125, no marker
  expect_exit 125 run --status-json "$CT/no-such-dir/s.json" -- touch "$WS/marker"
  assert_absent "$WS/marker" "the command ran although --status-json could not be written"
  assert_contains "$ERR" "--status-json" "the message names the option"
  assert_contains "$ERR" "No such file or directory" "the message names the cause"
  mkdir "$CT/a-dir"
  expect_exit 125 run --status-json "$CT/a-dir" -- touch "$WS/marker"
  assert_absent "$WS/marker" "the command ran although --status-json names a directory"
  assert_contains "$ERR" "Is a directory"
  if [ "$MY_UID" -ne 0 ]; then
    mkdir "$CT/ro" && chmod 0555 "$CT/ro"
    expect_exit 125 run --status-json "$CT/ro/s.json" -- touch "$WS/marker"
    assert_absent "$WS/marker" "the command ran although --status-json's directory is read-only"
    assert_contains "$ERR" "Permission denied"
  fi
  # the positive control: a writable place, and the command runs
  expect_ok run --status-json "$CT/s.json" -- touch "$WS/marker"
  [ -e "$WS/marker" ] && [ -s "$CT/s.json" ] || die "the positive control did not run or write"
}

t_status_json_never_follows_a_planted_link() {
  # the command replaces FILE (in its workspace) with a symlink to a file outside, and
  # a directory of the path with a symlink to the outside: cordon writes neither there
  mkdir "$WS/out"
  echo "untouched" >"$OUTSIDE/victim"
  expect_exit 3 run --status-json "$WS/s.json" -- sh -c 'ln -sf "$1/victim" s.json; exit 3' sh "$OUTSIDE"
  assert_eq "$(cat "$OUTSIDE/victim")" "untouched" "the file the planted link pointed to"
  [ -f "$WS/s.json" ] && [ ! -L "$WS/s.json" ] || die "FILE should be the document, not the planted link"
  assert_eq "$(json_get "$WS/s.json" exit_code)" 3 "the document's exit_code"
  expect_exit 4 run --status-json "$WS/out/s.json" -- sh -c 'mv out out-moved && ln -s "$1" out; exit 4' sh "$OUTSIDE"
  assert_absent "$OUTSIDE/s.json" "the document followed a directory replaced by a link"
  assert_eq "$(json_get "$WS/out-moved/s.json" exit_code)" 4 "the document is in the directory opened before the run"
}

t_status_json_keeps_the_command_status() {
  # once the command ran, cordon exits with its status whatever happened to FILE: here
  # the command made it a directory, which the document cannot replace
  expect_exit 5 run --status-json "$WS/s.json" -- sh -c 'rm -f s.json; mkdir s.json; exit 5'
  assert_contains "$ERR" "cordon: warning: --status-json" "a warning says the document was not written"
  expect_exit 0 run --status-json "$WS/t.json" -- sh -c 'echo fake >t.json; chmod 0 t.json'
  assert_eq "$(json_get "$WS/t.json" exit_code)" 0 "the document replaced what the command wrote"
  # the wall time: from the start of the sandbox to its end
  expect_ok run --status-json "$CT/w.json" -- sleep 0.3
  "$PY" -c 'import json, sys; w = json.load(open(sys.argv[1]))["wall_seconds"]; sys.exit(0 if 0.3 <= w < 20 else 1)' "$CT/w.json" ||
    die "wall_seconds for sleep 0.3: $(json_get "$CT/w.json" wall_seconds)"
  # no temporary file left next to FILE
  assert_eq "$(ls -A "$CT" | grep -c cordon- || true)" 0 "temporary files left in $CT"
}

# Issue 9, item 8: "not found" when the command is there but its interpreter or its ELF
# loader is not: 126, naming what is missing.
t_missing_interpreter_or_loader_named() {
  printf '#!/nonexistent-cordon/bin/python9\nprint(1)\n' >"$WS/tool.py"
  chmod 0755 "$WS/tool.py"
  expect_exit 126 run -- ./tool.py
  assert_contains "$ERR" "interpreter /nonexistent-cordon/bin/python9" "the message names the interpreter"
  mkdir "$WS/bin"
  cp "$WS/tool.py" "$WS/bin/tool"
  expect_exit 126 run --env "PATH=$WS/bin:/usr/bin:/bin" -- tool
  assert_contains "$ERR" "$WS/bin/tool" "found through PATH"
  assert_contains "$ERR" "/nonexistent-cordon/bin/python9"
  # an interpreter the view shows, and one it does not (on the host: $OUTSIDE)
  printf '#!/bin/sh\necho "%s"\n' shown >"$OUTSIDE/interp"
  chmod 0755 "$OUTSIDE/interp"
  printf '#!%s\n' "$OUTSIDE/interp" >"$WS/wrapped"
  chmod 0755 "$WS/wrapped"
  expect_exit 126 run -- ./wrapped
  assert_contains "$ERR" "interpreter $OUTSIDE/interp"
  # the ELF loader: with /usr/bin alone the dynamic linker (/lib64/... or /lib/...) is missing
  local loader
  loader=$(readelf -l /usr/bin/true 2>/dev/null | sed -n 's/.*program interpreter: \(.*\)]/\1/p')
  if [ -n "$loader" ] && [ "${loader#/usr/}" = "$loader" ]; then
    expect_exit 126 run --base empty --allow-ro /usr/bin -- /usr/bin/true
    assert_contains "$ERR" "ELF loader $loader" "the message names the loader"
  fi
  # positive control: a command that is really missing is still 127, "not found"
  expect_exit 127 run -- no-such-command-cordon-e2e
  assert_contains "$ERR" "not found"
}

# On a merged-/usr host (/bin, /lib64 ... symlinks into /usr), a view that shows /usr gets
# the same symlinks, so --base empty --allow-ro /usr runs programs.
t_merged_usr_links() {
  [ -L /bin ] && [ "$(readlink /bin)" = usr/bin ] || skip_case "not a merged-/usr host (/bin is not a symlink to usr/bin)"
  expect_output "hello" run --base empty --allow-ro /usr --no-workspace --chdir / -- /bin/sh -c 'echo hello'
  expect_ok run --base empty --allow-ro /usr --no-workspace --chdir / -- /usr/bin/true
  expect_output "usr/bin" run --base empty --allow-ro /usr --no-workspace --chdir / -- /usr/bin/readlink /bin
  # not without /usr (nothing to point at)
  expect_exit 127 run --base empty --allow-ro /etc --no-workspace --chdir / -- /bin/sh -c true
}

run_case own_status t_own_status
run_case killed_by_signal t_killed_by_signal
run_case bad_usage_125 t_bad_usage_125
run_case not_executable_126 t_not_executable_126
run_case not_found_127 t_not_found_127
run_case status_json_exit t_status_json_exit
run_case status_json_signal t_status_json_signal
run_case status_json_setup_failure t_status_json_setup_failure
run_case status_json_not_found t_status_json_not_found
run_case missing_interpreter_or_loader_named t_missing_interpreter_or_loader_named
run_case merged_usr_links t_merged_usr_links
run_case status_json_checked_before_the_run t_status_json_checked_before_the_run
run_case status_json_never_follows_a_planted_link t_status_json_never_follows_a_planted_link
run_case status_json_keeps_the_command_status t_status_json_keeps_the_command_status
finish
