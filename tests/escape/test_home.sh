#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The caller's home. Wherever the view shows it (a rule on it or above it, --base host),
# its credential stores (every one the contract lists) are hidden unless a rule names
# them exactly, and --hide / hiddenPaths hide more the same way. A writable workspace
# that is the home, / or a directory above the home is refused (125, naming
# --workspace/--no-workspace) unless --allow names it; even then the credential stores
# stay hidden and the shell's and tools' start-up files read-only. Positive controls:
# the rest of the home reads, a store named exactly reads, the project below the home is
# writable.
. "$(dirname "$0")/lib.sh"

# The README's list of credential stores ("The home and the host"), in its order.
STORES=(.ssh .gnupg .aws .azure .config/gcloud .kube .docker .netrc .git-credentials .config/gh
  .pypirc .npmrc .config/git/credentials .pgpass .vault-token .claude/.credentials.json
  .codex/auth.json .cargo/credentials.toml .config/containers/auth.json .terraform.d
  .local/share/keyrings .password-store .mozilla .config/google-chrome .config/chromium
  .config/hub .gem/credentials .m2/settings.xml .config/op .config/rclone .s3cfg .boto)

# Plant every store in $HOME: a directory holding a file "secret", or a file (names with
# a dot after the first character of their last component, and the rc files).
plant_stores() {
  local s
  for s in "${STORES[@]}"; do
    case ${s##*/} in
      .netrc | .git-credentials | .pypirc | .npmrc | credentials | .pgpass | .vault-token | *.json | *.toml | *.xml | .s3cfg | .boto)
        mkdir -p "$HOME/$(dirname "$s")"
        echo "CREDENTIAL $s" >"$HOME/$s" ;;
      *)
        mkdir -p "$HOME/$s"
        echo "CREDENTIAL $s" >"$HOME/$s/secret" ;;
    esac
  done
  echo "plain notes" >"$HOME/notes.txt"
}

# READ_ALL: print the content of every store (file, or its "secret") that can be read.
READ_ALL='for s do [ -d "$HOME_/$s" ] && f="$HOME_/$s/secret" || f="$HOME_/$s"; cat "$f" 2>/dev/null; done'

t_credentials_where_home_shown() {
  plant_stores
  local view
  for view in "--allow-ro $HOME" "--base host --allow-ro $HOME" "--allow-ro $CT"; do
    # shellcheck disable=SC2086
    crun run $view -- env HOME_="$HOME" sh -c "$READ_ALL; cat \"\$HOME_/notes.txt\"" sh "${STORES[@]}"
    [ "$RC" = 0 ] || die "cordon run $view: expected exit 0, got $(last_run)"
    assert_not_contains "$OUT" "CREDENTIAL" "ESCAPE: a credential store is readable with $view"
    # positive control: the rest of the home is there
    assert_contains "$OUT" "plain notes" "positive control: the home is shown with $view"
  done
  # positive control: the same program reads them where nothing hides them (on the host)
  HOME_=$HOME sh -c "$READ_ALL" sh "${STORES[@]}" >"$CT/host.out"
  [ "$(grep -c CREDENTIAL "$CT/host.out")" = "${#STORES[@]}" ] || die "positive control: the program does not read all ${#STORES[@]} stores on the host: $(head -c 300 "$CT/host.out")"
  # a rule that names a store exactly shows it
  crun run --allow-ro "$HOME" --allow-ro "$HOME/.aws" --allow-ro "$HOME/.config/gh" -- env HOME_="$HOME" sh -c "$READ_ALL" sh "${STORES[@]}"
  assert_contains "$OUT" "CREDENTIAL .aws" "a store named exactly by a rule"
  assert_contains "$OUT" "CREDENTIAL .config/gh" "a store named exactly by a rule"
  [ "$(printf '%s\n' "$OUT" | grep -c CREDENTIAL)" = 2 ] || die "more than the two named stores readable: $OUT"
}

t_hide() {
  echo "TOKEN" >"$WS/token"
  echo "plain" >"$WS/plain"
  expect_output "plain" run --hide "$WS/token" -- sh -c 'cat token plain'
  # named exactly by a rule: shown after all (unlike --deny)
  expect_output "TOKEN" run --hide "$WS/token" --allow-ro "$WS/token" -- cat token
  expect_output "" run --deny "$WS/token" --allow-ro "$WS/token" -- cat token
  # hiddenPaths in a settings file, in settings syntax
  echo "HOMETOKEN" >"$HOME/.tool-token"
  printf '{"sandbox": {"hiddenPaths": ["~/.tool-token", "token"]}}\n' >"$CT/s.json"
  expect_output "" run --settings "$CT/s.json" --allow-ro "$HOME" -- sh -c 'cat token "$1" 2>/dev/null; true' sh "$HOME/.tool-token"
  expect_output "HOMETOKEN" run --allow-ro "$HOME" -- cat "$HOME/.tool-token"
  # a missing path is not held: nothing is made on the host
  local before
  before=$(snapshot "$WS")
  expect_ok run --hide "$WS/not-yet" -- sh -c 'echo made >not-yet'
  assert_file_content "$WS/not-yet" "made"
  rm "$WS/not-yet"
  assert_unchanged "$before" "$WS" "the workspace after a --hide of a missing path"
  # bad input
  expect_exit 125 run --hide relative/path -- true
  assert_cordon_stderr
  assert_contains "$ERR" "--hide" "the message names the option"
}

# A writable workspace that is the home, / or above the home.
t_home_workspace_refused() {
  local dir
  for dir in "$HOME" "$CT" /; do
    (
      cd "$dir"
      rm -f "$CT/ran"
      crun run -- sh -c ': >"$1"' sh "$CT/ran"
      [ "$RC" = 125 ] || die "workspace $dir: expected exit 125, got $(last_run)"
      assert_cordon_stderr
      assert_contains "$ERR" "--workspace" "the message names --workspace"
      assert_contains "$ERR" "--no-workspace" "the message names --no-workspace"
      assert_absent "$CT/ran" "the command ran in a refused workspace"
    )
  done
  expect_exit 125 run --workspace "$HOME" -- true
  assert_contains "$ERR" "--allow $HOME" "the message says how to mean it"
  # a settings file cannot lift it
  printf '{"sandbox": {"allowedPaths": ["<workspace>", "~"]}}\n' >"$CT/s.json"
  expect_exit 125 run --workspace "$HOME" --settings "$CT/s.json" -- true
  # positive controls: read-only, no workspace, a project below the home
  cd "$HOME"
  expect_ok run --read-only -- true
  expect_ok run --no-workspace --chdir / -- true
  mkdir "$HOME/project"
  expect_ok run --workspace "$HOME/project" --chdir "$HOME/project" -- true
}

t_home_workspace_allowed() {
  plant_stores
  mkdir -p "$HOME/project" "$HOME/.ssh" "$HOME/.config" "$HOME/.local"
  echo "# rc" >"$HOME/.bashrc"
  echo "[user]" >"$HOME/.gitconfig"
  echo "ssh-ed25519 AAAA me" >"$HOME/.ssh/authorized_keys"
  local before
  before=$(snapshot "$HOME")
  cd "$HOME"
  crun run --allow "$HOME" -- env HOME_="$HOME" sh -c '
    '"$READ_ALL"'
    for f in .bashrc .gitconfig .ssh/authorized_keys; do (echo evil >>"$HOME_/$f") 2>/dev/null && echo "WROTE $f"; done
    for f in .bash_profile .zshrc .profile; do (echo evil >"$HOME_/$f") 2>/dev/null && echo "MADE $f"; done
    for d in .config/systemd/user .config/autostart .config/nvim .local/bin; do mkdir -p "$HOME_/$d" 2>/dev/null && echo "MADE $d"; done
    echo work >"$HOME_/project/out" && echo project-ok' sh "${STORES[@]}"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_not_contains "$OUT" "CREDENTIAL" "ESCAPE: a credential store readable in an allowed home workspace"
  assert_not_contains "$OUT" "WROTE" "ESCAPE: a start-up file was writable"
  assert_not_contains "$OUT" "MADE" "ESCAPE: a missing start-up file could be created"
  assert_contains "$OUT" "project-ok" "positive control: the home is writable elsewhere"
  assert_file_content "$HOME/project/out" "work"
  rm "$HOME/project/out"
  assert_unchanged "$before" "$HOME" "the home after the run (start-up files, stores)"
}

# --base host with the home outside /tmp: the real home under a private writable layer (a
# kernel overlay). Every store stays hidden, also to a command that renames, copies,
# links or unmounts its way around the hiding mounts; what it writes stays in the layer.
t_credentials_base_host_home_overlay() {
  local h
  h=$(scratch_outside_tmp)
  HOME=$h plant_stores
  local before
  before=$(snapshot "$h" strict)
  HOME=$h crun run --base host --no-workspace --chdir / -- env HOME_="$h" sh -c "$READ_ALL; cat \"\$HOME_/notes.txt\"
    cd \"\$HOME_\"
    mv .config cfg2 2>/dev/null; mv .ssh s2 2>/dev/null; mv .aws/secret aws-secret 2>/dev/null
    cp -a .config c3 2>/dev/null; cp -a .gnupg g3 2>/dev/null
    ln .config/gh/secret gh-link 2>/dev/null; ln -s .ssh/secret ssh-link 2>/dev/null
    umount .ssh 2>/dev/null; umount -l .config/gh 2>/dev/null; rmdir .kube 2>/dev/null
    cat cfg2/gh/secret s2/secret aws-secret c3/gh/secret g3/secret gh-link ssh-link .ssh/secret .kube/secret 2>/dev/null
    true" sh "${STORES[@]}"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_not_contains "$OUT" "CREDENTIAL" "ESCAPE: a credential store is readable through the home's overlay"
  assert_contains "$OUT" "plain notes" "positive control: the real home is shown"
  assert_unchanged "$before" "$h" "the real home (the command's writes go to its private layer)" strict
}

# cordon's own state (the copy-on-write workspaces) is hidden wherever the home is shown,
# in every isolation mode: a sandbox that could read or write it could drive a workspace
# of its caller's (change what `cordon workspace integrate` brings back). A directory
# beside it reads and writes (the control).
t_cordon_state_hidden() {
  local h iso st
  h=$(scratch_outside_tmp)
  st=$h/.local/state/cordon/workspaces/w1
  mkdir -p "$st/upper" "$h/.local/state/other" "$h/project"
  echo "STATE" >"$st/upper/f"
  echo "other" >"$h/.local/state/other/f"
  for iso in namespaces landlock; do
    if [ "$iso" = landlock ] && ! "$CORDON" run --isolation landlock --no-workspace --chdir / -- true >/dev/null 2>&1; then
      echo "# --isolation landlock does not run here (kernel without Landlock ABI 4?): only the namespaced run was checked"
      continue
    fi
    local opts=(--isolation "$iso")
    [ "$iso" = namespaces ] && opts=()
    # shown read-only (--base host) and writable (--allow HOME)
    HOME=$h crun run "${opts[@]}" --base host --no-workspace --chdir / -- sh -c "cat '$st/upper/f' 2>/dev/null; cat '$h/.local/state/other/f'"
    [ "$RC" = 0 ] || die "$iso, --base host: $(last_run)"
    assert_not_contains "$OUT" "STATE" "ESCAPE ($iso, --base host): cordon's workspace state is readable"
    assert_contains "$OUT" "other" "positive control ($iso): the home beside it reads"
    cd "$h/project"
    HOME=$h crun run "${opts[@]}" --allow "$h" -- sh -c "echo EVIL >'$st/upper/f' 2>/dev/null; echo EVIL >'$st/upper/g' 2>/dev/null; cat '$st/upper/f' 2>/dev/null; echo mine >'$h/.local/state/other/f' && echo wrote-other"
    cd "$WS"
    [ "$RC" = 0 ] || die "$iso, --allow HOME: $(last_run)"
    assert_not_contains "$OUT" "STATE" "ESCAPE ($iso, --allow HOME): cordon's workspace state is readable"
    assert_contains "$OUT" "wrote-other" "positive control ($iso): the home beside it is writable"
    assert_file_content "$st/upper/f" "STATE"
    assert_absent "$st/upper/g" "ESCAPE ($iso): a file was planted in a workspace's upper layer"
    echo other >"$h/.local/state/other/f"
  done
}

run_case cordon_state_hidden t_cordon_state_hidden
run_case credentials_where_home_shown t_credentials_where_home_shown
run_case credentials_base_host_home_overlay t_credentials_base_host_home_overlay
run_case hide t_hide
run_case home_workspace_refused t_home_workspace_refused
run_case home_workspace_allowed t_home_workspace_allowed
finish
