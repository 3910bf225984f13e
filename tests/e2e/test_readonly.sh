#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --read-only, --allow-ro and --allow: what is visible, what is writable, and that a
# refused write changes nothing on the host.
. "$(dirname "$0")/lib.sh"

t_read_only_workspace() {
  echo "readable" >"$WS/f"
  local before
  before=$(snapshot "$WS" strict)
  crun run --read-only -- sh -c '
    [ "$(cat f)" = readable ] || echo "cannot read f"
    (echo x >new) 2>/dev/null && echo "created new"
    (echo x >>f) 2>/dev/null && echo "appended to f"
    mkdir d 2>/dev/null && echo "created d"
    rm -f f 2>/dev/null; [ -e f ] || echo "removed f"
    exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "--read-only workspace"
  assert_unchanged "$before" "$WS" "the workspace under --read-only" strict
}

t_read_only_keeps_home_tmp_writable() {
  crun run --read-only -- sh -c '
    (echo h >"$HOME/h") 2>/dev/null || echo "HOME not writable ($HOME)"
    if [ -n "${TMPDIR:-}" ]; then (echo t >"$TMPDIR/t") 2>/dev/null || echo "TMPDIR not writable ($TMPDIR)"; else echo "TMPDIR unset"; fi
    (echo s >/tmp/s) 2>/dev/null || echo "/tmp not writable"
    exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "private HOME, TMPDIR and /tmp under --read-only"
}

t_read_only_covers_allow() {
  local extra=$CT/extra
  mkdir "$extra"
  echo "extra" >"$extra/f"
  crun run --read-only --allow "$extra" -- sh -c '[ "$(cat "$1/f")" = extra ] || echo "cannot read"; (echo x >"$1/new") 2>/dev/null && echo "wrote $1/new"; exit 0' sh "$extra"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "--read-only --allow PATH"
  assert_absent "$extra/new"
}

t_allow_writable() {
  local extra=$CT/extra
  mkdir "$extra"
  echo "extra" >"$extra/f"
  expect_output "extra" run --allow "$extra" -- sh -c 'cat "$1/f" && echo made >"$1/new"' sh "$extra"
  assert_file_content "$extra/new" "made"
}

t_allow_equals_form() {
  local extra=$CT/extra
  mkdir "$extra"
  expect_ok run --allow="$extra" -- sh -c 'echo made >"$1/new"' sh "$extra"
  assert_file_content "$extra/new" "made"
}

t_allow_ro() {
  local ro=$CT/ro
  mkdir -p "$ro/sub"
  echo "ro content" >"$ro/f"
  local before
  before=$(snapshot "$ro" strict)
  crun run --allow-ro "$ro" -- sh -c '
    [ "$(cat "$1/f")" = "ro content" ] || echo "cannot read $1/f"
    (echo x >"$1/new") 2>/dev/null && echo "created new"
    (echo x >>"$1/f") 2>/dev/null && echo "appended to f"
    mkdir "$1/d" 2>/dev/null && echo "created d"
    rmdir "$1/sub" 2>/dev/null && echo "removed sub"
    exit 0' sh "$ro"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "--allow-ro PATH"
  assert_unchanged "$before" "$ro" "an --allow-ro directory" strict
}

t_allow_ro_inside_workspace() {
  mkdir "$WS/vendor"
  echo "lib" >"$WS/vendor/lib.c"
  crun run --allow-ro "$WS/vendor" -- sh -c '
    (echo x >vendor/new) 2>/dev/null && echo "wrote vendor/new"
    (echo x >top) 2>/dev/null || echo "cannot write the workspace"
    exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "--allow-ro WS/vendor inside the writable workspace"
  assert_absent "$WS/vendor/new"
  assert_file_content "$WS/top" "x"
}

t_allow_inside_allow_ro() {
  local ro=$CT/ro
  mkdir -p "$ro/w"
  crun run --allow-ro "$ro" --allow "$ro/w" -- sh -c '
    (echo x >"$1/new") 2>/dev/null && echo "wrote ro/new"
    (echo x >"$1/w/new") 2>/dev/null || echo "cannot write ro/w"
    exit 0' sh "$ro"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "--allow-ro A --allow A/w"
  assert_absent "$ro/new"
  assert_file_content "$ro/w/new" "x"
}

t_allow_ro_single_file() {
  echo "config" >"$OUTSIDE/config.toml"
  crun run --allow-ro "$OUTSIDE/config.toml" -- sh -c 'cat "$1"; (echo x >>"$1") 2>/dev/null && echo "appended"; [ -e "$2" ] && echo "sibling visible"; exit 0' sh "$OUTSIDE/config.toml" "$OUTSIDE/secret"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "config" "--allow-ro FILE"
  assert_file_content "$OUTSIDE/config.toml" "config"
}

run_case read_only_workspace t_read_only_workspace
run_case read_only_keeps_home_tmp_writable t_read_only_keeps_home_tmp_writable
run_case read_only_covers_allow t_read_only_covers_allow
run_case allow_writable t_allow_writable
run_case allow_equals_form t_allow_equals_form
run_case allow_ro t_allow_ro
run_case allow_ro_inside_workspace t_allow_ro_inside_workspace
run_case allow_inside_allow_ro t_allow_inside_allow_ro
run_case allow_ro_single_file t_allow_ro_single_file
finish
