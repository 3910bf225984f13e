#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Symlink attacks: a symlink planted under a writable path that points outside, combined
# with a rule whose path runs through it, must never make cordon's setup create or change
# anything in the host target (checked byte for byte, modification times included, whatever
# the exit status). The contract also says such a run fails closed: exit 125.
. "$(dirname "$0")/lib.sh"

# The host directory the attacker wants cordon to write into.
setup_victim() {
  VICTIM=$OUTSIDE/victim
  mkdir -p "$VICTIM/sub/deeper"
  echo "keep me" >"$VICTIM/keep"
  echo "sub file" >"$VICTIM/sub/file"
  chmod 0755 "$VICTIM" "$VICTIM/sub"
  touch -d '2020-01-01 00:00:00' "$VICTIM/sub/deeper" "$VICTIM/sub" "$VICTIM" "$OUTSIDE"
  VICTIM_BEFORE=$(snapshot "$OUTSIDE" strict)
}

# attack NAME_OF_LINK_TARGET RULE... : run `true` with the rules, then check the victim.
# With fail_closed=1 (the default) the run must also exit 125.
attack() {
  local fail_closed=${FAIL_CLOSED:-1}
  crun run "$@" -- true
  assert_unchanged "$VICTIM_BEFORE" "$OUTSIDE" "SETUP WROTE THROUGH A SYMLINK into the host directory" strict
  if [ "$fail_closed" = 1 ]; then
    [ "$RC" = 125 ] || die "host unchanged, but a rule through a symlink under a writable path did not fail closed: expected 125, got $(last_run)"
    assert_cordon_stderr
  elif [ "$RC" != 0 ] && [ "$RC" != 125 ]; then
    die "expected exit 0 or 125 (refusal), got $(last_run)"
  fi
}

t_deny_new_through_symlink() {
  setup_victim
  ln -s "$VICTIM" "$WS/evil"
  attack --deny "$WS/evil/x"
}

t_deny_nested_new_through_symlink() {
  setup_victim
  ln -s "$VICTIM" "$WS/evil"
  attack --deny "$WS/evil/a/b/c"
}

t_deny_existing_through_symlink() {
  setup_victim
  ln -s "$VICTIM" "$WS/evil"
  attack --deny "$WS/evil/keep"
}

t_deny_dir_through_symlink() {
  setup_victim
  ln -s "$VICTIM" "$WS/evil"
  attack --deny "$WS/evil/sub"
}

t_deny_through_relative_symlink() {
  setup_victim
  mkdir "$WS/a"
  ln -s ../../outside/victim "$WS/a/rel"
  attack --deny "$WS/a/rel/x"
}

t_deny_through_intermediate_symlink() {
  setup_victim
  mkdir -p "$WS/a"
  ln -s "$VICTIM/sub" "$WS/a/b"
  attack --deny "$WS/a/b/deeper/new"
}

t_allow_ro_through_symlink() {
  setup_victim
  ln -s "$VICTIM" "$WS/evil"
  attack --allow-ro "$WS/evil/sub"
}

t_allow_ro_new_through_symlink() {
  setup_victim
  ln -s "$VICTIM" "$WS/evil"
  attack --allow-ro "$WS/evil/newdir"
}

t_allow_new_through_symlink() {
  setup_victim
  ln -s "$VICTIM" "$WS/evil"
  attack --allow "$WS/evil/newdir/deeper"
}

t_allow_through_symlink_no_host_write() {
  # the worst case: a write rule whose path runs through a planted link must not make the
  # link's host target writable from inside
  setup_victim
  ln -s "$VICTIM" "$WS/evil"
  crun run --allow "$WS/evil/sub" -- sh -c '(echo pwned >"$1/evil/sub/pwned") 2>/dev/null && echo "wrote through the link"; exit 0' sh "$WS"
  if [ -e "$VICTIM/sub/pwned" ]; then
    die "--allow WS/evil/sub (evil -> a host directory) let the command write into the host directory $VICTIM/sub (exit $RC)"
  fi
  assert_unchanged "$VICTIM_BEFORE" "$OUTSIDE" "the host directory behind the link" strict
  [ "$RC" = 125 ] || die "host unchanged, but the rule through a symlink did not fail closed: expected 125, got $(last_run)"
}

t_deny_on_symlink_itself() {
  setup_victim
  ln -s "$VICTIM" "$WS/evil"
  FAIL_CLOSED=0 attack --deny "$WS/evil"
  # and the link itself is still a link to the same place
  assert_eq "$(readlink "$WS/evil")" "$VICTIM" "the planted link after the run"
}

t_symlink_in_allowed_dir() {
  # the same attack under an --allow'ed directory instead of the workspace
  setup_victim
  mkdir "$CT/data"
  ln -s "$VICTIM" "$CT/data/evil"
  attack --allow "$CT/data" --deny "$CT/data/evil/x"
}

t_git_dir_symlink() {
  # .git/hooks and .git/config are protected at the top of every writable path: a .git
  # that is a symlink to a host directory must not make setup create hooks/ or config there
  setup_victim
  ln -s "$VICTIM" "$WS/.git"
  FAIL_CLOSED=0 attack
}

t_gitdir_file_pointing_outside() {
  setup_victim
  echo "gitdir: $VICTIM/sub/deeper/gd" >"$WS/.git"
  FAIL_CLOSED=0 attack
}

t_dangling_protected_name() {
  # .cordon/.codex/.agents "cannot be created where missing": a dangling link in their
  # place must not make setup create the link's target on the host
  setup_victim
  ln -s "$VICTIM/created-cordon" "$WS/.cordon"
  ln -s "$VICTIM/created-codex" "$WS/.codex"
  ln -s "$VICTIM/created-agents" "$WS/.agents"
  FAIL_CLOSED=0 attack
}

t_symlink_cannot_escape_at_run_time() {
  # a link the command follows leads nowhere: the target is not in the view
  setup_victim
  ln -s "$VICTIM" "$WS/evil"
  crun run -- sh -c 'cat evil/keep 2>/dev/null && echo "read through link"; (echo x >evil/new) 2>/dev/null && echo "wrote through link"; exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "following a planted link from inside"
  assert_unchanged "$VICTIM_BEFORE" "$OUTSIDE" "the host directory behind the link" strict
}

t_harmless_symlink_still_runs() {
  # positive control: a link under the workspace that no rule crosses is fine
  ln -s /usr/bin "$WS/bin-link"
  mkdir "$WS/secret-dir"
  expect_output "ok" run --deny "$WS/secret-dir" -- sh -c '[ -x bin-link/true ] && echo ok'
}

run_case deny_new_through_symlink t_deny_new_through_symlink
run_case deny_nested_new_through_symlink t_deny_nested_new_through_symlink
run_case deny_existing_through_symlink t_deny_existing_through_symlink
run_case deny_dir_through_symlink t_deny_dir_through_symlink
run_case deny_through_relative_symlink t_deny_through_relative_symlink
run_case deny_through_intermediate_symlink t_deny_through_intermediate_symlink
run_case allow_ro_through_symlink t_allow_ro_through_symlink
run_case allow_ro_new_through_symlink t_allow_ro_new_through_symlink
run_case allow_new_through_symlink t_allow_new_through_symlink
run_case allow_through_symlink_no_host_write t_allow_through_symlink_no_host_write
run_case deny_on_symlink_itself t_deny_on_symlink_itself
run_case symlink_in_allowed_dir t_symlink_in_allowed_dir
run_case git_dir_symlink t_git_dir_symlink
run_case gitdir_file_pointing_outside t_gitdir_file_pointing_outside
run_case dangling_protected_name t_dangling_protected_name
run_case symlink_cannot_escape_at_run_time t_symlink_cannot_escape_at_run_time
run_case harmless_symlink_still_runs t_harmless_symlink_still_runs
finish
