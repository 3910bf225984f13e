#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The view a developer expects (issue 23): the workspace is the top of the git work tree
# the current directory is in (doc/reference.md, --workspace), and a --workspace named
# from elsewhere is the working directory when the current one would not be visible; a
# command the host has in the home is named when the sandbox hides it, and --toolchains
# shows the home's tool directories read-only.
. "$(dirname "$0")/lib.sh"
require_cordon

# a git work tree without running git: what git itself looks for (a .git with HEAD)
fake_repo() {
  mkdir -p "$1/.git/objects" "$1/.git/refs"
  echo 'ref: refs/heads/main' >"$1/.git/HEAD"
}

t_git_top() {
  fake_repo "$WS/repo"
  mkdir -p "$WS/repo/sub/deep"
  cd "$WS/repo/sub/deep"
  expect_ok run -- sh -c 'touch ../../top.txt && pwd'
  assert_eq "$OUT" "$WS/repo/sub/deep" "the working directory stays the current one"
  assert_exists "$WS/repo/top.txt" "the top of the work tree was not writable"
  expect_ok explain
  assert_contains "$OUT" "workspace   $WS/repo (the top of the current directory's git work tree"
  assert_contains "$OUT" "workspace (the top of the current directory's git work tree)"
  expect_ok explain --json
  [ "$("$PY" -c 'import json, sys; print(json.load(sys.stdin)["policy"]["workspace_git_top"])' <"$OUTF")" = True ] ||
    die "explain --json: policy.workspace_git_top is not true: $(head -c 300 "$OUTF")"
  # --workspace . keeps the current directory alone (the control: the same write refused)
  expect_exit 1 run --workspace . -- touch ../../dot.txt
  assert_absent "$WS/repo/dot.txt"
  expect_ok explain --workspace .
  assert_not_contains "$OUT" "git work tree"
}
run_case git_top t_git_top

t_git_file() {
  # a linked worktree's or a submodule's .git is a file
  mkdir -p "$WS/wt/src"
  echo "gitdir: $CT/elsewhere/.git/worktrees/wt" >"$WS/wt/.git"
  cd "$WS/wt/src"
  expect_ok run -- touch ../made
  assert_exists "$WS/wt/made"
}
run_case git_file t_git_file

t_not_git() {
  mkdir -p "$WS/plain/sub"
  # a .git directory without HEAD is no repository for git, nor for cordon
  mkdir -p "$WS/plain/.git"
  cd "$WS/plain/sub"
  expect_exit 1 run -- touch ../up.txt
  assert_absent "$WS/plain/up.txt"
  expect_ok explain
  assert_contains "$OUT" "workspace (current directory)"
  # the control: with HEAD it is one
  echo 'ref: refs/heads/main' >"$WS/plain/.git/HEAD"
  expect_ok run -- touch ../up.txt
  assert_exists "$WS/plain/up.txt"
}
run_case not_git t_not_git

t_home_repo() {
  # a repository of the home's dotfiles does not make the home the workspace
  fake_repo "$HOME"
  mkdir -p "$HOME/proj"
  cd "$HOME/proj"
  expect_ok run -- sh -c 'echo hi > here.txt'
  assert_exists "$HOME/proj/here.txt"
  expect_ok explain
  assert_contains "$OUT" "workspace   $HOME/proj"
  assert_contains "$OUT" "workspace (current directory)"
}
run_case home_repo t_home_repo

t_workspace_elsewhere() {
  mkdir -p "$CT/proj"
  echo data >"$CT/proj/f"
  cd "$OUTSIDE"
  expect_output "$CT/proj data" run --workspace "$CT/proj" -- sh -c 'echo "$(pwd) $(cat f)"'
  expect_ok explain --workspace "$CT/proj"
  assert_contains "$OUT" "cwd         $CT/proj (the workspace: the current directory would not be visible"
  # a --chdir the caller chose is never moved (the control: refused as before)
  expect_exit 125 run --workspace "$CT/proj" --chdir "$OUTSIDE" -- pwd
  assert_contains "$ERR" "would not be visible"
  # a current directory that a rule shows stays the working directory
  expect_output "$OUTSIDE" run --allow-ro "$OUTSIDE" --workspace "$CT/proj" -- pwd
}
run_case workspace_elsewhere t_workspace_elsewhere

t_hidden_cwd() {
  # a current directory the rules hide is refused, not silently replaced
  mkdir -p "$WS/secret"
  cd "$WS/secret"
  expect_exit 125 run --workspace "$WS" --deny "$WS/secret" -- pwd
  assert_contains "$ERR" "is hidden"
}
run_case hidden_cwd t_hidden_cwd

# ---- toolchains in the home (doc/guide-run.md, "Toolchains in the home")

# a fake cargo in ~/.cargo/bin, first on PATH, as rustup puts it
fake_tool() {
  mkdir -p "$HOME/.cargo/bin"
  printf '#!/bin/sh\necho "host tool $*"\n' >"$HOME/.cargo/bin/mytool"
  chmod +x "$HOME/.cargo/bin/mytool"
  echo 'token = "secret"' >"$HOME/.cargo/credentials.toml"
}

t_tool_hint() {
  fake_tool
  PATH=$HOME/.cargo/bin:$PATH expect_exit 127 run -- mytool x
  assert_contains "$ERR" "mytool: command not found in the sandbox"
  assert_contains "$ERR" "on the host it is $HOME/.cargo/bin/mytool, which the sandbox does not show"
  assert_contains "$ERR" "show it: --allow-ro ~/.cargo, --toolchains or --base host"
  # by its path too
  expect_exit 127 run -- "$HOME/.cargo/bin/mytool"
  assert_contains "$ERR" "on the host it is $HOME/.cargo/bin/mytool"
  # a rule that hides it is named
  PATH=$HOME/.cargo/bin:$PATH expect_exit 127 run --allow-ro "$HOME/.cargo" --deny "$HOME/.cargo/bin" -- mytool
  assert_contains "$ERR" "hidden by --deny"
  # each fix it names works (the positive controls)
  PATH=$HOME/.cargo/bin:$PATH expect_output "host tool x" run --toolchains -- mytool x
  PATH=$HOME/.cargo/bin:$PATH expect_output "host tool y" run --allow-ro "$HOME/.cargo" -- mytool y
  # a command the host does not have either gets no hint
  expect_exit 127 run -- no-such-tool-anywhere
  assert_not_contains "$ERR" "on the host"
}
run_case tool_hint t_tool_hint

t_tool_shadowed() {
  [ -x /usr/bin/python3 ] || skip_case "/usr/bin/python3 missing: nothing for a hidden python3 to fall back on"
  mkdir -p "$HOME/.pyenv/shims"
  printf '#!/bin/sh\necho pyenv python\n' >"$HOME/.pyenv/shims/python3"
  chmod +x "$HOME/.pyenv/shims/python3"
  PATH=$HOME/.pyenv/shims:$PATH expect_output "usr python" run -- python3 -c 'print("usr python")'
  assert_contains "$ERR" "warning: python3 is $HOME/.pyenv/shims/python3 on the host, which the sandbox does not show"
  assert_contains "$ERR" "it runs /usr/bin/python3 instead"
  assert_contains "$ERR" "--allow-ro ~/.pyenv, --toolchains or --base host"
  PATH=$HOME/.pyenv/shims:$PATH expect_output "pyenv python" run --toolchains -- python3 -c 'print(1)'
  assert_not_contains "$ERR" "warning"
}
run_case tool_shadowed t_tool_shadowed

t_toolchains() {
  fake_tool
  mkdir -p "$HOME/go/bin" "$HOME/.local/bin" "$HOME/.config/other"
  expect_ok explain --toolchains
  assert_contains "$OUT" "$HOME/.cargo"
  assert_contains "$OUT" "--toolchains"
  assert_contains "$OUT" "$HOME/go"
  assert_contains "$OUT" "$HOME/.local/bin"
  assert_not_contains "$OUT" "$HOME/.rustup" # missing: no rule
  # read-only, the credential store in it hidden, the rest of the home not shown
  crun run --toolchains -- sh -c "cat '$HOME/.cargo/bin/mytool' >/dev/null && echo read;
    touch '$HOME/.cargo/new' 2>/dev/null || echo ro; cat '$HOME/.cargo/credentials.toml';
    ls '$HOME/.config/other' 2>/dev/null || echo nohome"
  assert_eq "$OUT" "$(printf 'read\nro\nnohome')" "--toolchains view"
  assert_absent "$HOME/.cargo/new"
  # the settings key
  echo '{"sandbox": {"toolchains": true}}' >"$CT/s.json"
  expect_output "host tool k" run --settings "$CT/s.json" -- "$HOME/.cargo/bin/mytool" k
  # without it (the control), not there
  expect_exit 127 run -- "$HOME/.cargo/bin/mytool" k
}
run_case toolchains t_toolchains

finish
