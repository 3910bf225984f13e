#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Rules that must never fail open: a rule path the kernel cannot resolve (".." after a
# component that does not exist) is refused, not guessed at; the directories between a
# writable path and a hidden one cannot be renamed away, so the next run with the same
# policy hides the same files. Each attack next to a positive control.
. "$(dirname "$0")/lib.sh"

# A run that must be refused before anything starts: exit 125, a cordon: message naming
# WHAT, the command never ran (it would have made $CT/ran), nothing new in the workspace.
refused_before_start() {
  local what=$1 before
  shift
  before=$(snapshot "$WS" strict)
  rm -f "$CT/ran"
  crun "$@" -- sh -c ': >"$1"' sh "$CT/ran"
  [ "$RC" = 125 ] || die "cordon $(_argstr "$@"): expected exit 125, got $(last_run)"
  assert_cordon_stderr
  assert_contains "$ERR" "$what" "the message names the input"
  assert_absent "$CT/ran" "the command ran although the run was refused"
  assert_unchanged "$before" "$WS" "the workspace changed although the run was refused" strict
}

make_sub() {
  mkdir -p "$WS/sub"
  echo "sub secret" >"$WS/sub/s.txt"
}

# --deny DIR/nope/../sub/s.txt used to hide nothing (and to plant a stub named nope).
t_dotdot_deny() {
  make_sub
  refused_before_start "'..' follows $WS/nope, which does not exist" run --deny "$WS/nope/../sub/s.txt"
  assert_contains "$ERR" "perhaps $WS/sub/s.txt" "the message suggests the likely path"
  # positive control: the same file named without '..' is hidden
  expect_output "" run --deny "$WS/sub/s.txt" -- cat sub/s.txt
  # and with every component present, '..' means what the kernel says it means
  mkdir "$WS/nope"
  expect_output "" run --deny "$WS/nope/../sub/s.txt" -- cat sub/s.txt
}

# --allow-ro DIR/nope/../sub used to leave sub writable.
t_dotdot_allow_ro() {
  make_sub
  refused_before_start "--allow-ro $WS/nope/../sub" run --allow-ro "$WS/nope/../sub"
  crun run --allow-ro "$WS/sub" -- sh -c 'echo x >sub/s.txt'
  [ "$RC" != 0 ] || die "positive control: sub was writable under --allow-ro $WS/sub"
  assert_file_content "$WS/sub/s.txt" "sub secret"
}

# After a file, '..' is ENOTDIR to the kernel: refused as well.
t_dotdot_after_file() {
  make_sub
  refused_before_start "which is not a directory" run --deny "$WS/sub/s.txt/../s.txt"
}

# Every other path input: --workspace, --chdir, <data-root>, a settings file, HOME.
t_dotdot_other_inputs() {
  make_sub
  refused_before_start "--workspace" run --workspace "$WS/nope/../sub"
  refused_before_start "--chdir" run --chdir "$WS/nope/../sub"
  printf '{"sandbox": {\n  "deniedPaths": ["<data-root>/s.txt"]\n}}\n' >"$CT/data.json"
  refused_before_start "$CT/data.json:2" run --settings "$CT/data.json" --data-root "$WS/nope/../sub"
  printf '{"sandbox": {\n  "deniedPaths": ["nope/../sub/s.txt"]\n}}\n' >"$CT/rel.json"
  refused_before_start "$CT/rel.json:2" run --settings "$CT/rel.json"
  HOME=$CT/nope/../home refused_before_start "HOME" run --base host
  # positive controls: the same inputs spelled without the guess work
  expect_ok run --workspace "$WS/sub" --chdir "$WS/sub" -- true
  expect_output "" run --settings "$CT/data.json" --data-root "$WS/sub" -- cat sub/s.txt
}

# --deny DIR/config/secrets, then `mv config c2`: the next run with the same policy used to
# read c2/secrets/key. Every directory between the writable workspace and a hidden (or
# read-only) path is pinned: renaming it fails with EBUSY.
rename_attempts() {
  # the attack, then what the next run with the same policy can read
  crun run "$@" -- sh -c 'mv config c2 2>&1; mv config/deep config/d2 2>&1; true'
  [ "$RC" = 0 ] || die "cordon run $(_argstr "$@"): expected exit 0, got $(last_run)"
  assert_exists "$WS/config/deep/secrets/key" "the hidden path moved on the host"
  crun run "$@" -- sh -c 'cat c2/deep/secrets/key config/d2/secrets/key config/deep/secrets/key 2>/dev/null; true'
  assert_not_contains "$OUT" "KEY" "ESCAPE: the next run with $(_argstr "$@") reads the key"
}

make_config() {
  mkdir -p "$WS/config/deep/secrets"
  echo "KEY" >"$WS/config/deep/secrets/key"
}

t_rename_parent_of_denied() {
  make_config
  rename_attempts --deny "$WS/config/deep/secrets"
  rename_attempts --deny "$WS/config/deep/secrets/key"
  rename_attempts --deny-glob "$WS/**/key"
  rename_attempts --hide "$WS/config/deep/secrets"
  # positive control: without a hidden path below, the same renames work
  expect_ok run -- sh -c 'mv config c2 && mv c2 config'
  assert_exists "$WS/config/deep/secrets/key"
}

t_rename_parent_of_read_only() {
  make_config
  crun run --allow-ro "$WS/config/deep/secrets" -- sh -c 'mv config c2 2>/dev/null || echo refused; echo x >config/deep/secrets/key 2>/dev/null || echo read-only'
  assert_eq "$OUT" "$(printf 'refused\nread-only')" "a read-only path's parents under the writable workspace"
  assert_file_content "$WS/config/deep/secrets/key" "KEY"
}

# ---- a run never leaves the next one weaker (doc/security.md) ---------------------------
# What one run's command can do to the workspace's modes must not make the next run build
# fewer rules: a directory cordon cannot look at, that a command running as the caller
# could chmod back, refuses the run (125) naming it and the fix. As root nothing is
# unreadable (the caller's capabilities), so the refusal is asserted as uid 65534 only.

root_reads_everything() {
  [ "$MY_UID" != 0 ] || skip_case "as root cordon reads every directory whatever its mode (CAP_DAC_READ_SEARCH), so there is nothing it cannot look at; the control above ran, the refusal is asserted as uid 65534 (escape/rules/unpriv)"
}

# One run's `chmod 000 config` (or 600: listable, not searchable); the next run's
# --deny-glob "$WS/**/*.env" skipped config, and its command did `chmod 755 config; cat
# config/.env`.
t_next_run_unlistable_glob_dir() {
  mkdir -p "$WS/config"
  echo "glob secret" >"$WS/config/.env"
  local attack='chmod 755 config; cat config/.env'
  # the control: readable, the match is hidden, the same command reads nothing
  crun run --deny-glob "$WS/**/*.env" -- sh -c "$attack"
  [ "$RC" = 0 ] || die "the control failed: $(last_run)"
  assert_not_contains "$OUT" "glob secret" "the control: the deny glob hides config/.env"
  root_reads_everything
  local mode
  for mode in 000 600 100; do
    # the first run's command leaves config unlistable
    expect_ok run -- chmod "$mode" config
    crun run --deny-glob "$WS/**/*.env" -- sh -c "$attack"
    chmod 755 "$WS/config"
    [ "$RC" = 125 ] || die "config at mode $mode: expected exit 125, got $(last_run)"
    assert_not_contains "$OUT" "glob secret" "config at mode $mode: the secret was read"
    assert_cordon_stderr
    assert_contains "$ERR" "$WS/config" "the message names the directory"
    assert_contains "$ERR" "chmod u+rx $WS/config" "the message says the fix"
  done
  # and after the fix the same run works again, hiding the file
  crun run --deny-glob "$WS/**/*.env" -- sh -c "$attack"
  [ "$RC" = 0 ] || die "after chmod u+rx: $(last_run)"
  assert_not_contains "$OUT" "glob secret"
}

# One run leaves the workspace root at mode 000; in the next, every top-of-workspace
# protection was silently gone and the command restored the mode and made
# .claude/settings.json.
t_next_run_unsearchable_workspace() {
  local attack='chmod 755 "$PWD"; mkdir -p .claude && echo "{}" >.claude/settings.json'
  # the control: .claude cannot be created
  crun run -- sh -c "$attack"
  [ "$RC" != 0 ] || die "the control: .claude was created: $(last_run)"
  assert_absent "$WS/.claude" "the control: .claude was created"
  root_reads_everything
  expect_ok run -- chmod 000 "$WS"
  crun run -- sh -c "$attack"
  chmod 755 "$WS"
  [ "$RC" = 125 ] || die "workspace at mode 000: expected exit 125, got $(last_run)"
  assert_absent "$WS/.claude" "the next run's command created .claude"
  assert_cordon_stderr
  assert_contains "$ERR" "chmod u+rx $WS" "the message names the workspace and the fix"
}

# The git directory's own files: a .git/config cordon cannot read names nothing, so the
# include file it names in the workspace was left writable (and counts again once the
# caller makes the configuration readable); a .git/modules it cannot list left every
# submodule's hooks unprotected.
t_next_run_unreadable_git() {
  command -v git >/dev/null || skip_case "git is not installed (./bootstrap.sh installs it)"
  git init -q "$WS" || die "git init failed"
  printf '[include]\n\tpath = ../inc.cfg\n' >>"$WS/.git/config"
  echo "[user]" >"$WS/inc.cfg"
  mkdir -p "$WS/.git/modules/sub/hooks" "$WS/.git/modules/sub/objects" "$WS/.git/modules/sub/refs"
  echo "ref: refs/heads/main" >"$WS/.git/modules/sub/HEAD"
  local attack='chmod 644 .git/config; chmod 755 .git/modules; echo "[core] fsmonitor = touch /tmp/pwned" >>inc.cfg; echo "#!/bin/sh" >.git/modules/sub/hooks/post-checkout'
  # the control: both stay as they were
  crun run -- sh -c "$attack"
  assert_file_content "$WS/inc.cfg" "[user]"
  assert_absent "$WS/.git/modules/sub/hooks/post-checkout" "the control: a submodule hook was made"
  root_reads_everything
  local what
  for what in .git/config .git/modules; do
    # left unreadable on the host (.git/config is read-only inside, so not by a run)
    chmod 000 "$WS/$what"
    crun run -- sh -c "$attack"
    chmod u+rwx "$WS/$what"
    [ "$RC" = 125 ] || die "$what at mode 000: expected exit 125, got $(last_run)"
    assert_file_content "$WS/inc.cfg" "[user]"
    assert_absent "$WS/.git/modules/sub/hooks/post-checkout" "$what at mode 000: a submodule hook was made"
    assert_cordon_stderr
    assert_contains "$ERR" "$WS/$what" "the message names $what"
    assert_contains "$ERR" "chmod u+r" "the message says the fix"
  done
  chmod 644 "$WS/.git/config"
}

# A git configuration larger than cordon reads (1 MiB) was skipped whole, so an include
# it names after the first MiB was left writable; git reads it all. Refused instead; the
# control: the same include in a small configuration keeps the file read-only.
t_git_config_too_large() {
  command -v git >/dev/null || skip_case "git is not installed (./bootstrap.sh installs it)"
  git init -q "$WS" || die "git init failed"
  echo "[user]" >"$WS/inc.cfg"
  printf '[include]\n\tpath = ../inc.cfg\n' >>"$WS/.git/config"
  local attack='echo "[core] fsmonitor = touch /tmp/pwned" >>inc.cfg'
  crun run -- sh -c "$attack"
  assert_file_content "$WS/inc.cfg" "[user]"
  cp "$WS/.git/config" "$CT/config.small"
  { echo "[x]"; head -c 1100000 /dev/zero | tr '\0' '#'; echo; printf '[include]\n\tpath = ../inc.cfg\n'; } >>"$WS/.git/config"
  crun run -- sh -c "$attack"
  cp "$CT/config.small" "$WS/.git/config"
  [ "$RC" = 125 ] || die "a 1 MiB git configuration: expected exit 125, got $(last_run)"
  assert_file_content "$WS/inc.cfg" "[user]"
  assert_cordon_stderr
  assert_contains "$ERR" "$WS/.git/config" "the message names the file"
}

run_case git_config_too_large t_git_config_too_large
run_case next_run_unlistable_glob_dir t_next_run_unlistable_glob_dir
run_case next_run_unsearchable_workspace t_next_run_unsearchable_workspace
run_case next_run_unreadable_git t_next_run_unreadable_git
run_case rename_parent_of_denied t_rename_parent_of_denied
run_case rename_parent_of_read_only t_rename_parent_of_read_only
run_case dotdot_deny t_dotdot_deny
run_case dotdot_allow_ro t_dotdot_allow_ro
run_case dotdot_after_file t_dotdot_after_file
run_case dotdot_other_inputs t_dotdot_other_inputs
finish
