#!/usr/bin/env bash
# Host code execution through git: after the command ran, a `git status` or `git commit`
# on the host must run nothing the command planted (README, "Workspace protection"). Each
# attack writes a payload that leaves $CT/marker when run, points git at it the way an
# attacker would, and a host git runs afterwards; the marker must not appear. Positive
# control for each: the same attack done without cordon, in a copy, does make this git run
# the payload (so the attack is real on this machine's git).
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
  crun run -- sh -c 'mkdir -p bare/objects bare/refs; echo "ref: refs/heads/main" >bare/HEAD; [ -e bare/HEAD ] || echo refused'
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

run_case commondir t_commondir
run_case nested_repo_gitlink t_nested_repo_gitlink
run_case existing_nested_repo t_existing_nested_repo
run_case linked_worktree t_linked_worktree
run_case no_git_workspace t_no_git_workspace
run_case hookspath_and_include t_hookspath_and_include
run_case git_still_works t_git_still_works
finish
