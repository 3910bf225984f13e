#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --deny-glob GLOB (contract): every match hidden like --deny, expanded at launch under the
# pattern's static prefix; --glob-depth N limits how deep it looks.
. "$(dirname "$0")/lib.sh"

require_glob() {
  crun help run
  case $OUT in *--deny-glob*) ;; *) skip_case "cordon help run does not list --deny-glob: not implemented yet" ;; esac
}

make_tree() {
  mkdir -p "$WS/a/b/c"
  echo "TOP" >"$WS/top.env"
  echo "A" >"$WS/a/one.env"
  echo "C" >"$WS/a/b/c/deep.env"
  echo "keep" >"$WS/a/keep.txt"
}

t_deny_glob_hides_matches() {
  require_glob
  make_tree
  local before
  before=$(snapshot "$WS")
  crun run --deny-glob "$WS/**/*.env" -- sh -c '
    for f in top.env a/one.env a/b/c/deep.env; do
      c=$(cat "$f" 2>/dev/null); [ -z "$c" ] || echo "readable: $f"
      (echo x >"$f") 2>/dev/null && echo "writable: $f"
    done
    [ "$(cat a/keep.txt)" = keep ] || echo "a/keep.txt not readable"
    (echo y >a/new.txt) 2>/dev/null || echo "cannot write a/new.txt"
    exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "--deny-glob WS/**/*.env"
  rm -f "$WS/a/new.txt"
  assert_unchanged "$before" "$WS" "the workspace after a --deny-glob run"
}

t_deny_glob_single_level() {
  require_glob
  make_tree
  crun run --deny-glob "$WS/a/*.env" -- sh -c 'cat a/one.env 2>/dev/null; cat a/b/c/deep.env; cat top.env'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "C
TOP" "--deny-glob WS/a/*.env hides a/one.env only"
}

t_glob_depth() {
  require_glob
  make_tree
  crun run --deny-glob "$WS/**/*.env" --glob-depth 1 -- sh -c 'cat a/b/c/deep.env 2>/dev/null; exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "C" "--glob-depth 1 does not look three levels down"
}

t_deny_glob_relative_refused() {
  require_glob
  expect_exit 125 run --deny-glob '*.env' -- sh -c 'touch "$1"' sh "$WS/marker"
  assert_cordon_stderr
  assert_absent "$WS/marker"
}

run_case deny_glob_hides_matches t_deny_glob_hides_matches
run_case deny_glob_single_level t_deny_glob_single_level
run_case glob_depth t_glob_depth
run_case deny_glob_relative_refused t_deny_glob_relative_refused
finish
