#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# HOME, TMPDIR and /tmp inside the sandbox are private, empty, writable, and gone after.
. "$(dirname "$0")/lib.sh"

# New entries directly under host /tmp whose name mentions cordon (leftover private dirs).
tmp_cordon_entries() { find /tmp -mindepth 1 -maxdepth 1 -name '*cordon*' -user "$MY_UID" 2>/dev/null | sort; }

# Inside: print each /tmp entry that is not on the way to the cwd, HOME or TMPDIR.
TMP_ENTRIES='
  for e in $(ls -A /tmp); do
    case "$PWD/ $HOME/ ${TMPDIR:-/nonexistent}/" in
      /tmp/"$e"/* | *" /tmp/$e/"*) ;;
      *) echo "unexpected /tmp entry: $e" ;;
    esac
  done
'

t_home_private_empty_writable() {
  echo "host dotfile" >"$HOME/.host-dotfile"
  local before
  before=$(snapshot "$HOME" strict)
  crun run -- sh -c '
    [ -n "${HOME:-}" ] || { echo "HOME unset"; exit 0; }
    [ -d "$HOME" ] || echo "HOME is not a directory"
    l=$(ls -A "$HOME" 2>&1); [ -z "$l" ] || echo "HOME not empty: $l"
    (echo inside >"$HOME/inside-file") 2>/dev/null || echo "HOME not writable"
    mkdir -p "$HOME/.cache/x" 2>/dev/null || echo "cannot mkdir in HOME"
    echo "HOME=$HOME" >&2
    exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "private HOME"
  assert_unchanged "$before" "$HOME" "the caller's HOME on the host" strict
  local inside
  inside=$(sed -n 's/^HOME=//p' "$ERRF" | tail -n 1)
  if [ -n "$inside" ] && [ -e "$inside/inside-file" ]; then
    die "the private HOME ($inside) is still on the host after the run"
  fi
}

t_tmpdir_private_empty_writable() {
  crun run -- sh -c '
    [ -n "${TMPDIR:-}" ] || { echo "TMPDIR unset"; exit 0; }
    [ -d "$TMPDIR" ] || echo "TMPDIR is not a directory"
    # empty, but for the way down to the working directory or HOME when TMPDIR is /tmp
    # and the workspace lives under /tmp
    for e in $(ls -A "$TMPDIR"); do
      case "$PWD/ $HOME/" in "$TMPDIR/$e/"* | *" $TMPDIR/$e/"*) ;; *) echo "TMPDIR not empty: $e" ;; esac
    done
    (echo inside >"$TMPDIR/inside-file") 2>/dev/null || echo "TMPDIR not writable"
    [ "$TMPDIR" != "$HOME" ] || echo "TMPDIR is HOME"
    echo "TMPDIR=$TMPDIR" >&2
    exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "private TMPDIR"
  local inside
  inside=$(sed -n 's/^TMPDIR=//p' "$ERRF" | tail -n 1)
  if [ -n "$inside" ] && [ -e "$inside/inside-file" ]; then
    die "the private TMPDIR ($inside) is still on the host after the run"
  fi
}

t_host_tmpdir_not_used() {
  # cordon's own TMPDIR value is not passed in, and nothing of the run stays in it
  mkdir "$CT/hosttmp"
  echo "host tmp file" >"$CT/hosttmp/host-file"
  local before
  before=$(snapshot "$CT/hosttmp")
  TMPDIR=$CT/hosttmp crun run -- sh -c '[ -e "$1/host-file" ] && echo "host TMPDIR visible"; exit 0' sh "$CT/hosttmp"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "host TMPDIR inside"
  assert_unchanged "$before" "$CT/hosttmp" "cordon left something in its own TMPDIR"
}

t_nothing_left_in_host_tmp() {
  local before after
  before=$(tmp_cordon_entries)
  expect_ok run -- sh -c 'echo x >"$HOME/f"; [ -z "${TMPDIR:-}" ] || echo y >"$TMPDIR/f"; echo z >/tmp/f'
  after=$(tmp_cordon_entries)
  local new
  new=$(comm -13 <(printf '%s\n' "$before") <(printf '%s\n' "$after") | grep -v '^$' || true)
  [ -z "$new" ] || die "new entries left in host /tmp after the run: $(printf '%s' "$new" | _one_line)"
}

t_home_fresh_each_run() {
  expect_ok run -- sh -c 'echo first >"$HOME/persist"; mkdir -p "$HOME/.config"'
  expect_output "" run -- sh -c 'ls -A "$HOME"'
}

t_tmp_private() {
  local m marker
  m=$(new_mark)
  marker=$(mktemp "/tmp/cordon-e2e-marker.$m.XXXXXX")
  echo "host tmp marker" >"$marker"
  # the workspace lives under /tmp here: only the path down to it (and to the private HOME
  # and TMPDIR, if cordon puts them there) may show in /tmp
  crun run -- sh -c "$TMP_ENTRIES"'
    [ -e "$1" ] && echo "host marker visible: $1"
    (echo inside >"/tmp/inside-$2") 2>/dev/null || echo "/tmp not writable"
    exit 0' sh "$marker" "$m"
  local leaked=""
  [ -e "/tmp/inside-$m" ] && { leaked=yes; rm -f "/tmp/inside-$m"; }
  rm -f "$marker"
  [ -z "$leaked" ] || die "a file written to /tmp inside landed in host /tmp"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "private /tmp"
}

t_tmp_private_no_workspace() {
  expect_output "" run --no-workspace --chdir / -- sh -c "$TMP_ENTRIES"
}

t_tmp_rule_covers() {
  # a rule that covers /tmp replaces the private /tmp
  local marker
  marker=$(mktemp /tmp/cordon-e2e-visible.XXXXXX)
  echo "visible marker" >"$marker"
  crun run --allow-ro /tmp -- cat "$marker"
  rm -f "$marker"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "visible marker" "host /tmp under --allow-ro /tmp"
}

# Issue 9, item 2: with the workspace under /tmp, TMPDIR is still empty and holds no mount,
# so a test's `rm -rf "$TMPDIR"/*` cannot reach the workspace.
t_tmpdir_holds_no_workspace() {
  local w
  w=$(mktemp -d /tmp/cordon-e2e-ws.XXXXXX)
  echo "$w" >>"$T/.rmdirs"
  chmod 0755 "$w"
  mkdir -p "$w/deep/repo"
  echo "precious" >"$w/deep/repo/file"
  crun run --workspace "$w/deep/repo" --chdir "$w/deep/repo" -- sh -c '
    echo "TMPDIR=$TMPDIR"
    ls -A "$TMPDIR" | sed "s/^/entry: /"
    while read -r _ _ _ _ mp _; do
      case "$mp/" in "$TMPDIR"/?*) echo "mount below TMPDIR: $mp" ;; esac
    done </proc/self/mountinfo
    touch "$TMPDIR/mine" && echo "TMPDIR writable"
    rm -rf "$TMPDIR"/* "$TMPDIR"/.[!.]* 2>/dev/null
    cat file'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_not_contains "$OUT" "entry:" "TMPDIR was not empty"
  assert_not_contains "$OUT" "mount below TMPDIR" "TMPDIR holds a mount"
  assert_contains "$OUT" "TMPDIR writable" "the positive control"
  assert_contains "$OUT" "precious" "the workspace after rm -rf \$TMPDIR/*"
  case $OUT in *"TMPDIR=/tmp"$'\n'*) die "TMPDIR is /tmp, which holds the workspace's parents" ;; esac
  assert_eq "$(cat "$w/deep/repo/file")" "precious" "the workspace on the host"
}

# Issue 9, item 3: the directories above a mounted path are read-only, so a write there
# fails at once instead of succeeding into a private tmpfs and vanishing.
t_write_above_workspace_fails() {
  local before
  before=$(snapshot "$CT")
  crun run -- sh -c '
    echo hi >../sibling.txt 2>/dev/null && echo "sibling written"
    tar czf ../repo.tgz . 2>/dev/null && echo "tarball written"
    mkdir ../newdir 2>/dev/null && echo "mkdir above"
    echo hi >"$TMPDIR/ok" && echo "TMPDIR writable"
    echo hi >inside && echo "workspace writable"
    echo x >../sibling.txt'
  assert_not_contains "$OUT" "sibling written" "echo hi > ../sibling.txt"
  assert_not_contains "$OUT" "tarball written" "tar czf ../repo.tgz ."
  assert_not_contains "$OUT" "mkdir above"
  assert_contains "$OUT" "TMPDIR writable" "positive control"
  assert_contains "$OUT" "workspace writable" "positive control"
  assert_contains "$ERR" "Read-only file system" "the write above the workspace fails with EROFS"
  assert_absent "$CT/sibling.txt"
  # a private HOME that holds the workspace: its directories on the way are read-only,
  # HOME itself stays writable
  local h
  h=$(scratch_outside_tmp)
  mkdir -p "$h/src/proj"
  HOME=$h crun run --workspace "$h/src/proj" --chdir "$h/src/proj" -- sh -c '
    echo hi >../sibling.txt 2>/dev/null && echo "sibling written"
    echo hi >"$HOME/in-home" && echo "HOME writable"'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_not_contains "$OUT" "sibling written" "the write in HOME's src/, above the workspace"
  assert_contains "$OUT" "HOME writable" "positive control"
  assert_absent "$h/src/sibling.txt"
  assert_absent "$h/in-home" "the private HOME reached the host"
}

# Issue 9, item 4: --base host shows the real home read-only underneath with the writes in
# a private layer, so toolchains installed there run; credential stores stay hidden and
# nothing reaches the real home.
t_home_base_host_toolchains() {
  local h
  h=$(scratch_outside_tmp)
  mkdir -p "$h/.local/bin" "$h/.ssh" "$h/.cargo/bin"
  printf '#!/bin/sh\necho "fake toolchain ran"\n' >"$h/.local/bin/faketool"
  printf '#!/bin/sh\necho "cargo-ish ran"\n' >"$h/.cargo/bin/cargoish"
  chmod 0755 "$h/.local/bin/faketool" "$h/.cargo/bin/cargoish"
  echo "PRIVATE KEY" >"$h/.ssh/id_ed25519"
  echo "//registry/:_authToken=SECRET" >"$h/.npmrc"
  local before
  before=$(snapshot "$h" strict)
  HOME=$h PATH=$h/.local/bin:$h/.cargo/bin:$PATH crun run --base host -- sh -c '
    echo "HOME=$HOME"
    faketool; cargoish
    cat "$HOME/.ssh/id_ed25519" 2>/dev/null && echo "ssh key READ"
    grep -q SECRET "$HOME/.npmrc" 2>/dev/null && echo "npmrc READ"
    echo scratch >"$HOME/new-file" && cat "$HOME/new-file"
    mkdir -p "$HOME/.cache/tool" && echo cached >"$HOME/.cache/tool/x" && echo "cache writable"
    echo changed >>"$HOME/.local/bin/faketool" && echo "existing file changed privately"
    cd "$HOME" && git init -q scratch-repo && echo "git init in the private layer"'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_contains "$OUT" "HOME=$h" "HOME is the real home's path"
  assert_contains "$OUT" "fake toolchain ran" "~/.local/bin"
  assert_contains "$OUT" "cargo-ish ran" "~/.cargo/bin"
  assert_not_contains "$OUT" "ssh key READ" "~/.ssh hidden"
  assert_not_contains "$OUT" "npmrc READ" "~/.npmrc hidden"
  assert_contains "$OUT" "scratch" "writes in the home work inside"
  assert_contains "$OUT" "cache writable"
  assert_contains "$OUT" "existing file changed privately"
  assert_contains "$OUT" "git init in the private layer"
  assert_unchanged "$before" "$h" "the real home" strict
  # the creation control still guards the host: a workspace in that home is the host's
  mkdir "$h/proj"
  HOME=$h crun run --base host --workspace "$h/proj" --chdir "$h/proj" -- sh -c '
    git init -q sub 2>/dev/null && echo "git init in the workspace"; cd "$HOME" && git init -q r2 && echo "home ok"'
  assert_not_contains "$OUT" "git init in the workspace" "a new repository in the (host) workspace is refused"
  assert_contains "$OUT" "home ok" "positive control"
  assert_absent "$h/proj/sub/.git"
  HOME=$h crun explain --base host
  assert_contains "$OUT" "kernel overlay" "explain says what the home is made of"
}

t_home_base_host_fallback() {
  # inside another cordon, whose supervisor refuses kernel overlays: the real home
  # read-only, HOME a private directory elsewhere
  [ "$MY_UID" -ne 0 ] || skip_case "as root a sandbox cannot nest (the kernel maps uid 0 only for CAP_SETFCAP); uid 65534 runs this"
  local h
  h=$(scratch_outside_tmp)
  mkdir -p "$h/.local/bin"
  printf '#!/bin/sh\necho "fake toolchain ran"\n' >"$h/.local/bin/faketool"
  chmod 0755 "$h/.local/bin/faketool"
  local before
  before=$(snapshot "$h" strict)
  HOME=$h PATH=$h/.local/bin:$PATH crun run --base host --allow-ro "$(dirname "$CORDON")" -- \
    "$CORDON" run --base host -- sh -c '
      echo "HOME=$HOME"; faketool
      echo x >"'"$h"'/new" 2>/dev/null && echo "real home written"
      echo x >"$HOME/new" && echo "HOME writable"'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_contains "$OUT" "fake toolchain ran"
  assert_not_contains "$OUT" "HOME=$h"$'\n' "HOME moved elsewhere"
  assert_not_contains "$OUT" "real home written" "the real home is read-only"
  assert_contains "$OUT" "HOME writable"
  assert_unchanged "$before" "$h" "the real home" strict
  HOME=$h crun run --base host --allow-ro "$(dirname "$CORDON")" -- "$CORDON" explain --base host
  assert_contains "$OUT" "no kernel overlay here" "explain inside says the overlay is not used"
}

# Issue 9, item 5: git commit works in the default sandbox when the host has an identity,
# and nothing else of the host's git configuration (credential helpers, tokens) is shown.
t_git_identity() {
  command -v git >/dev/null || skip_case "git is not installed"
  cat >"$HOME/.gitconfig" <<'CFG'
[user]
	name = Ada Lovelace
	email = "ada@example.org"
[credential]
	helper = store --file /nonexistent/creds
[url "https://TOKEN-SECRET@github.com/"]
	insteadOf = https://github.com/
[include]
	path = ~/.gitconfig.extra
CFG
  printf '[alias]\n\tco = checkout\n[user]\n\temail = ada@work.example\n' >"$HOME/.gitconfig.extra"
  git init -q "$WS/repo"
  crun run -- sh -c '
    cd repo && echo x >f && git add f && git commit -qm first && git log -1 --format="author=%an <%ae>"
    git config --global --list; cat "$HOME/.gitconfig"'
  [ "$RC" = 0 ] || die "git commit in the sandbox: $(last_run)"
  assert_contains "$OUT" "author=Ada Lovelace <ada@work.example>" "the host's identity (the include's email wins, as in git)"
  assert_not_contains "$OUT" "TOKEN-SECRET" "a token in the host's git configuration"
  assert_not_contains "$OUT" "credential" "the host's credential helper"
  assert_not_contains "$OUT" "alias" "the rest of the host's configuration"
  # the repository's own identity still wins over the global one, as on the host
  git -C "$WS/repo" config user.email repo@example.org
  crun run -- sh -c 'cd repo && echo y >>f && git commit -qam second && git log -1 --format="%ae"'
  assert_eq "$OUT" "repo@example.org" "the repository's own user.email"
  # positive control: without an identity on the host, git cannot commit
  rm "$HOME/.gitconfig" "$HOME/.gitconfig.extra"
  git -C "$WS/repo" config --unset user.email
  if [ -z "$(git config --system user.email 2>/dev/null)" ]; then
    crun run -- sh -c 'cd repo && echo z >>f && git commit -qam third 2>&1; echo rc=$?'
    assert_contains "$OUT" "rc=128" "no identity: git refuses to commit"
  fi
}

# A HOME the caller cannot search (uid 65534 with HOME=/root, as `sudo -u` leaves it): the
# credential stores in it are as unreadable to the command as to cordon, so the run goes
# ahead (it used to fail with "cannot look at '/root/.ssh': Permission denied"); as root
# the same run is the control.
t_home_not_searchable() {
  [ -d /root ] || skip_case "no /root on this machine"
  if [ "$MY_UID" -ne 0 ] && [ -x /root ]; then skip_case "/root is searchable by uid $MY_UID here"; fi
  HOME=/root crun run --base host -- sh -c 'echo ran'
  [ "$RC" = 0 ] || die "HOME=/root as uid $MY_UID: expected exit 0, got $(last_run)"
  assert_eq "$OUT" "ran"
  # A home of the caller's own that it cannot search: its owner (the command too) could
  # chmod it searchable, so what cannot be looked at is refused, not skipped.
  [ "$MY_UID" -ne 0 ] || return 0 # (root searches everything: nothing is blocked)
  local h
  h=$(scratch_outside_tmp)/home
  mkdir -p "$h/.ssh"
  echo key >"$h/.ssh/id"
  chmod 0600 "$h"
  HOME=$h crun run --base host -- sh -c 'echo ran'
  chmod 0700 "$h"
  [ "$RC" = 125 ] || die "an own HOME that cannot be searched: expected exit 125, got $(last_run)"
  assert_contains "$ERR" "$h/.ssh"
  assert_not_contains "$OUT" "ran"
}

run_case home_private_empty_writable t_home_private_empty_writable
run_case home_not_searchable t_home_not_searchable
run_case tmpdir_private_empty_writable t_tmpdir_private_empty_writable
run_case host_tmpdir_not_used t_host_tmpdir_not_used
run_case nothing_left_in_host_tmp t_nothing_left_in_host_tmp
run_case home_fresh_each_run t_home_fresh_each_run
run_case tmp_private t_tmp_private
run_case tmp_private_no_workspace t_tmp_private_no_workspace
run_case tmp_rule_covers t_tmp_rule_covers
run_case tmpdir_holds_no_workspace t_tmpdir_holds_no_workspace
run_case write_above_workspace_fails t_write_above_workspace_fails
run_case home_base_host_toolchains t_home_base_host_toolchains
run_case home_base_host_fallback t_home_base_host_fallback
run_case git_identity t_git_identity
finish
