#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --deny: a hidden path is an empty, unwritable directory (or empty file), even inside a
# writable path; specificity decides between overlapping rules; nothing is left behind.
. "$(dirname "$0")/lib.sh"

make_secret_dir() {
  mkdir -p "$WS/secret/sub"
  echo "top secret" >"$WS/secret/a.txt"
  echo "deeper secret" >"$WS/secret/sub/b.txt"
}

t_deny_dir_empty() {
  make_secret_dir
  local before
  before=$(snapshot "$WS/secret" strict)
  crun run --deny "$WS/secret" -- sh -c '
    [ -d secret ] || echo "not a directory"
    [ -z "$(ls -A secret 2>/dev/null)" ] || echo "listing: $(ls -A secret | tr "\n" " ")"
    cat secret/a.txt 2>/dev/null && echo "read a.txt"
    (echo x >secret/new) 2>/dev/null && echo "created secret/new"
    mkdir secret/newdir 2>/dev/null && echo "created secret/newdir"
    (echo x >secret/a.txt) 2>/dev/null && echo "overwrote secret/a.txt"
    exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "denied directory inside the workspace"
  assert_unchanged "$before" "$WS/secret" "the denied directory on the host" strict
}

t_deny_file_empty() {
  echo "TOKEN=hunter2" >"$WS/token.env"
  crun run --deny "$WS/token.env" -- sh -c '
    [ -e token.env ] || echo "absent"
    c=$(cat token.env 2>&1) || echo "cat failed: $c"
    [ -z "$c" ] || echo "content: $c"
    (echo overwritten >token.env) 2>/dev/null && echo "overwrote token.env"
    (echo appended >>token.env) 2>/dev/null && echo "appended to token.env"
    exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "denied file inside the workspace"
  assert_file_content "$WS/token.env" "TOKEN=hunter2" "the denied file on the host"
}

t_deny_nested_allow() {
  # --allow A --deny A/b --allow A/b/c: A writable, A/b hidden, A/b/c writable again
  local a=$CT/a
  mkdir -p "$a/b/c"
  echo "hidden" >"$a/b/hidden.txt"
  echo "in c" >"$a/b/c/keep.txt"
  crun run --allow "$a" --deny "$a/b" --allow "$a/b/c" -- sh -c '
    a=$1
    (echo top >"$a/top.txt") 2>/dev/null || echo "cannot write A"
    [ -e "$a/b/hidden.txt" ] && echo "A/b/hidden.txt visible"
    (echo x >"$a/b/new.txt") 2>/dev/null && echo "wrote A/b/new.txt"
    [ "$(cat "$a/b/c/keep.txt" 2>/dev/null)" = "in c" ] || echo "A/b/c/keep.txt not readable"
    (echo deep >"$a/b/c/deep.txt") 2>/dev/null || echo "cannot write A/b/c"
    exit 0' sh "$a"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "--allow A --deny A/b --allow A/b/c"
  assert_file_content "$a/top.txt" "top"
  assert_file_content "$a/b/c/deep.txt" "deep"
  assert_absent "$a/b/new.txt"
  assert_file_content "$a/b/hidden.txt" "hidden"
}

t_deny_beats_allow_same_path() {
  local x=$CT/x
  mkdir "$x"
  echo "x secret" >"$x/f"
  local order
  for order in allow-first deny-first; do
    if [ $order = allow-first ]; then
      crun run --allow "$x" --deny "$x" -- sh -c 'cat "$1/f" 2>/dev/null; (echo w >"$1/g") 2>/dev/null && echo wrote; exit 0' sh "$x"
    else
      crun run --deny "$x" --allow "$x" -- sh -c 'cat "$1/f" 2>/dev/null; (echo w >"$1/g") 2>/dev/null && echo wrote; exit 0' sh "$x"
    fi
    [ "$RC" = 0 ] || die "($order) expected exit 0, got $(last_run)"
    assert_eq "$OUT" "" "--allow X and --deny X ($order): deny must win"
  done
  assert_absent "$x/g"
}

t_deny_in_system_base() {
  [ -f /etc/hostname ] && [ -s /etc/hostname ] || skip_case "/etc/hostname missing or empty on this host"
  expect_output "" run --deny /etc/hostname -- cat /etc/hostname
  expect_output "$(cat /etc/hostname)" run -- cat /etc/hostname
}

t_deny_leaves_nothing_behind() {
  make_secret_dir
  echo "TOKEN" >"$WS/token.env"
  local before
  before=$(snapshot "$WS")
  expect_ok run --deny "$WS/secret" --deny "$WS/token.env" --deny "$WS/secret/sub/b.txt" -- true
  assert_unchanged "$before" "$WS" "workspace after a run with --deny rules"
}

t_deny_missing_path_no_stub() {
  # cordon may accept the rule (then the command must not be able to create the path) or
  # refuse it; either way nothing may be left behind
  local before
  before=$(snapshot "$WS")
  crun run --deny "$WS/does-not-exist" --deny "$WS/nope/deeper" -- sh -c '
    mkdir -p does-not-exist/x 2>/dev/null && echo "created does-not-exist/x"
    (echo x >does-not-exist/f) 2>/dev/null && echo "wrote does-not-exist/f"
    (echo x >does-not-exist) 2>/dev/null && echo "wrote does-not-exist"
    mkdir -p nope/deeper/x 2>/dev/null && echo "created nope/deeper/x"
    exit 0'
  case $RC in
    0) [ -z "$OUT" ] || die "a denied missing path could be created inside: $(printf '%s' "$OUT" | _one_line)" ;;
    125) assert_cordon_stderr ;;
    *) die "expected exit 0 or 125 (refused), got $(last_run)" ;;
  esac
  assert_unchanged "$before" "$WS" "a --deny of a missing path left something behind in the workspace"
}

t_deny_outside_allowed_irrelevant() {
  # a deny rule on a path outside the view changes nothing and creates nothing
  local before
  before=$(snapshot "$OUTSIDE" strict)
  expect_ok run --deny "$OUTSIDE/secret" --deny "$OUTSIDE/newdir/x" -- true
  assert_unchanged "$before" "$OUTSIDE" "a --deny outside the view changed the host" strict
}

run_case deny_dir_empty t_deny_dir_empty
run_case deny_file_empty t_deny_file_empty
run_case deny_nested_allow t_deny_nested_allow
run_case deny_beats_allow_same_path t_deny_beats_allow_same_path
run_case deny_in_system_base t_deny_in_system_base
run_case deny_leaves_nothing_behind t_deny_leaves_nothing_behind
run_case deny_missing_path_no_stub t_deny_missing_path_no_stub
run_case deny_outside_view_creates_nothing t_deny_outside_allowed_irrelevant
finish
