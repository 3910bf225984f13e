#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Host code execution through git: after the command ran, a `git status` or `git commit`
# on the host must run nothing the command planted (README, "Workspace protection"). Each
# attack writes a payload that leaves $CT/marker when run, points git at it the way an
# attacker would, and a host git runs afterwards; the marker must not appear. Positive
# control for each: the same attack done without cordon, in a copy, does make this git run
# the payload (so the attack is real on this machine's git).
# As root, the file runs in a mount namespace of its own: its loop, tmpfs and overlay
# mounts never show in the host's mount table, which other tests running beside it watch
# (stress/faults' sequential_runs counts its lines).
if [ "$(id -u)" = 0 ] && [ -z "${CORDON_TEST_OWN_MNTNS:-}" ] && command -v unshare >/dev/null; then
  CORDON_TEST_OWN_MNTNS=1 exec unshare -m --propagation private -- "$BASH" "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"

command -v git >/dev/null || { skip "all" "git not found (./bootstrap.sh installs it)"; finish; }

gitq() { git -c user.name=cordon-test -c user.email=test@example.invalid -c init.defaultBranch=main "$@"; }

# new_repo DIR: a repository with one commit.
new_repo() {
  gitq init -q "$1"
  echo tracked >"$1/file.txt"
  gitq -C "$1" add file.txt
  gitq -C "$1" commit -q -m init
}

# payload FILE: a program that leaves $CT/marker when run.
payload() {
  printf '#!/bin/sh\necho ran >"%s"\n' "$CT/marker" >"$1"
  chmod 0755 "$1"
}

# host_git DIR: what a person does next on the host (errors do not matter).
host_git() {
  (cd "$1" && env -u GIT_DIR git status >/dev/null 2>&1; git -c user.name=p -c user.email=p@e \
    commit -q --allow-empty -m host >/dev/null 2>&1) || true
}

# control DIR SCRIPT: run SCRIPT (the attack, as sh -c) in a copy of DIR without cordon,
# then a host git there; the payload must run, or the test proves nothing.
control() {
  local copy=$CT/control
  rm -rf "$copy" "$CT/marker"
  cp -a "$1" "$copy"
  (cd "$copy" && sh -c "$2" sh "$copy") >/dev/null 2>&1 || true
  host_git "$copy"
  [ -e "$CT/marker" ] || die "positive control: the attack did not work even without cordon (git $(git --version | cut -d' ' -f3)): the test proves nothing"
  rm -f "$CT/marker"
}

# attack DIR SCRIPT [CORDON OPTION...]: the same inside cordon (workspace DIR), then a host
# git in DIR: the payload must not run.
attack() {
  local dir=$1 script=$2
  shift 2
  rm -f "$CT/marker"
  crun run --workspace "$dir" "$@" -- sh -c "$script" sh "$dir"
  host_git "$dir"
  [ ! -e "$CT/marker" ] || die "ESCAPE: a host git ran the command's payload ($(last_run))"
}

FSMON='payload() { printf "#!/bin/sh\necho ran >\"%s\"\n" "$MARK" >"$1"; chmod 755 "$1"; }'

t_commondir() {
  # 1. .git/commondir names an evil common directory whose config sets core.fsmonitor
  new_repo "$WS"
  local s='d=$1; mkdir -p "$d/evil/objects" "$d/evil/refs/heads"; '"$FSMON"'; payload "$d/evil/fsmon";
printf "[core]\n\tfsmonitor = %s\n" "$d/evil/fsmon" >"$d/evil/config"; echo "$d/evil" >"$d/.git/commondir"'
  MARK=$CT/marker control "$WS" "MARK=$CT/marker; $s"
  attack "$WS" "MARK=$CT/marker; $s"
  assert_absent "$WS/.git/commondir" "the commondir the command wrote"
}

t_nested_repo_gitlink() {
  # 2. a nested repository with core.fsmonitor, added to the parent as a gitlink
  new_repo "$WS"
  local s='d=$1; cd "$d"; '"$FSMON"'; payload "$d/fsmon"; git init -q sub && cd sub &&
git -c user.name=a -c user.email=a@b commit -q --allow-empty -m x && git config core.fsmonitor "$d/fsmon" &&
cd .. && git add sub'
  MARK=$CT/marker control "$WS" "MARK=$CT/marker; $s"
  attack "$WS" "MARK=$CT/marker; $s"
  assert_absent "$WS/sub/.git" "the nested repository the command made"
}

t_existing_nested_repo() {
  # 2b. a nested repository that was there already (a vendored clone): its config is
  # written in place (no O_CREAT), then added as a gitlink
  new_repo "$WS"
  new_repo "$WS/vendor"
  local s='d=$1; cd "$d"; '"$FSMON"'; payload "$d/fsmon";
python3 -c "import sys; f = open(sys.argv[1], \"r+\"); f.seek(0, 2); f.write(\"[core]\\n\\tfsmonitor = %s\\n\" % sys.argv[2])" vendor/.git/config "$d/fsmon";
git add vendor'
  MARK=$CT/marker control "$WS" "MARK=$CT/marker; $s"
  attack "$WS" "MARK=$CT/marker; $s"
  assert_not_contains "$(cat "$WS/vendor/.git/config")" "fsmonitor" "the nested repository's config"
  # positive control inside: an ordinary file of the nested repository is writable
  crun run -- sh -c 'echo more >>vendor/file.txt && git -C vendor status --porcelain'
  assert_contains "$OUT" "file.txt"
}

t_linked_worktree() {
  # 3. a linked worktree: MAIN/.git/worktrees/WT/commondir rewritten (--allow MAIN/.git)
  local main=$CT/main
  new_repo "$main"
  gitq -C "$main" worktree add -q "$WS/wt" 2>/dev/null || gitq -C "$main" worktree add "$WS/wt" >/dev/null
  local wt=$WS/wt
  local s='d=$1; '"$FSMON"'; m='"$main"'; mkdir -p "$d/evil/objects" "$d/evil/refs"; payload "$d/evil/fsmon";
printf "[core]\n\tfsmonitor = %s\n" "$d/evil/fsmon" >"$d/evil/config";
for c in "$m"/.git/worktrees/*/commondir; do echo "$d/evil" >"$c"; done'
  attack "$wt" "MARK=$CT/marker; $s" --allow "$main/.git"
  local c
  for c in "$main"/.git/worktrees/*/commondir; do
    assert_not_contains "$(cat "$c")" "evil" "the worktree's commondir"
  done
  # positive control: the attack works without cordon (last: it breaks the worktree)
  rm -f "$CT/marker"
  (MARK=$CT/marker sh -c "$s" sh "$wt") >/dev/null 2>&1 || true
  host_git "$wt"
  [ -e "$CT/marker" ] || die "positive control: rewriting the worktree's commondir did not run the payload"
}

t_no_git_workspace() {
  # 4. a workspace without .git: git init, then config and a hook
  echo hello >"$WS/file.txt"
  local s='d=$1; cd "$d"; '"$FSMON"'; payload "$d/fsmon"; git init -q . ; git config core.fsmonitor "$d/fsmon";
mkdir -p .git/hooks; payload .git/hooks/pre-commit'
  MARK=$CT/marker control "$WS" "MARK=$CT/marker; $s"
  attack "$WS" "MARK=$CT/marker; $s"
  assert_absent "$WS/.git"
  # the same from a subdirectory of a repository
  new_repo "$CT/outer"
  mkdir "$CT/outer/sub"
  attack "$CT/outer/sub" "MARK=$CT/marker; $s"
  assert_absent "$CT/outer/sub/.git"
  # a bare repository made by hand (HEAD, objects, refs): never a git directory on the host
  # (objects and refs together already make a common directory: the second is refused)
  crun run -- sh -c 'mkdir -p bare/objects bare/refs; echo "ref: refs/heads/main" >bare/HEAD; [ -e bare/HEAD ] && [ -e bare/refs ] || echo refused'
  assert_contains "$OUT" "refused" "the last piece of a bare repository"
  (cd "$WS/bare" && git rev-parse --git-dir >/dev/null 2>&1) && die "ESCAPE: $WS/bare is a git directory on the host"
  # positive control: git init works in the private TMPDIR (it vanishes)
  crun run -- sh -c 'cd "$TMPDIR" && git init -q t && echo inited'
  assert_contains "$OUT" "inited"
}

t_hookspath_and_include() {
  # 5. the repository's own configuration names hooks and configuration in the workspace
  new_repo "$WS"
  gitq -C "$WS" config core.hooksPath .husky
  gitq -C "$WS" config include.path ../shared.gitconfig
  local s='d=$1; cd "$d"; '"$FSMON"'; mkdir -p .husky; payload .husky/pre-commit; payload fsmon;
printf "[core]\n\tfsmonitor = %s\n" "$d/fsmon" >shared.gitconfig'
  MARK=$CT/marker control "$WS" "MARK=$CT/marker; $s"
  attack "$WS" "MARK=$CT/marker; $s"
  assert_absent "$WS/.husky" "the hooks directory the configuration names"
  assert_absent "$WS/shared.gitconfig" "the file the configuration includes"
  crun explain -- true
  assert_contains "$OUT" "$WS/.husky"
  assert_contains "$OUT" "$WS/shared.gitconfig"
  # an existing hooks directory stays read-only, its hooks unchanged
  mkdir "$WS/.husky"
  printf '#!/bin/sh\nexit 0\n' >"$WS/.husky/pre-commit"
  chmod 0755 "$WS/.husky/pre-commit"
  attack "$WS" "MARK=$CT/marker; $s"
  assert_file_content "$WS/.husky/pre-commit" "$(printf '#!/bin/sh\nexit 0')"
}

t_git_still_works() {
  # what must keep working: add, commit, stash, branches, merges
  new_repo "$WS"
  crun run -- sh -c 'set -e; echo a >a.txt; git add a.txt; git -c user.name=a -c user.email=a@b commit -q -m a;
git switch -q -c topic; echo b >b.txt; git add b.txt; git -c user.name=a -c user.email=a@b commit -q -m b;
git switch -q main; git -c user.name=a -c user.email=a@b merge -q --no-edit topic; echo c >>a.txt; git stash -q;
git stash pop -q; git log --oneline | wc -l'
  [ "$RC" = 0 ] || die "git in the sandbox: $(last_run)"
  assert_contains "$OUT" "3"
  assert_eq "$(git -C "$WS" log --oneline | wc -l | tr -d ' ')" 3 "the commits, on the host"
}

# ------------------------------------------------------------------------------------
# Routes around an enumeration of git states (issue 19): each changes the state of a
# git directory first (a mark moved, swapped for a symlink, made by another call), then
# plants what a host git runs. The invariant they test (doc/security.md, "The git
# invariant"): a directory git-like at the end was guarded all through the run.

cp "$ESC_SRC/gitops.py" "$BIN/gitops.py"
chmod 0755 "$BIN/gitops.py"
OPS=$BIN/gitops.py

# evil_common DIR: a host-made directory that a host git takes for a common directory
# (objects, refs) whose config runs the payload; made outside the sandbox, so that only
# the step that points git at it is tested.
evil_common() {
  mkdir -p "$1/objects" "$1/refs/heads"
  payload "$1/fsmon"
  printf '[core]\n\tfsmonitor = %s\n' "$1/fsmon" >"$1/config"
}

# fs_attack WS WHO: the plainest attack (commondir naming a host-made common directory
# whose config runs the payload) in the repository WS, with cordon run by WHO (root, or
# 65534 through setpriv), then a host git by the same identity; the payload must not run.
fs_attack() {
  local ws=$1 who=$2 as=()
  [ "$who" = root ] || as=(setpriv --reuid 65534 --regid 65534 --clear-groups env HOME="$CT/home")
  new_repo "$ws"
  evil_common "$ws.evil"
  [ "$who" = root ] || chown -R 65534:65534 "$ws" "$ws.evil" "$CT/home"
  local s='echo '"$ws.evil"' >.git/commondir'
  rm -f "$CT/marker"
  (cd "$ws" && "${as[@]}" "$CORDON" run --workspace "$ws" -- sh -c "$s") >"$CT/fs.out" 2>&1 || true
  (cd "$ws" && "${as[@]}" git status >/dev/null 2>&1) || true
  [ ! -e "$CT/marker" ] || { echo "ESCAPE as $who: $(cat "$CT/fs.out")"; return 1; }
  [ ! -e "$ws/.git/commondir" ] || { echo "the commondir was written as $who: $(cat "$CT/fs.out")"; return 1; }
  # positive control: the same write without cordon makes that git run the payload
  (cd "$ws" && "${as[@]}" sh -c "$s" && "${as[@]}" git status >/dev/null 2>&1) || true
  [ -e "$CT/marker" ] || { echo "positive control as $who: the attack did not run the payload without cordon"; return 1; }
  rm -f "$CT/marker" "$ws/.git/commondir"
}

t_filesystems() {
  # the git rules on the file systems a repository lives on besides ext4: a btrfs
  # subvolume (a device of its own per subvolume), XFS, a host tmpfs, overlayfs (a
  # container's root); as root and as uid 65534
  [ "$(id -u)" = 0 ] || skip_case "loop and tmpfs mounts need root; the root run covers uid 65534 too"
  chmod 0755 "$CT/home"
  chmod 1777 "$CT" # the payload's marker, written as uid 65534 too
  local kinds=() k mnt why res tried=""
  command -v mkfs.btrfs >/dev/null && command -v btrfs >/dev/null && kinds+=(btrfs)
  command -v mkfs.xfs >/dev/null && kinds+=(xfs)
  kinds+=(tmpfs overlay)
  for k in "${kinds[@]}"; do
    mnt=$CT/mnt-$k
    mkdir -p "$mnt"
    why=""
    case $k in
      btrfs) truncate -s 128M "$CT/$k.img" && mkfs.btrfs -q "$CT/$k.img" >/dev/null 2>&1 &&
        mount -o loop "$CT/$k.img" "$mnt" && btrfs -q subvolume create "$mnt/sv" >/dev/null && mkdir "$mnt/sv/d" || why="cannot make a btrfs subvolume on a loop device" ;;
      xfs) truncate -s 320M "$CT/$k.img" && mkfs.xfs -q "$CT/$k.img" >/dev/null 2>&1 &&
        mount -o loop "$CT/$k.img" "$mnt" && mkdir "$mnt/d" || why="cannot make an XFS file system on a loop device" ;;
      tmpfs) mount -t tmpfs -o mode=0755 tmpfs "$mnt" && mkdir "$mnt/d" || why="cannot mount a tmpfs" ;;
      overlay) mkdir -p "$CT/ov/lower" "$CT/ov/upper" "$CT/ov/work" &&
        mount -t overlay overlay -o "lowerdir=$CT/ov/lower,upperdir=$CT/ov/upper,workdir=$CT/ov/work" "$mnt" &&
        mkdir "$mnt/d" || why="cannot mount an overlay" ;;
    esac
    if [ -n "$why" ]; then
      umount -l "$mnt" 2>/dev/null || true
      echo "# $k: skipped: $why"
      continue
    fi
    local d=$mnt/d
    [ "$k" = btrfs ] && d=$mnt/sv/d
    chmod 0755 "$mnt" "$d"
    [ "$k" = btrfs ] && chmod 0755 "$mnt/sv"
    res=0
    fs_attack "$d/root" root >"$CT/fs.why" 2>&1 && fs_attack "$d/user" 65534 >"$CT/fs.why" 2>&1 || res=1
    umount -l "$mnt" || true
    [ "$res" = 0 ] || die "$k: $(cat "$CT/fs.why")"
    tried="$tried $k"
  done
  [ -n "$tried" ] || skip_case "no file system besides the disk's could be made here"
  echo "# file systems tried:$tried"
}

t_main_repo_marks() {
  new_repo "$WS"
  evil_common "$CT/evil"
  # objects swapped for a symlink (git only asks access(X_OK)), then commondir
  local s1='mv .git/objects .git/objects.real && ln -s objects.real .git/objects; echo '"$CT/evil"' >.git/commondir'
  control "$WS" "$s1"
  attack "$WS" "$s1"
  assert_absent "$WS/.git/commondir" "the commondir written after objects became a symlink"
  # refs moved away, commondir made while .git is no git directory, refs moved back
  local s2='mv .git/refs .git/refs.away; echo '"$CT/evil"' >.git/commondir; mv .git/refs.away .git/refs'
  control "$WS" "$s2"
  attack "$WS" "$s2"
  assert_absent "$WS/.git/commondir" "the commondir written while refs was away"
  # positive control: git in the sandbox still commits there
  crun run -- sh -c 'echo x >x.txt && git add x.txt && git -c user.name=a -c user.email=a@b commit -q -m x && echo committed'
  assert_contains "$OUT" "committed"
}

t_nested_repo_marks() {
  # a nested (vendored) repository: its objects swapped with a symlink by
  # renameat2(RENAME_EXCHANGE), or moved away and back, around writes of config and hooks
  new_repo "$WS"
  new_repo "$WS/sub"
  local plant='printf "[core]\n\tfsmonitor = %s\n" "$d/fsmon" >>sub/.git/config; mkdir -p sub/.git/hooks; cp "$d/fsmon" sub/.git/hooks/pre-commit; echo sequence-ran'
  local s1='d=$1; '"$FSMON"'; payload "$d/fsmon"; ln -s objects.real sub/.git/lnk; '"$OPS"' exchange sub/.git/lnk sub/.git/objects; mv sub/.git/lnk sub/.git/objects.real; '"$plant"
  local s2='d=$1; '"$FSMON"'; payload "$d/fsmon"; mv sub/.git/objects sub/.git/o; '"$plant"'; mv sub/.git/o sub/.git/objects'
  local s opt
  for s in "$s1" "$s2"; do
    # positive control: without cordon, a host git in the nested repository runs it
    rm -rf "$CT/control" "$CT/marker"
    cp -a "$WS" "$CT/control"
    (cd "$CT/control" && sh -c "MARK=$CT/marker; $s" sh "$CT/control") >/dev/null 2>&1 || true
    (cd "$CT/control/sub" && git status >/dev/null 2>&1) || true
    [ -e "$CT/marker" ] || die "positive control: the attack did not run the payload without cordon either"
    for opt in "" --no-nested codex; do
      rm -rf "$WS/sub"
      new_repo "$WS/sub"
      cp "$WS/sub/.git/config" "$CT/config.before"
      rm -f "$CT/marker"
      if [ "$opt" = codex ]; then
        # Codex mode: the codex-linux-sandbox personality, a workspace-write profile
        ln -sf "$CORDON" "$BIN/codex-linux-sandbox"
        local prof='{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"},{"path":{"type":"special","value":{"kind":"project_roots"}},"access":"write"}]},"network":"restricted"}'
        local saved=$CORDON
        CORDON=$BIN/codex-linux-sandbox
        crun --sandbox-policy-cwd "$WS" --command-cwd "$WS" --permission-profile "$prof" -- sh -c "MARK=$CT/marker; $s" sh "$WS"
        CORDON=$saved
      else
        crun run --allow-ro "$BIN" $opt -- sh -c "MARK=$CT/marker; $s" sh "$WS"
      fi
      assert_contains "$OUT" "sequence-ran" "the attack ran ($opt)"
      (cd "$WS/sub" && git status >/dev/null 2>&1; git -c user.name=p -c user.email=p@e commit -q --allow-empty -m h >/dev/null 2>&1) || true
      [ ! -e "$CT/marker" ] || die "ESCAPE ($opt): a host git in the nested repository ran the payload ($(last_run))"
      if [ -d "$WS/sub/.git/objects" ]; then
        cmp -s "$CT/config.before" "$WS/sub/.git/config" || die "ESCAPE ($opt): the nested repository's config changed: $(cat "$WS/sub/.git/config")"
        assert_absent "$WS/sub/.git/hooks/pre-commit" "a hook planted in the nested repository"
      fi
    done
  done
}

t_reopen_descriptor() {
  # an O_PATH descriptor of a nested repository's config, reopened for writing through
  # /proc/self/fd after a tmpfs hides the repository in a mount namespace of the command's
  new_repo "$WS"
  new_repo "$WS/sub"
  payload "$CT/fsmon"
  local text
  text=$(printf '[core]\n\tfsmonitor = %s\n' "$CT/fsmon")
  # positive control: outside cordon the same program writes the config (where this
  # identity may make a user namespace)
  cp -a "$WS" "$CT/control"
  (cd "$CT/control" && "$OPS" reopen sub/.git/config sub "$text") >"$CT/control.out" 2>&1 || true
  grep -q "reopen ok" "$CT/control.out" ||
    skip_case "positive control: the program cannot reopen a descriptor outside cordon either ($(cat "$CT/control.out"))"
  grep -q fsmonitor "$CT/control/sub/.git/config" || die "positive control: the reopened descriptor wrote nothing"
  cp "$WS/sub/.git/config" "$CT/config.before"
  crun run --allow-ro "$BIN" -- "$OPS" reopen sub/.git/config sub "$text"
  cmp -s "$CT/config.before" "$WS/sub/.git/config" || die "ESCAPE: the nested repository's config was written through a reopened descriptor ($(last_run))"
  rm -f "$CT/marker"
  host_git "$WS/sub"
  assert_absent "$CT/marker" "the payload"
}

t_metadata() {
  # modes, owners and lengths of git directories and their files are kept; the same
  # calls work on ordinary files
  new_repo "$WS"
  new_repo "$WS/sub"
  cp "$WS/sub/.git/config" "$CT/config.before"
  local mode_git mode_hooks mode_sub
  mode_git=$(stat -c %a "$WS/.git")
  mode_hooks=$(stat -c %a "$WS/.git/hooks")
  mode_sub=$(stat -c %a "$WS/sub/.git")
  crun run --allow-ro "$BIN" -- sh -c 'chmod 777 .git; chmod 777 .git/hooks; chmod 777 sub/.git; chmod 777 sub/.git/hooks;
chmod 666 sub/.git/config; truncate -s 0 sub/.git/config; : | dd of=sub/.git/config 2>/dev/null;
python3 -c "import os; fd = os.open(\"sub/.git\", os.O_RDONLY); os.fchmod(fd, 0o777)";
echo data >plain.txt; chmod 600 plain.txt && echo chmod-ok; truncate -s 2 plain.txt && echo truncate-ok'
  assert_eq "$(stat -c %a "$WS/.git")" "$mode_git" "the mode of .git"
  assert_eq "$(stat -c %a "$WS/.git/hooks")" "$mode_hooks" "the mode of .git/hooks"
  assert_eq "$(stat -c %a "$WS/sub/.git")" "$mode_sub" "the mode of the nested .git"
  cmp -s "$CT/config.before" "$WS/sub/.git/config" || die "the nested repository's config changed: $(cat "$WS/sub/.git/config")"
  assert_contains "$OUT" "chmod-ok" "chmod of an ordinary file"
  assert_contains "$OUT" "truncate-ok" "truncate of an ordinary file"
  assert_eq "$(stat -c %a "$WS/plain.txt")" 600 "the ordinary file's mode"
  assert_eq "$(stat -c %s "$WS/plain.txt")" 2 "the ordinary file's length"
  assert_contains "$ERR" "refused" "the refusals are reported"
  # an owner change (to the caller's own ids, the only ones a capability-less command
  # can give) is refused on a git directory and its hooks, and works elsewhere
  crun run -- sh -c 'chown "$(id -u):$(id -g)" sub/.git/hooks 2>/dev/null || echo chown-hooks-refused;
chown "$(id -u):$(id -g)" .git 2>/dev/null || echo chown-git-refused; touch own.txt; chown "$(id -u):$(id -g)" own.txt && echo chown-ok'
  assert_contains "$OUT" "chown-hooks-refused" "chown of the nested repository's hooks"
  assert_contains "$OUT" "chown-git-refused" "chown of .git"
  assert_contains "$OUT" "chown-ok" "chown of an ordinary file"
  # a FIFO named HEAD hangs a host git in that directory and below; so does one in a git
  # directory; an ordinary FIFO works
  crun run -- sh -c 'mkfifo HEAD 2>/dev/null || echo head-refused; mkfifo sub/.git/packed-refs 2>/dev/null || echo gitdir-refused;
mkfifo pipe && echo fifo-ok; mkfifo p2 && mv p2 HEAD 2>/dev/null || echo rename-refused'
  assert_contains "$OUT" "head-refused" "a FIFO named HEAD"
  assert_contains "$OUT" "gitdir-refused" "a FIFO in a git directory"
  assert_contains "$OUT" "rename-refused" "a FIFO renamed to HEAD"
  assert_contains "$OUT" "fifo-ok" "an ordinary FIFO"
  assert_absent "$WS/HEAD"
  (cd "$WS" && timeout 10 git status >/dev/null 2>&1) || die "a host git in the workspace fails or hangs after the run"
  # a whiteout would leave a 0:0 character device in the workspace
  echo w >"$WS/w1"
  crun run --allow-ro "$BIN" -- "$OPS" whiteout w1 w2
  assert_not_contains "$OUT" "whiteout ok" "RENAME_WHITEOUT in a host directory"
  assert_exists "$WS/w1"
  assert_absent "$WS/w2"
}

run_case commondir t_commondir
run_case nested_repo_gitlink t_nested_repo_gitlink
run_case existing_nested_repo t_existing_nested_repo
run_case linked_worktree t_linked_worktree
run_case no_git_workspace t_no_git_workspace
run_case hookspath_and_include t_hookspath_and_include
run_case git_still_works t_git_still_works
run_case main_repo_marks t_main_repo_marks
run_case nested_repo_marks t_nested_repo_marks
run_case reopen_descriptor t_reopen_descriptor
run_case metadata t_metadata
run_case filesystems t_filesystems
finish
