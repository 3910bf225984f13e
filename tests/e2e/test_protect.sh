#!/usr/bin/env bash
# Built-in protections at the top of every writable path: .git/hooks and .git/config are
# read-only (git still commits), .cordon/.codex/.agents are read-only and cannot be
# created, a rule granting write on the exact path lifts it; nothing is left behind.
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
    for d in .cordon .codex .agents; do
      mkdir "$d" 2>/dev/null && echo "created $d"
      (echo x >"$d/f") 2>/dev/null && echo "wrote $d/f"
    done
    exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" ".cordon/.codex/.agents where missing"
  assert_unchanged "$before" "$WS" "the workspace after the run (stubs left behind?)"
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
  assert_unchanged "$before" "$WS" "the workspace after a run (stubs for .git/hooks or protected names left behind?)"
}

t_kill9_leaves_no_stub() {
  # even when cordon is killed mid-run, no mount-point stub (.cordon, .codex, .agents,
  # .git/hooks, a denied path's placeholder) stays behind in the writable paths
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
  # the sandbox's own clean-up may finish a moment after its last process
  wait_unchanged "$before" "$WS" 2 "the workspace after kill -9 of cordon (stubs left behind?)"
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

# descendants PID: every descendant of PID (host pids), depth first.
descendants() {
  local c
  for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
    echo "$c"
    descendants "$c"
  done
}

t_killall_stale_stubs_cleaned() {
  # every process of the run killed at once (as a cgroup kill or an OOM of the whole job
  # does): nobody is left to remove the stubs then, but they must not stay for good;
  # the next run in the same workspace must not find (or leave) them either
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
  expect_ok run -- true
  wait_unchanged "$before" "$WS" 2 "the workspace after all of a run's processes were killed at once and another run"
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
run_case kill9_leaves_no_stub t_kill9_leaves_no_stub
run_case killall_stale_stubs_cleaned t_killall_stale_stubs_cleaned
run_case unwritable_workspace_runs t_unwritable_workspace_runs
run_case protected_links_not_followed t_protected_links_not_followed
run_case concurrent_runs_keep_protection t_concurrent_runs_keep_protection
finish
