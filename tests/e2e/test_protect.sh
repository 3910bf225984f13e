#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Built-in protections at the top of every writable path: .git/hooks and .git/config are
# read-only (git still commits), .cordon/.codex/.agents are read-only and cannot be
# created, a rule granting write on the exact path lifts it; nothing is left behind.
# Protection cannot be renamed away: the directories between a writable path and what is
# protected are mount points inside (rename fails with EBUSY); a worktree's .git file is
# read-only; a protected name that is a symlink cannot be swapped for a directory.
. "$(dirname "$0")/lib.sh"

git_init() {
  git init -q "$1"
  git -C "$1" config user.email e2e@example.invalid
  git -C "$1" config user.name e2e
}

t_git_hooks_config_read_only() {
  command -v git >/dev/null || skip_case "git not installed"
  git_init "$WS"
  local cfg_before
  cfg_before=$(md5sum <"$WS/.git/config")
  crun run -- sh -c '
    (printf "#!/bin/sh\necho pwned\n" >.git/hooks/pre-commit) 2>/dev/null && echo "planted a hook"
    (echo "[core] hooksPath = /tmp" >>.git/config) 2>/dev/null && echo "changed .git/config"
    (echo x >.git/hooks/post-checkout.sample) 2>/dev/null && echo "wrote into hooks/"
    (echo x >.git/e2e-file) 2>/dev/null || echo "cannot write inside .git"
    exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" ".git protections"
  assert_absent "$WS/.git/hooks/pre-commit" "a hook was planted on the host"
  assert_eq "$(md5sum <"$WS/.git/config")" "$cfg_before" ".git/config on the host"
}

t_git_commit_works() {
  command -v git >/dev/null || skip_case "git not installed"
  git_init "$WS"
  echo "content" >"$WS/file.txt"
  expect_ok run -- sh -c 'git add file.txt && git commit -q -m "from the sandbox"'
  assert_eq "$(git -C "$WS" log --format=%s -1)" "from the sandbox" "the commit made inside"
}

t_protected_names_not_creatable() {
  local before
  before=$(snapshot "$WS")
  crun run -- sh -c '
    for d in .cordon .codex .agents .claude .mcp.json .vscode .idea .gitmodules; do
      mkdir "$d" 2>/dev/null && echo "created $d"
      (echo x >"$d") 2>/dev/null && echo "wrote $d"
      ln -s /tmp "$d" 2>/dev/null && echo "linked $d"
      (echo x >"$d/f") 2>/dev/null && echo "wrote $d/f"
    done
    mkdir elsewhere && mv elsewhere .vscode 2>/dev/null && echo "renamed onto .vscode"
    rmdir elsewhere 2>/dev/null
    exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "the protected names where missing"
  assert_unchanged "$before" "$WS" "the workspace after the run"
  # positive control: other names are created
  expect_ok run -- sh -c 'mkdir .config-of-mine && echo x >.envrc'
  assert_exists "$WS/.config-of-mine"
  assert_exists "$WS/.envrc"
}

t_no_trace_in_ordinary_work() {
  # nothing of cordon's in a fresh workspace while the command runs: what ls -A, git
  # clean -fdx, tar and cp -a see is the command's own (no mount-point stubs)
  command -v git >/dev/null || skip_case "git not installed"
  git_init "$WS"
  echo data >"$WS/tracked"
  git -C "$WS" add tracked >/dev/null
  echo junk >"$WS/untracked"
  expect_ok run -- sh -c 'ls -A; echo ---; git clean -fdxq && echo cleaned; echo ---; tar cf - --exclude=.git . | tar tf -;
echo ---; cp -a . "$TMPDIR/copy" && ls -A "$TMPDIR/copy"'
  local n
  for n in .cordon .codex .agents .claude .mcp.json .vscode .idea .gitmodules; do
    assert_not_contains "$OUT" "$n" "what the command sees of the workspace"
  done
  assert_contains "$OUT" "cleaned" "git clean -fdx"
  assert_absent "$WS/untracked" "git clean -fdx removed the untracked file"
  assert_contains "$OUT" "./tracked"
}

t_many_concurrent_runs() {
  # 60 runs at once in one fresh workspace: every one works, every one keeps the
  # protections, none leaves anything (the stubs raced here)
  local before i pids=() rc fails=0
  before=$(snapshot "$WS")
  for i in $(seq 1 60); do
    "$CORDON" run -- sh -c 'mkdir .codex 2>/dev/null && echo CREATED; mkdir -p .git/hooks 2>/dev/null && echo HOOKS; exit 0' \
      </dev/null >"$CT/out.$i" 2>"$CT/err.$i" &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    rc=0
    wait "${pids[$i]}" || rc=$?
    [ "$rc" = 0 ] || fails=$((fails + 1))
  done
  [ "$fails" = 0 ] || die "$fails of 60 concurrent runs failed (e.g. $(cat "$CT"/err.* | head -c 300))"
  cat "$CT"/out.* >"$CT/all"
  assert_not_contains "$(cat "$CT/all")" "CREATED" "a concurrent run created .codex"
  assert_not_contains "$(cat "$CT/all")" "HOOKS" "a concurrent run planted .git/hooks"
  assert_unchanged "$before" "$WS" "the workspace after 60 concurrent runs"
}

t_protected_names_existing_read_only() {
  mkdir "$WS/.codex" "$WS/.agents"
  echo "cfg" >"$WS/.codex/config.toml"
  crun run -- sh -c '(echo x >>.codex/config.toml) 2>/dev/null && echo "changed .codex"; (echo x >.agents/new) 2>/dev/null && echo "wrote .agents"; exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "existing .codex/.agents"
  assert_file_content "$WS/.codex/config.toml" "cfg"
}

t_protection_in_allowed_dir() {
  command -v git >/dev/null || skip_case "git not installed"
  git_init "$CT/other"
  crun run --allow "$CT/other" -- sh -c '(echo x >"$1/.git/hooks/pre-commit") 2>/dev/null && echo "planted a hook"; (echo x >"$1/ok") 2>/dev/null || echo "cannot write"; exit 0' sh "$CT/other"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" ".git/hooks under an --allow'ed directory"
  assert_absent "$CT/other/.git/hooks/pre-commit"
}

t_exact_rule_lifts_protection() {
  command -v git >/dev/null || skip_case "git not installed"
  git_init "$WS"
  expect_ok run --allow "$WS/.git/hooks" -- sh -c 'echo "# ok" >.git/hooks/pre-commit'
  assert_file_content "$WS/.git/hooks/pre-commit" "# ok"
}

t_nothing_left_behind() {
  command -v git >/dev/null || skip_case "git not installed"
  git_init "$WS"
  rm -rf "$WS/.git/hooks"
  local before
  before=$(snapshot "$WS")
  expect_ok run -- true
  assert_unchanged "$before" "$WS" "the workspace after a run"
}

t_kill9_leaves_nothing() {
  # even when cordon is killed mid-run, nothing of its (a mount point, a placeholder for
  # .cordon .codex .git/hooks or a denied path) is in the writable paths
  command -v git >/dev/null || skip_case "git not installed"
  git_init "$WS"
  rm -rf "$WS/.git/hooks"
  mkdir "$WS/secret"
  echo s >"$WS/secret/f"
  local before m pid
  before=$(snapshot "$WS")
  m=$(new_mark)
  "$CORDON" run --deny "$WS/secret" --deny "$WS/missing-denied" -- sleep "1000.$m" </dev/null >/dev/null 2>"$CT/bg.err" &
  pid=$!
  track_pid "$pid" "$m"
  wait_for_sleepers "$m" 10 >/dev/null || { kill -9 "$pid"; die "the sandboxed sleep never appeared: $(head -c 300 "$CT/bg.err")"; }
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  wait_no_sleepers "$m" 2 || { reap_sleepers "$m"; die "the sandbox survived kill -9 of cordon"; }
  assert_unchanged "$before" "$WS" "the workspace after kill -9 of cordon"
}

t_concurrent_runs_keep_protection() {
  # a second run in the same workspace, starting and ending while the first still runs,
  # must not take away the first run's protections (nor leave anything behind)
  local before pid m
  before=$(snapshot "$WS")
  m=$(new_mark)
  "$CORDON" run -- sh -c 'sleep "1.$1"
    mkdir .cordon 2>/dev/null && echo "created .cordon"
    (echo x >.cordon/f) 2>/dev/null && echo "wrote .cordon/f"
    (echo x >.codex) 2>/dev/null && echo "wrote .codex"
    exit 0' sh "$m" </dev/null >"$CT/first.out" 2>"$CT/first.err" &
  pid=$!
  track_pid "$pid" "$m"
  wait_for_sleepers "$m" 10 >/dev/null || { kill -9 "$pid"; die "the first run never started: $(head -c 300 "$CT/first.err")"; }
  expect_ok run -- true
  expect_ok run --deny "$WS/other-missing" -- true
  local rc=0
  wait "$pid" || rc=$?
  check_sanitizer "$CT/first.err" "the first cordon run"
  [ "$rc" = 0 ] || die "the first run exited $rc: $(head -c 300 "$CT/first.err" | _one_line)"
  [ ! -s "$CT/first.out" ] || die "after a concurrent run ended, the first run could: $(_one_line <"$CT/first.out")"
  assert_unchanged "$before" "$WS" "the workspace after two concurrent runs"
}

t_gitdir_file_target_protected() {
  # a .git file naming the real git directory (as worktrees and submodules have): the
  # hooks and config there are protected too
  command -v git >/dev/null || skip_case "git not installed"
  git_init "$WS/real"
  mv "$WS/real/.git" "$WS/realgit"
  rmdir "$WS/real" 2>/dev/null || true
  echo "gitdir: realgit" >"$WS/.git"
  crun run -- sh -c '(echo x >realgit/hooks/pre-commit) 2>/dev/null && echo "planted a hook in realgit"; (echo x >>realgit/config) 2>/dev/null && echo "changed realgit/config"; exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "the git directory named by a .git file"
  assert_absent "$WS/realgit/hooks/pre-commit"
}

t_git_modules_protected() {
  command -v git >/dev/null || skip_case "git not installed"
  git_init "$WS"
  mkdir -p "$WS/.git/modules/sub/hooks"
  echo "[core]" >"$WS/.git/modules/sub/config"
  crun run -- sh -c '(echo x >.git/modules/sub/hooks/pre-commit) 2>/dev/null && echo "planted a submodule hook"; (echo x >>.git/modules/sub/config) 2>/dev/null && echo "changed the submodule config"; exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" ".git/modules/*"
  assert_absent "$WS/.git/modules/sub/hooks/pre-commit"
}

t_unwritable_workspace_runs() {
  # a workspace the caller cannot write (someone else's checkout, /usr/share): the command
  # cannot create .cordon/.codex/.agents there anyway, so the run must go ahead
  chmod 0555 "$WS"
  crun run -- sh -c 'echo ran; mkdir .cordon 2>/dev/null && echo "created .cordon"; exit 0'
  chmod 0755 "$WS"
  [ "$RC" = 0 ] || die "a run in a workspace the caller cannot write failed: $(last_run)"
  assert_eq "$OUT" "ran" "a run in an unwritable workspace"
  assert_absent "$WS/.cordon"
}

t_protected_links_not_followed() {
  # .git/hooks and .git/config that are links to host paths outside the view must not
  # bring those paths into the view when cordon protects them
  command -v git >/dev/null || skip_case "git not installed"
  git_init "$WS"
  mkdir "$OUTSIDE/hooks-target"
  echo "host secret outside the workspace" >"$OUTSIDE/hooks-target/secret-hook"
  rm -rf "$WS/.git/hooks"
  ln -s "$OUTSIDE/hooks-target" "$WS/.git/hooks"
  cp "$WS/.git/config" "$OUTSIDE/config-target"
  echo "# host secret outside the workspace" >>"$OUTSIDE/config-target"
  rm "$WS/.git/config"
  ln -s "$OUTSIDE/config-target" "$WS/.git/config"
  local before
  before=$(snapshot "$OUTSIDE" strict)
  crun run -- sh -c 'cat .git/hooks/secret-hook .git/config 2>/dev/null; exit 0'
  assert_unchanged "$before" "$OUTSIDE" "the link targets on the host" strict
  case $RC in 0 | 125) ;; *) die "expected exit 0 or 125 (refused), got $(last_run)" ;; esac
  assert_not_contains "$OUT" "host secret" "a protected .git link brought a host file into the view"
}

# RENAME_AWAY, run inside the sandbox: try to move .git (or what is in it) out of the
# way and build a fresh one with a hook; prints what worked on stdout, and the reason the
# first rename failed on stderr ("mv: REASON").
RENAME_AWAY='
  if err=$(mv .git .git-old 2>&1); then echo "renamed .git"; else echo "mv: ${err##*: }" >&2; fi
  mkdir -p .git/hooks 2>/dev/null
  (printf "#!/bin/sh\necho pwned\n" >.git/hooks/pre-commit) 2>/dev/null && echo "planted a hook"
  (chmod +x .git/hooks/pre-commit) 2>/dev/null
  mv .git/hooks .git/hooks-old 2>/dev/null && echo "renamed .git/hooks"
  mv .git/config .git/config-old 2>/dev/null && echo "renamed .git/config"
  exit 0'

t_git_dir_cannot_be_renamed_away() {
  # `mv .git .git-old; mkdir -p .git/hooks` would leave the read-only hooks behind in
  # .git-old and give the host a .git with the command's hook
  command -v git >/dev/null || skip_case "git not installed"
  git_init "$WS"
  echo "content" >"$WS/file.txt"
  git -C "$WS" add file.txt
  git -C "$WS" commit -q -m base
  local before
  before=$(snapshot "$WS/.git" strict)
  crun run -- sh -c "$RENAME_AWAY"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "renaming .git away inside the sandbox"
  assert_contains "$ERR" "mv: Device or resource busy" "the rename of .git (a pinned mount point)"
  assert_absent "$WS/.git-old" ".git was renamed on the host"
  assert_absent "$WS/.git/hooks/pre-commit" "a hook was planted on the host"
  assert_unchanged "$before" "$WS/.git" "the host .git after the run" strict
  # git still works inside the pinned .git, and the hook is still not there
  expect_ok run -- sh -c 'echo more >>file.txt && git commit -q -a -m "from the sandbox"'
  assert_eq "$(git -C "$WS" log --format=%s -1)" "from the sandbox" "a commit inside a pinned .git"
  assert_absent "$WS/.git/hooks/pre-commit"
}

t_git_dir_missing_hooks_cannot_be_renamed_away() {
  # hooks missing (refused by the creation control): .git is pinned all the same
  command -v git >/dev/null || skip_case "git not installed"
  git_init "$WS"
  rm -rf "$WS/.git/hooks"
  local before
  before=$(snapshot "$WS")
  crun run -- sh -c "$RENAME_AWAY"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "renaming .git away (hooks missing)"
  assert_absent "$WS/.git-old"
  assert_absent "$WS/.git/hooks" "a planted hooks directory stayed on the host"
  assert_unchanged "$before" "$WS" "the workspace after the run"
}

t_git_dir_allowed_cannot_be_renamed_away() {
  # --allow on .git itself (redundant below the workspace): still not renamable (.git
  # is a writable path of its own then: stubs for .codex etc. come and go in it, so its
  # modification time changes)
  command -v git >/dev/null || skip_case "git not installed"
  git_init "$WS"
  local before
  before=$(snapshot "$WS/.git")
  crun run --allow "$WS/.git" -- sh -c "$RENAME_AWAY"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "renaming .git away with --allow $WS/.git"
  assert_absent "$WS/.git-old" ".git was renamed on the host"
  assert_absent "$WS/.git/hooks/pre-commit" "a hook was planted on the host"
  assert_unchanged "$before" "$WS/.git" "the host .git after the run"
}

t_denied_path_cannot_be_renamed_into_being() {
  # a --deny of a missing path deeper in the workspace: its stub holds a/b/c; a and a/b
  # are pinned, or `mv a a-old; mkdir -p a/b/c/secret` would make the denied path
  mkdir -p "$WS/a/b"
  echo keep >"$WS/a/b/keep"
  local before
  before=$(snapshot "$WS")
  crun run --deny "$WS/a/b/c/secret" -- sh -c '
    mv a a-old 2>/dev/null && echo "renamed a"
    mv a/b a/b-old 2>/dev/null && echo "renamed a/b"
    mkdir -p a/b/c/secret 2>/dev/null && echo "made the denied path"
    (echo x >a/b/c/secret) 2>/dev/null && echo "wrote the denied path"
    (echo y >a/b/other) 2>/dev/null || echo "cannot write next to the stub"
    exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "renaming the directories above a denied path away"
  assert_absent "$WS/a-old"
  assert_absent "$WS/a/b/c" "the stub or the denied path stayed on the host"
  assert_file_content "$WS/a/b/other" "y" "a file next to the stub"
  rm "$WS/a/b/other"
  assert_unchanged "$before" "$WS" "the workspace after the run"
}

t_git_file_read_only() {
  # a worktree's .git file names its git directory: repointing it (or moving it away
  # and writing another) would make the host's git use a directory the command made
  command -v git >/dev/null || skip_case "git not installed"
  git_init "$WS/real"
  mv "$WS/real/.git" "$WS/realgit"
  rmdir "$WS/real" 2>/dev/null || true
  echo "gitdir: realgit" >"$WS/.git"
  crun run -- sh -c '
    mkdir -p evil/hooks
    (echo "gitdir: evil" >.git) 2>/dev/null && echo "rewrote .git"
    mv .git .git-old 2>/dev/null && echo "renamed .git"
    rm -f .git 2>/dev/null; [ -e .git ] || echo "removed .git"
    exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "the .git file of a worktree"
  assert_file_content "$WS/.git" "gitdir: realgit" "the .git file on the host"
  assert_absent "$WS/.git-old"
}

t_protected_link_cannot_be_swapped() {
  # .git/hooks a symlink in the writable workspace: the command could remove the link
  # and make a real hooks directory; cordon must refuse to run (fail closed) or keep it
  command -v git >/dev/null || skip_case "git not installed"
  git_init "$WS"
  mkdir "$OUTSIDE/hooks-target"
  rm -rf "$WS/.git/hooks"
  ln -s "$OUTSIDE/hooks-target" "$WS/.git/hooks"
  crun run -- sh -c 'rm .git/hooks 2>/dev/null && mkdir .git/hooks 2>/dev/null && (echo "echo pwned" >.git/hooks/pre-commit) 2>/dev/null && echo "swapped the link"; exit 0'
  case $RC in 0 | 125) ;; *) die "expected exit 0 or 125 (refused), got $(last_run)" ;; esac
  assert_eq "$OUT" "" "a symlinked .git/hooks"
  [ -L "$WS/.git/hooks" ] || die "the .git/hooks link was replaced on the host: $(stat -c %F "$WS/.git/hooks" 2>&1)"
  assert_absent "$OUTSIDE/hooks-target/pre-commit"
}

# descendants PID: every descendant of PID (host pids), depth first.
descendants() {
  local c
  for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
    echo "$c"
    descendants "$c"
  done
}

t_killall_leaves_nothing() {
  # every process of the run killed at once (as a cgroup kill or an OOM of the whole job
  # does): nothing was placed in the workspace, so nothing stays
  local before m pid pids
  before=$(snapshot "$WS")
  m=$(new_mark)
  "$CORDON" run --deny "$WS/missing-denied" -- sleep "1000.$m" </dev/null >/dev/null 2>"$CT/bg.err" &
  pid=$!
  track_pid "$pid" "$m"
  wait_for_sleepers "$m" 10 >/dev/null || { kill -9 "$pid"; die "the sandboxed sleep never appeared: $(head -c 300 "$CT/bg.err")"; }
  pids="$pid $(descendants "$pid" | tr '\n' ' ')"
  kill -STOP $pids 2>/dev/null || true
  kill -KILL $pids 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  wait_no_sleepers "$m" 2 || { reap_sleepers "$m"; die "sandbox processes survived"; }
  assert_unchanged "$before" "$WS" "the workspace after all of a run's processes were killed at once"
}

run_case git_hooks_config_read_only t_git_hooks_config_read_only
run_case git_commit_works t_git_commit_works
run_case gitdir_file_target_protected t_gitdir_file_target_protected
run_case git_modules_protected t_git_modules_protected
run_case protected_names_not_creatable t_protected_names_not_creatable
run_case protected_names_existing_read_only t_protected_names_existing_read_only
run_case protection_in_allowed_dir t_protection_in_allowed_dir
run_case exact_rule_lifts_protection t_exact_rule_lifts_protection
run_case nothing_left_behind t_nothing_left_behind
run_case kill9_leaves_nothing t_kill9_leaves_nothing
run_case killall_leaves_nothing t_killall_leaves_nothing
run_case no_trace_in_ordinary_work t_no_trace_in_ordinary_work
run_case many_concurrent_runs t_many_concurrent_runs
run_case unwritable_workspace_runs t_unwritable_workspace_runs
run_case protected_links_not_followed t_protected_links_not_followed
run_case concurrent_runs_keep_protection t_concurrent_runs_keep_protection
run_case git_dir_cannot_be_renamed_away t_git_dir_cannot_be_renamed_away
run_case git_dir_missing_hooks_cannot_be_renamed_away t_git_dir_missing_hooks_cannot_be_renamed_away
run_case git_dir_allowed_cannot_be_renamed_away t_git_dir_allowed_cannot_be_renamed_away
run_case denied_path_cannot_be_renamed_into_being t_denied_path_cannot_be_renamed_into_being
run_case git_file_read_only t_git_file_read_only
run_case protected_link_cannot_be_swapped t_protected_link_cannot_be_swapped
finish
