#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --timeout SECONDS: the whole sandbox is killed after SECONDS (decimals allowed), exit 124
# as GNU timeout, nothing left running; a command that ends in time keeps its status.
. "$(dirname "$0")/lib.sh"

# expect_timeout MARK MIN_MS MAX_MS ARG...
expect_timeout() {
  local m=$1 min=$2 max=$3
  shift 3
  crun "$@"
  # killed, but cordon does not wait for the namespace's teardown (src/cli/main.c): on a
  # loaded machine the last of them may still be exiting for a moment
  wait_no_sleepers "$m" 5 || { reap_sleepers "$m"; die "cordon $(_argstr "$@"): sandboxed process(es) still alive 5 s after it returned"; }
  [ "$RC" = 124 ] || die "cordon $(_argstr "$@"): expected exit 124, got $(last_run)"
  [ "$ELAPSED_MS" -le "$max" ] || die "cordon $(_argstr "$@"): took ${ELAPSED_MS}ms (limit ${max}ms)"
  [ "$ELAPSED_MS" -ge "$min" ] || die "cordon $(_argstr "$@"): returned after only ${ELAPSED_MS}ms (before the timeout)"
}

t_timeout_expires() {
  local m
  m=$(new_mark)
  expect_timeout "$m" 400 4000 run --timeout 0.5 -- sleep "10.$m"
}

t_timeout_equals_form() {
  local m
  m=$(new_mark)
  expect_timeout "$m" 250 4000 run --timeout=0.3 -- sleep "10.$m"
}

t_timeout_integer() {
  local m
  m=$(new_mark)
  expect_timeout "$m" 900 5000 run --timeout 1 -- sleep "10.$m"
}

t_timeout_term_ignored() {
  local m
  m=$(new_mark)
  expect_timeout "$m" 400 8000 run --timeout 0.5 -- sh -c 'trap "" TERM INT HUP; sleep "10.$1"; sleep "10.$1"' sh "$m"
}

t_timeout_kills_background() {
  local m
  m=$(new_mark)
  expect_timeout "$m" 400 4000 run --timeout 0.5 -- sh -c 'sleep "10.$1" & sleep "10.$1" & wait' sh "$m"
}

t_timeout_not_reached() {
  expect_exit 3 run --timeout 5 -- sh -c 'exit 3'
  [ "$ELAPSED_MS" -lt 4000 ] || die "a quick command under --timeout 5 took ${ELAPSED_MS}ms"
  expect_output "done" run --timeout 5 -- sh -c 'sleep 0.2; echo done'
}

t_timeout_status_json() {
  local m
  m=$(new_mark)
  expect_timeout "$m" 400 4000 run --timeout 0.5 --status-json "$CT/status.json" -- sleep "10.$m"
  [ -s "$CT/status.json" ] || die "--status-json file not written"
  assert_eq "$(json_get "$CT/status.json" timed_out)" true "timed_out"
  assert_eq "$(json_get "$CT/status.json" exit_code)" 124 "exit_code"
  assert_eq "$(json_get "$CT/status.json" started)" true "started"
}

run_case timeout_expires t_timeout_expires
run_case timeout_equals_form t_timeout_equals_form
run_case timeout_integer t_timeout_integer
run_case timeout_term_ignored t_timeout_term_ignored
run_case timeout_kills_background t_timeout_kills_background
run_case timeout_not_reached t_timeout_not_reached
run_case timeout_status_json t_timeout_status_json
finish
