#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copy-on-write workspaces (`cordon workspace`, issue 11): for each backend this machine
# supports (kernel overlay, fuse-overlayfs, copy; a backend that does not work here is
# skipped, loudly, with the reason), create, run, modify, delete, rename, replace a
# directory, diff, integrate; restore from a new process; the backend kept; a copy never
# redone; the integrated commit's tree equals the view; last writer wins; two workspaces
# of one source see only their own writes; kill -9 during integrate leaves the source
# untouched or fully updated.  Then worktree and none, settings, failures.
source "$(dirname "$0")/lib.sh"

# small file systems the full-disk case mounts (root only) go, whatever happens
_ws_umounts() {
  local m
  if [ -f "$T/.umounts" ]; then
    while read -r m; do umount -l "$m" 2>/dev/null; done <"$T/.umounts"
    rm -f "$T/.umounts"
  fi
  # and the fuse views of workspaces a failed case did not remove
  for m in $(awk -v t="$T/" 'index($5, t) == 1 && $0 ~ /fuse/ {print $5}' /proc/self/mountinfo); do
    fusermount3 -u -z "$m" 2>/dev/null
  done
  return 0
}
trap '_ws_umounts; _cleanup' EXIT

GIT=(git -c user.name=cordon-test -c user.email=test@cordon.invalid -c init.defaultBranch=main
  -c core.hooksPath=/dev/null -c advice.detachedHead=false -c tar.umask=022)

# ws SUBCOMMAND NAME ARG...: cordon workspace, with this case's state root.
ws() {
  local sub=$1
  shift
  crun workspace "$sub" "$@" --root "$CT/state"
}

# wsrun NAME [RUN OPTIONS] -- COMMAND...: cordon workspace run (--root among the options).
wsrun() {
  local name=$1
  shift
  crun workspace run "$name" --root "$CT/state" "$@"
}

# A git repository with a few files and directories, one commit.
make_repo() {
  local d=$1
  mkdir -p "$d/dir/sub" "$d/keep" "$d/gone/deep" "$d/mv"
  printf 'line 1\nline 2\nline 3\n' >"$d/a.txt"
  printf 'b\n' >"$d/b.txt"
  printf 'x\n' >"$d/dir/x"
  printf 'y\n' >"$d/dir/sub/y"
  printf 'k\n' >"$d/keep/k"
  printf 'g\n' >"$d/gone/deep/g"
  printf 'm\n' >"$d/mv/m"
  printf '#!/bin/sh\necho run\n' >"$d/run.sh"
  chmod 0755 "$d/run.sh"
  (cd "$d" && "${GIT[@]}" init -q . && "${GIT[@]}" add -A && "${GIT[@]}" commit -q -m init) ||
    die "could not make the test repository"
  (cd "$d" && git config user.name cordon-test && git config user.email test@cordon.invalid)
}

# What a tree holds (no .git): paths, types, modes, contents.
tree_listing() {
  (
    cd "$1" || exit 1
    find . -path ./.git -prune -o -print | sort
    find . -path ./.git -prune -o \( -type f -o -type l \) -printf '%p %y %m\n' | sort
    find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 -r md5sum
    find . -path ./.git -prune -o -type l -printf '%p -> %l\n' | sort
  )
}
LISTING='find . -path ./.git -prune -o -print | sort
find . -path ./.git -prune -o \( -type f -o -type l \) -printf "%p %y %m\n" | sort
find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 -r md5sum
find . -path ./.git -prune -o -type l -printf "%p -> %l\n" | sort'

# view_listing NAME: the same, of the workspace's view, from inside a run.
view_listing() {
  wsrun "$1" --chdir "$SRC" -- sh -c "$LISTING"
  [ "$RC" = 0 ] || die "listing the view of $1 failed: $(last_run)"
  printf '%s\n' "$OUT"
}

# The changes every backend case makes, inside the view: modify, delete, rename, a
# directory replaced (opaque), new files and directories, a mode change, a symlink.
CHANGES='set -e
printf "line 1\nline two\nline 3\n" > a.txt
rm b.txt
mv mv/m mv/m2
rm -rf dir
mkdir dir
printf "new x\n" > dir/x2
mkdir -p new/deeper
printf "n\n" > new/deeper/n
rm -rf gone
chmod 0644 run.sh
ln -s a.txt link
printf "t\n" > top'
EXPECTED_NS='M	a.txt
D	b.txt
D	dir/sub/y
D	dir/x
A	dir/x2
D	gone/deep/g
A	link
D	mv/m
A	mv/m2
A	new/deeper/n
M	run.sh
A	top'

# backend_or_skip B: create workspace w1 with backend B on $SRC, or skip the case.
backend_or_skip() {
  ws create w1 --source "$SRC" --backend "$1"
  if [ "$RC" != 0 ]; then
    case $ERR in
      *"does not work here"*) skip_case "the $1 backend does not work here: $(printf '%s' "$ERR" | head -c 300)" ;;
    esac
    die "create --backend $1: $(last_run)"
  fi
  assert_contains "$OUT" "backend $1" "create prints the backend"
}

setup_src() {
  SRC=$CT/src
  make_repo "$SRC"
}

# pids_running TEXT: the processes whose command line holds TEXT (by pid, not by name).
pids_running() {
  local p cmd comm
  for p in /proc/[0-9]*; do
    read -r comm 2>/dev/null <"$p/comm" || continue
    [ "$comm" = cordon ] || continue
    cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
    case $cmd in *"$1"*) echo "${p#/proc/}" ;; esac
  done
}

# ---------------------------------------------------------------------------------------

case_cycle() {
  local b=$1
  setup_src
  backend_or_skip "$b"
  local before
  before=$(snapshot "$SRC")
  "${GIT[@]}" -C "$SRC" rev-parse HEAD >"$CT/head0"
  wsrun w1 -- sh -c "$CHANGES"
  [ "$RC" = 0 ] || die "the changes in the view failed: $(last_run)"
  assert_unchanged "$before" "$SRC" "a run wrote the source"
  ws diff w1 --name-status
  [ "$RC" = 0 ] || die "diff --name-status: $(last_run)"
  assert_eq "$OUT" "$EXPECTED_NS" "diff --name-status"
  # the unified diff, applied to a copy of the source, gives the view
  ws diff w1
  [ "$RC" = 0 ] || die "diff: $(last_run)"
  cp "$OUTF" "$CT/patch"
  mkdir "$CT/applied"
  (cd "$SRC" && tar -cf - --exclude=.git .) | (cd "$CT/applied" && tar -xf -)
  (cd "$CT/applied" && git apply --unsafe-paths -p1 "$CT/patch") 2>"$CT/apply.err" ||
    die "git apply of the diff failed: $(head -c 300 "$CT/apply.err")"
  local view
  view=$(view_listing w1)
  assert_eq "$(tree_listing "$CT/applied")" "$view" "the diff applied to the source gives the view"
  # a staged change of the user's is not swept in
  printf 'staged\n' >"$SRC/staged.txt"
  "${GIT[@]}" -C "$SRC" add staged.txt
  ws integrate w1
  [ "$RC" = 0 ] || die "integrate: $(last_run)"
  assert_contains "$OUT" "commit" "integrate says the commit"
  # exactly one commit, on the current branch, whose tree is the view
  assert_eq "$("${GIT[@]}" -C "$SRC" rev-list --count "$(cat "$CT/head0")..HEAD")" 1 "one commit"
  assert_eq "$("${GIT[@]}" -C "$SRC" rev-parse HEAD~1)" "$(cat "$CT/head0")" "on top of the old tip"
  assert_eq "$("${GIT[@]}" -C "$SRC" diff --cached --name-status HEAD | tr '\t' ' ')" "A staged.txt" \
    "only the user's own staged file is staged"
  ! "${GIT[@]}" -C "$SRC" show --stat HEAD | grep -q staged.txt || die "the staged file was committed"
  mkdir "$CT/commit"
  "${GIT[@]}" -C "$SRC" archive HEAD | tar -xpf - -C "$CT/commit"
  [ "$(tree_listing "$CT/commit")" = "$view" ] || die "the commit's tree is not the view: $(diff <(tree_listing "$CT/commit") <(printf "%s\n" "$view") | head -8 | _one_line)"
  rm "$SRC/staged.txt"
  assert_eq "$(tree_listing "$SRC")" "$view" "the source is the view"
  # nothing left to integrate; no commit for nothing
  ws diff w1 --name-status
  assert_eq "$OUT" "" "no changes after integrate"
  local head
  head=$("${GIT[@]}" -C "$SRC" rev-parse HEAD)
  ws integrate w1
  [ "$RC" = 0 ] || die "integrate of nothing: $(last_run)"
  assert_contains "$OUT" "nothing to integrate"
  assert_eq "$("${GIT[@]}" -C "$SRC" rev-parse HEAD)" "$head" "no commit for an empty change set"
  # the workspace goes on from the new source
  wsrun w1 -- sh -c 'printf again >> top'
  ws diff w1 --name-status
  assert_eq "$OUT" "M	top" "the workspace goes on after integrate"
  ws remove w1
  [ "$RC" = 0 ] || die "remove: $(last_run)"
  assert_absent "$CT/state/w1" "remove deletes the layers"
  grep -q "$CT/state" /proc/self/mountinfo && die "a mount was left under the state directory"
  return 0
}

case_restore() {
  local b=$1
  setup_src
  backend_or_skip "$b"
  assert_contains "$(cat "$CT/state/w1/state.json")" "\"backend\": \"$b\"" "the backend is recorded"
  wsrun w1 -- sh -c 'printf mine > marker'
  [ "$RC" = 0 ] || die "run: $(last_run)"
  local ino=""
  [ "$b" = copy ] && ino=$(stat -c %i "$CT/state/w1/copy/a.txt")
  # a new process: restore, then run again
  ws restore w1
  [ "$RC" = 0 ] || die "restore: $(last_run)"
  assert_contains "$OUT" "$b" "restore keeps the backend"
  wsrun w1 -- cat marker
  assert_eq "$OUT" "mine" "the changes survive restore (a copy is never made again)"
  if [ "$b" = copy ]; then
    assert_eq "$(stat -c %i "$CT/state/w1/copy/a.txt")" "$ino" "the copy was not made again"
  fi
  if [ "$b" = fuse ]; then
    # after a reboot the view is not mounted: restore mounts it again
    fusermount3 -u "$CT/state/w1/merged" || die "cannot unmount the fuse view for the test"
    ws status w1
    assert_contains "$OUT" "not mounted" "status says the view is not mounted"
    ws restore w1
    [ "$RC" = 0 ] || die "restore after unmount: $(last_run)"
    [ "$(cat "$CT/state/w1/merged/marker")" = mine ] || die "the fuse view is not back on the host"
  fi
  ws status w1
  [ "$RC" = 0 ] || die "status: $(last_run)"
  assert_contains "$OUT" "backend  $b"
  assert_contains "$OUT" "changes  1"
  ws remove w1
}

case_last_writer() {
  local b=$1
  setup_src
  backend_or_skip "$b"
  wsrun w1 -- sh -c 'printf "ws\n" > a.txt'
  # the source changes meanwhile: the same file and another one
  printf 'source\n' >"$SRC/a.txt"
  printf 'source b\n' >"$SRC/b.txt"
  "${GIT[@]}" -C "$SRC" commit -q -am "meanwhile"
  ws diff w1 --name-status
  assert_eq "$OUT" "M	a.txt" "only the workspace's own change"
  ws integrate w1
  [ "$RC" = 0 ] || die "integrate: $(last_run)"
  assert_file_content "$SRC/a.txt" "ws" "the workspace's version wins"
  assert_file_content "$SRC/b.txt" "source b" "the source's other change is kept"
  assert_eq "$("${GIT[@]}" -C "$SRC" log --format=%s -2 | tr '\n' ' ')" "Integrate workspace w1 meanwhile " \
    "the commit goes on the new tip"
  ws remove w1
}

case_two() {
  local b=$1
  setup_src
  backend_or_skip "$b"
  ws create w2 --source "$SRC" --backend "$b"
  [ "$RC" = 0 ] || die "second workspace: $(last_run)"
  local m1 m2
  m1=$(new_mark)
  m2=$(new_mark)
  # both write at once, for a while, then look
  "$CORDON" workspace run w1 --root "$CT/state" -- sh -c "for i in 1 2 3 4 5 6 7 8 9 10; do echo one\$i > one.\$i; echo one\$i >> a.txt; sleep 0.0$m1 2>/dev/null || sleep 0.01; done" >"$CT/r1" 2>&1 &
  local p1=$!
  "$CORDON" workspace run w2 --root "$CT/state" -- sh -c "for i in 1 2 3 4 5 6 7 8 9 10; do echo two\$i > two.\$i; echo two\$i >> a.txt; sleep 0.0$m2 2>/dev/null || sleep 0.01; done" >"$CT/r2" 2>&1 &
  local p2=$!
  wait $p1 || die "run in w1 failed: $(cat "$CT/r1")"
  wait $p2 || die "run in w2 failed: $(cat "$CT/r2")"
  wsrun w1 -- sh -c 'ls; grep -c two a.txt || true'
  assert_not_contains "$OUT" "two." "w1 sees w2's files"
  assert_contains "$OUT" "one.10"
  wsrun w2 -- sh -c 'ls; grep -c one a.txt || true'
  assert_not_contains "$OUT" "one." "w2 sees w1's files"
  assert_contains "$OUT" "two.10"
  [ ! -e "$SRC/one.1" ] && [ ! -e "$SRC/two.1" ] || die "a run wrote the source"
  ws remove w1
  ws remove w2
}

# kill -9 rounds per backend: 16 spread the kills over the whole integration; the
# sanitizer pass (the same code, looked at for memory errors) runs 6: the four at the
# journal's first moment and two spread, which were a third of the CI's time at 16
ROUNDS=${CORDON_TEST_KILL_ROUNDS:-16}
case ${CORDON_TEST_LABEL:-} in *asan*) ROUNDS=${CORDON_TEST_KILL_ROUNDS:-6} ;; esac

# kill -9 during integrate, at many moments: the source is either as it was or fully
# updated (files and branch), never anything between; with only cordon killed, the
# integration's helper finishes on its own; with every process of it killed, the next
# command finishes it (or, before the commit point, undoes it).
case_kill9() {
  local b=$1
  setup_src
  backend_or_skip "$b"
  ws remove w1
  # what "fully updated" is: the same changes integrated without a kill
  mkdir -p "$CT/many"
  # 2,000 new files (an integration that lasts), one changed, one deleted
  local gen="$PY -c 'import os
os.makedirs(\"many/sub\", exist_ok=True)
for i in range(2000):
    open(\"many/sub/f%d\" % i if i % 2 else \"many/f%d\" % i, \"w\").write(\"%d\\n\" % i)
open(\"a.txt\", \"w\").write(\"changed\")
os.remove(\"b.txt\")'"
  local ref=$CT/ref
  cp -a "$SRC" "$ref"
  crun workspace create wr --source "$ref" --root "$CT/refstate" --backend "$b"
  crun workspace run wr --root "$CT/refstate" -- sh -c "$gen"
  crun workspace integrate wr --root "$CT/refstate"
  [ "$RC" = 0 ] || die "the reference integration failed: $(last_run)"
  local span=$((ELAPSED_MS + ELAPSED_MS / 4 + 1)) # the kills are spread over this (ms)
  local full
  full=$(tree_listing "$ref")
  local untouched
  untouched=$(tree_listing "$SRC")
  local head0 n_full=0 n_none=0 n_rec=0 i mode
  head0=$("${GIT[@]}" -C "$SRC" rev-parse HEAD)
  for i in $(seq 1 $ROUNDS); do
    mode=parent
    [ $((i % 2)) = 0 ] && mode=all
    crun workspace create k$i --source "$SRC" --root "$CT/state" --backend "$b"
    [ "$RC" = 0 ] || die "create k$i: $(last_run)"
    crun workspace run k$i --root "$CT/state" -- sh -c "$gen"
    [ "$RC" = 0 ] || die "run k$i: $(last_run)"
    "$CORDON" workspace integrate k$i --root "$CT/state" >/dev/null 2>&1 &
    local pid=$!
    if [ "$i" -le 4 ]; then
      # the first rounds: as soon as the journal is there (the middle, for sure)
      local t
      for ((t = 0; t < 2000; t++)); do
        [ -e "$CT/state/k$i/journal.json" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.001
      done
    else
      # then a moment somewhere in it: from at once to after the end
      local ms=$(( (i - 5) * span / (ROUNDS - 5) ))
      sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
    fi
    if [ $mode = all ]; then
      # cordon and its helper (a session of its own, same command line)
      local p
      for p in $(pids_running "workspace integrate k$i --root $CT/state"); do kill -9 "$p" 2>/dev/null || true; done
    else
      kill -9 "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
    if [ $mode = parent ]; then
      # nothing but the helper may finish it: wait for its lock, then look without cordon
      timeout 30 flock "$CT/state/k$i/lock" true || die "the integration's helper did not finish"
    else
      [ -e "$CT/state/k$i/journal.json" ] && n_rec=$((n_rec + 1))
      crun workspace status k$i --root "$CT/state"
      [ "$RC" = 0 ] || die "status after kill -9 of everything: $(last_run)"
    fi
    local now
    now=$(tree_listing "$SRC")
    if [ "$now" = "$untouched" ]; then
      n_none=$((n_none + 1))
      assert_eq "$("${GIT[@]}" -C "$SRC" rev-parse HEAD)" "$head0" "files untouched but the branch moved (kill $i, $mode)"
    elif [ "$now" = "$full" ]; then
      n_full=$((n_full + 1))
      assert_eq "$("${GIT[@]}" -C "$SRC" rev-list --count "$head0..HEAD")" 1 "fully updated but not one commit (kill $i, $mode)"
      mkdir -p "$CT/c$i"
      "${GIT[@]}" -C "$SRC" archive HEAD | tar -xpf - -C "$CT/c$i"
      assert_eq "$(tree_listing "$CT/c$i")" "$full" "the commit's tree after kill $i ($mode)"
      # back to the start for the next round
      "${GIT[@]}" -C "$SRC" reset -q --hard "$head0"
      "${GIT[@]}" -C "$SRC" clean -q -fdx
    else
      die "kill -9 at moment $i ($mode) left the source half-updated: $(diff <(printf '%s\n' "$untouched") <(printf '%s\n' "$now") | head -5 | _one_line)"
    fi
    [ -z "$(find "$SRC" -name '.cordon-*' -print -quit)" ] || die "staging files left in the source (kill $i)"
    crun workspace remove k$i --root "$CT/state"
    [ "$RC" = 0 ] || die "remove k$i: $(last_run)"
    [ ! -e "$CT/state/k$i" ] || die "k$i's directory is still there after remove (kill $i, $mode)"
    assert_eq "$("${GIT[@]}" -C "$SRC" for-each-ref refs/cordon)" "" "no scratch ref left after remove (kill $i, $mode)"
  done
  crun workspace remove wr --root "$CT/refstate"
  echo "# kill -9 during integrate ($b, over ${span} ms): $n_none left untouched, $n_full fully updated, $n_rec finished or undone by the next command"
  [ $((n_none + n_full)) = "$ROUNDS" ] || die "not every round was checked"
}

# kill -9 of cordon while its git fast-import runs (a git that takes 1.5 s to start, by a
# wrapper first in PATH): the git goes on (kill -9 reaches cordon only), so it must hold
# the workspace's locks until it has done, and what it wrote for an integration that never
# reached its commit point (the scratch ref in the user's repository) goes with the
# workspace.  Before, remove went ahead at once, the git then wrote into the removed
# workspace ("Directory not empty" in CI) and left refs/cordon/integrate/k in the source.
case_orphan_git() {
  setup_src
  local b
  b=$(any_backend)
  local real
  real=$(command -v git) || die "no git"
  mkdir -p "$CT/bin"
  cat >"$CT/bin/git" <<WRAP
#!/bin/sh
for a; do [ "\$a" = fast-import ] && { : >"$CT/fi.started"; sleep 1.5; }; done
"$real" "\$@"
rc=\$?
for a; do [ "\$a" = fast-import ] && : >"$CT/fi.done"; done
exit \$rc
WRAP
  chmod 0755 "$CT/bin/git"
  # the positive control: the wrapper integrates as git does
  crun workspace create c --source "$SRC" --root "$CT/state" --backend "$b"
  crun workspace run c --root "$CT/state" -- sh -c 'echo one > c.txt'
  PATH=$CT/bin:$PATH crun workspace integrate c --root "$CT/state"
  [ "$RC" = 0 ] || die "integrate through the wrapper: $(last_run)"
  [ -e "$CT/fi.done" ] || die "the wrapper did not run fast-import (is git found by PATH?)"
  assert_eq "$(cat "$SRC/c.txt")" one "integrated through the wrapper"
  crun workspace remove c --root "$CT/state"
  rm -f "$CT/fi.started" "$CT/fi.done"
  local head0
  head0=$("${GIT[@]}" -C "$SRC" rev-parse HEAD)
  crun workspace create k --source "$SRC" --root "$CT/state" --backend "$b"
  crun workspace run k --root "$CT/state" -- sh -c 'echo two > k.txt'
  [ "$RC" = 0 ] || die "run k: $(last_run)"
  PATH=$CT/bin:$PATH "$CORDON" workspace integrate k --root "$CT/state" >/dev/null 2>&1 &
  local pid=$! t
  for ((t = 0; t < 3000; t++)); do
    [ -e "$CT/fi.started" ] && break
    sleep 0.01
  done
  [ -e "$CT/fi.started" ] || die "fast-import never started"
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  # cordon is gone, its git is not: the workspace is still held
  [ -e "$CT/fi.done" ] && die "fast-import ended before the check (the wrapper's sleep is too short here)"
  if flock -n "$CT/state/k/lock" true; then
    die "the workspace's lock is free while the git of the killed cordon still runs"
  fi
  crun workspace remove k --root "$CT/state"
  [ "$RC" = 0 ] || die "remove k after the kill: $(last_run)"
  [ -e "$CT/fi.done" ] || die "remove went ahead while the killed cordon's git still ran"
  [ ! -e "$CT/state/k" ] || die "the workspace's directory is still there: $(ls -A "$CT/state/k" | _one_line)"
  assert_eq "$("${GIT[@]}" -C "$SRC" for-each-ref refs/cordon)" "" "no scratch ref is left in the source"
  assert_eq "$("${GIT[@]}" -C "$SRC" rev-parse HEAD)" "$head0" "the branch did not move"
  [ ! -e "$SRC/k.txt" ] || die "the killed integration changed the source"
}

# the first of kernel, fuse, copy that works here (for the cases that need one)
any_backend() {
  local b
  for b in kernel fuse copy; do
    crun workspace create probe-$b --source "$SRC" --root "$CT/probe" --backend "$b"
    if [ "$RC" = 0 ]; then
      crun workspace remove probe-$b --root "$CT/probe"
      echo "$b"
      return 0
    fi
  done
  die "no backend works: $(last_run)"
}

case_auto() {
  setup_src
  ws create w1 --source "$SRC"
  [ "$RC" = 0 ] || die "create: $(last_run)"
  local b
  b=$(sed -n 's/^workspace w1: backend \([a-z]*\),.*/\1/p' <<<"$OUT")
  case $b in kernel | fuse | copy) ;; *) die "auto chose '$b': $(last_run)" ;; esac
  assert_contains "$(cat "$CT/state/w1/state.json")" "\"backend\": \"$b\"" "auto's choice is recorded"
  # the first that works wins: with the kernel overlay usable, it is the kernel's
  crun workspace create kcheck --source "$SRC" --root "$CT/k" --backend kernel
  if [ "$RC" = 0 ]; then
    assert_eq "$b" kernel "auto tries the kernel overlay first"
  fi
  # never silently changed: every later command uses it
  wsrun w1 -- true
  ws status w1
  assert_contains "$OUT" "backend  $b"
}

case_worktree() {
  setup_src
  ws create w1 --source "$SRC" --backend worktree
  [ "$RC" = 0 ] || die "create: $(last_run)"
  assert_contains "$OUT" "backend worktree"
  "${GIT[@]}" -C "$SRC" rev-parse -q --verify refs/heads/cordon/w1 >/dev/null || die "no branch cordon/w1"
  local before head0
  before=$(snapshot "$SRC")
  head0=$("${GIT[@]}" -C "$SRC" rev-parse HEAD)
  wsrun w1 -- sh -c 'pwd; printf "line one\nline 2\nline 3\n" > a.txt; echo w > wt_new; rm b.txt'
  [ "$RC" = 0 ] || die "run: $(last_run)"
  assert_eq "$(head -n 1 <<<"$OUT")" "$SRC" "the worktree is shown at the source's path"
  assert_unchanged "$before" "$SRC" "a worktree run wrote the source"
  ws diff w1 --name-status
  assert_eq "$OUT" "$(printf 'M\ta.txt\nD\tb.txt\nA\twt_new')" "worktree diff"
  ws integrate w1
  [ "$RC" = 0 ] || die "integrate: $(last_run)"
  assert_eq "$("${GIT[@]}" -C "$SRC" rev-list --parents -n 1 HEAD | wc -w)" 3 "a merge commit"
  assert_file_content "$SRC/wt_new" "w"
  assert_absent "$SRC/b.txt"
  assert_eq "$(head -n 1 "$SRC/a.txt")" "line one"
  assert_eq "$("${GIT[@]}" -C "$SRC" status --porcelain)" "" "the source is clean after the merge"
  # a conflict: both change line 2
  wsrun w1 -- sh -c 'printf "line one\nline two (ws)\nline 3\n" > a.txt'
  printf 'line one\nline two (source)\nline 3\n' >"$SRC/a.txt"
  "${GIT[@]}" -C "$SRC" commit -q -am "source side"
  before=$(tree_listing "$SRC")
  head0=$("${GIT[@]}" -C "$SRC" rev-parse HEAD)
  ws integrate w1
  assert_eq "$RC" 1 "a conflicting merge exits 1 ($(last_run))"
  assert_contains "$ERR" "a.txt" "the conflicting path is named"
  assert_contains "$ERR" "nothing was changed"
  assert_eq "$(tree_listing "$SRC")" "$before" "a conflicting merge changed the source's files"
  assert_eq "$("${GIT[@]}" -C "$SRC" status --porcelain)" "" "a conflicting merge changed the index"
  assert_eq "$("${GIT[@]}" -C "$SRC" rev-parse HEAD)" "$head0" "a conflicting merge moved the branch"
  ws remove w1
  [ "$RC" = 0 ] || die "remove: $(last_run)"
  [ -z "$("${GIT[@]}" -C "$SRC" worktree list --porcelain | grep "$CT/state" || true)" ] || die "the worktree is still listed"
}

case_none() {
  setup_src
  ws create w1 --source "$SRC" --backend none
  [ "$RC" = 0 ] || die "create: $(last_run)"
  wsrun w1 -- sh -c 'echo direct > direct'
  assert_file_content "$SRC/direct" "direct" "--backend none runs in the source itself"
  ws integrate w1
  [ "$RC" = 0 ] || die "integrate: $(last_run)"
  assert_contains "$OUT" "nothing to integrate"
}

case_settings() {
  setup_src
  printf '{\n  "sandbox": {"enabled": true},\n  "orchestration": {"isolation": "worktree"}\n}\n' >"$CT/s.json"
  ws create w1 --source "$SRC" --settings "$CT/s.json"
  [ "$RC" = 0 ] || die "create with settings: $(last_run)"
  assert_contains "$OUT" "backend worktree" "orchestration.isolation chooses the backend"
  printf '{"orchestration": {"isolation": "overlayfs"}}\n' >"$CT/o.json"
  ws create w2 --source "$SRC" --settings "$CT/o.json"
  [ "$RC" = 0 ] || die "create with overlayfs: $(last_run)"
  case $OUT in *"backend kernel"* | *"backend fuse"* | *"backend copy"*) ;; *) die "overlayfs chose: $OUT" ;; esac
  printf '{"orchestration": {"isolation": "none"}}\n' >"$CT/n.json"
  ws create w3 --source "$SRC" --settings "$CT/n.json"
  assert_contains "$OUT" "backend none"
  # --backend wins over the settings
  ws create w4 --source "$SRC" --settings "$CT/s.json" --backend none
  assert_contains "$OUT" "backend none"
  printf '{\n  "orchestration": {\n    "isolation": "zfs"\n  }\n}\n' >"$CT/bad.json"
  ws create w5 --source "$SRC" --settings "$CT/bad.json"
  assert_eq "$RC" 125 "a bad orchestration.isolation"
  assert_contains "$ERR" "bad.json:3:" "the message names file and line"
  assert_contains "$ERR" "orchestration.isolation"
  assert_cordon_stderr
  assert_absent "$CT/state/w5"
}

case_usage() {
  setup_src
  ws create '../evil' --source "$SRC"
  assert_eq "$RC" 125
  assert_contains "$ERR" "not a workspace name"
  ws create w1
  assert_eq "$RC" 125
  assert_contains "$ERR" "--source"
  ws create w1 --source "$SRC" --backend zfs
  assert_eq "$RC" 125
  assert_contains "$ERR" "unknown workspace backend"
  ws create w1 --source "$CT/nowhere"
  assert_eq "$RC" 125
  ws diff nosuch
  assert_eq "$RC" 125
  assert_contains "$ERR" "no workspace nosuch"
  ws create w1 --source "$SRC" --backend none
  ws create w1 --source "$SRC" --backend none
  assert_eq "$RC" 125
  assert_contains "$ERR" "exists already"
  wsrun w1 --workspace /tmp -- true
  assert_eq "$RC" 125
  assert_contains "$ERR" "its workspace is the view" && assert_contains "$ERR" "(--workspace DIR or --no-workspace)"
  crun workspace frobnicate
  assert_eq "$RC" 125
  assert_cordon_stderr
  # the state root inside the source is refused
  crun workspace create w9 --source "$SRC" --root "$SRC/.state"
  assert_eq "$RC" 125
  assert_contains "$ERR" "must not lie inside each other"
}

case_corrupt_state() {
  setup_src
  ws create w1 --source "$SRC" --backend "$(any_backend)"
  [ "$RC" = 0 ] || die "create: $(last_run)"
  printf '{"version": 1, "name": "w1", "sou' >"$CT/state/w1/state.json"
  for sub in diff status integrate restore; do
    ws "$sub" w1
    assert_eq "$RC" 125 "$sub with a corrupt state"
    assert_contains "$ERR" "corrupt" "$sub names the corrupt state"
    assert_cordon_stderr
  done
  wsrun w1 -- true
  assert_eq "$RC" 125 "run with a corrupt state"
  printf '{"version": 99}\n' >"$CT/state/w1/state.json"
  ws status w1
  assert_eq "$RC" 125
  assert_contains "$ERR" "version 99"
  rm "$CT/state/w1/state.json"
  ws status w1
  assert_eq "$RC" 125
  assert_contains "$ERR" "not created completely"
  ws remove w1
  [ "$RC" = 0 ] || die "remove of a broken workspace: $(last_run)"
  assert_absent "$CT/state/w1"
  grep -q "$CT/state" /proc/self/mountinfo && die "a mount was left"
  return 0
}

# Inside a workspace the git protections hold (and the creation control's: no new
# repository, no protected name); integrate never carries .git or a protected name into
# the source, even one that reached the workspace's layer past the sandbox.
case_git_inside() {
  local b=$1
  setup_src
  backend_or_skip "$b"
  wsrun w1 -- sh -c '
    if (echo evil > .git/hooks/post-commit) 2>/dev/null; then echo HOOK-WRITTEN; fi
    if (echo "[core] hooksPath = /tmp" >> .git/config) 2>/dev/null; then echo CONFIG-WRITTEN; fi
    echo inner > inner.txt
    git -c user.name=x -c user.email=x@x add inner.txt && git -c user.name=x -c user.email=x@x commit -q -m inner && echo COMMITTED
    mkdir nested && echo n > nested/f
    (cd nested && git init -q . 2>/dev/null) && echo NESTED-INIT
    (mkdir .codex && echo x > .codex/config.toml) 2>/dev/null && echo CODEX-MADE
    true'
  assert_not_contains "$OUT" "HOOK-WRITTEN" "a hook could be planted in the workspace"
  assert_not_contains "$OUT" "CONFIG-WRITTEN" "the repository's config was writable in the workspace"
  assert_contains "$OUT" "COMMITTED" "git commit works inside the workspace ($(last_run))"
  assert_not_contains "$OUT" "NESTED-INIT" "a new repository could be made in the workspace"
  assert_not_contains "$OUT" "CODEX-MADE" "a protected name could be made in the workspace"
  # a protected name that reached the layer some other way (the user's own tools, say)
  case $b in
    kernel) mkdir -p "$CT/state/w1/upper/.codex" && echo planted >"$CT/state/w1/upper/.codex/config.toml" ;;
    fuse) mkdir -p "$CT/state/w1/merged/.codex" && echo planted >"$CT/state/w1/merged/.codex/config.toml" ;;
    copy) mkdir -p "$CT/state/w1/copy/.codex" && echo planted >"$CT/state/w1/copy/.codex/config.toml" ;;
  esac
  ws diff w1 --name-status
  assert_eq "$OUT" "$(printf 'A\tinner.txt\nA\tnested/f')" "the changes have no .git and no protected name"
  ws integrate w1
  [ "$RC" = 0 ] || die "integrate: $(last_run)"
  assert_contains "$ERR" "not integrated: .codex/config.toml" "the protected name is reported"
  assert_absent "$SRC/.codex"
  assert_absent "$SRC/nested/.git"
  assert_file_content "$SRC/nested/f" "n"
  assert_absent "$SRC/.git/hooks/post-commit"
  assert_eq "$("${GIT[@]}" -C "$SRC" log --format=%s -1)" "Integrate workspace w1" "the workspace's own commit is not the source's"
  ! grep -q hooksPath "$SRC/.git/config" || die "the workspace changed the source's git config"
  ws remove w1
}

# A full disk: in the workspace (the command sees it, the workspace stays usable) and in
# the source at integrate (reported; the source untouched; integrate works once there is
# room).  Root only: it mounts small tmpfs file systems.
case_full_disk() {
  [ "$MY_UID" -eq 0 ] || skip_case "needs root to mount a small tmpfs"
  setup_src
  mkdir -p "$CT/smallstate" "$CT/smallsrc"
  mount -t tmpfs -o size=1m tmpfs "$CT/smallstate" || skip_case "cannot mount a tmpfs here"
  echo "$CT/smallstate" >>"$T/.umounts"
  crun workspace create w1 --source "$SRC" --root "$CT/smallstate"
  [ "$RC" = 0 ] || { umount "$CT/smallstate"; die "create on a small tmpfs: $(last_run)"; }
  crun workspace run w1 --root "$CT/smallstate" -- sh -c 'head -c 3000000 /dev/zero > big'
  assert_ne "$RC" 0 "writing past a full disk succeeded"
  assert_contains "$ERR" "No space left" "the command sees the full disk"
  crun workspace run w1 --root "$CT/smallstate" -- sh -c 'rm -f big; echo ok > small'
  [ "$RC" = 0 ] || die "the workspace is not usable after a full disk: $(last_run)"
  crun workspace diff w1 --root "$CT/smallstate" --name-status
  assert_eq "$OUT" "A	small"
  crun workspace remove w1 --root "$CT/smallstate"
  umount "$CT/smallstate"
  # the source's disk full at integrate
  mount -t tmpfs -o size=1m tmpfs "$CT/smallsrc" || skip_case "cannot mount a tmpfs here"
  echo "$CT/smallsrc" >>"$T/.umounts"
  make_repo "$CT/smallsrc/r"
  ws create w2 --source "$CT/smallsrc/r"
  [ "$RC" = 0 ] || die "create: $(last_run)"
  wsrun w2 -- sh -c 'head -c 1500000 /dev/urandom > big; echo x > x'
  [ "$RC" = 0 ] || die "run: $(last_run)"
  local before head0
  before=$(tree_listing "$CT/smallsrc/r")
  head0=$("${GIT[@]}" -C "$CT/smallsrc/r" rev-parse HEAD)
  ws integrate w2
  assert_eq "$RC" 125 "integrate onto a full disk ($(last_run))"
  assert_contains "$ERR" "disk is full"
  assert_contains "$ERR" "nothing was integrated"
  # (git may leave an unreachable temporary object in .git/objects: git gc's to prune)
  assert_eq "$(tree_listing "$CT/smallsrc/r")" "$before" "a failed integrate changed the source's files"
  assert_eq "$("${GIT[@]}" -C "$CT/smallsrc/r" --no-optional-locks status --porcelain)" "" "a failed integrate changed the index"
  assert_eq "$("${GIT[@]}" -C "$CT/smallsrc/r" rev-parse HEAD)" "$head0" "a failed integrate moved the branch"
  ws diff w2 --name-status
  assert_eq "$OUT" "$(printf 'A\tbig\nA\tx')" "the workspace keeps its changes"
  # room again: the big file goes, and git's temporary object from the failed write
  wsrun w2 -- rm big
  "${GIT[@]}" -C "$CT/smallsrc/r" prune --expire=now
  ws integrate w2
  [ "$RC" = 0 ] || die "integrate with room: $(last_run)"
  assert_file_content "$CT/smallsrc/r/x" "x"
  ws remove w2
  umount "$CT/smallsrc"
}

# A file the user cannot copy up (its owner is not mapped in the user namespace): a clear
# error for the command, nothing written.  Root only (it makes the file), run as 65534.
case_unmapped_owner() {
  [ "$MY_UID" -eq 0 ] || skip_case "needs root to make a file owned by another user"
  command -v setpriv >/dev/null || skip_case "setpriv not found"
  local d
  d=$(scratch_outside_tmp)
  mkdir -p "$d/src" "$d/state"
  echo root > "$d/src/rootfile"
  chmod 0666 "$d/src/rootfile"
  echo mine > "$d/src/mine"
  chown 65534:65534 "$d/src" "$d/src/mine" "$d/state"
  local as=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all env HOME="$d")
  "${as[@]}" "$CORDON" workspace create w1 --source "$d/src" --root "$d/state" --backend kernel >"$CT/o" 2>&1 ||
    skip_case "the kernel backend does not work for uid 65534 here: $(cat "$CT/o")"
  local rc=0
  "${as[@]}" "$CORDON" workspace run w1 --root "$d/state" -- sh -c 'echo more >> rootfile' >"$CT/o" 2>&1 || rc=$?
  assert_ne "$rc" 0 "writing a file of an unmapped owner succeeded"
  assert_contains "$(cat "$CT/o")" "Value too large" "the kernel's error reaches the command"
  assert_file_content "$d/src/rootfile" "root"
  "${as[@]}" "$CORDON" workspace diff w1 --root "$d/state" --name-status >"$CT/o" 2>&1
  assert_eq "$(cat "$CT/o")" "" "nothing was half-written into the workspace"
  "${as[@]}" "$CORDON" workspace remove w1 --root "$d/state" >/dev/null 2>&1
}

# Rules, hidden paths and globs that name the source's paths apply to the view there.
case_rules() {
  local b=$1
  setup_src
  backend_or_skip "$b"
  wsrun w1 -- sh -c 'echo viewy > dir/sub/y'
  wsrun w1 --deny "$SRC/keep" --deny-glob "$SRC/**/x" --hide "$SRC/mv" --allow-ro "$SRC/dir" -- sh -c \
    'echo "keep:$(ls -A keep | tr -d "\n")"; echo "x:$(cat dir/x 2>/dev/null)"; echo "mv:$(ls -A mv 2>/dev/null | tr -d "\n")"
     echo "y:$(cat dir/sub/y)"
     if (echo w > dir/new) 2>/dev/null; then echo DIR-WRITABLE; fi; echo ok > top'
  [ "$RC" = 0 ] || die "run with rules: $(last_run)"
  assert_contains "$OUT" "keep:" && assert_not_contains "$OUT" "keep:k" "--deny of a source path hides it in the view"
  assert_contains "$OUT" "x:" && assert_not_contains "$OUT" "x:x" "a deny glob on the source's paths hides the view's match"
  assert_not_contains "$OUT" "mv:m" "--hide of a source path hides it in the view"
  assert_not_contains "$OUT" "DIR-WRITABLE" "--allow-ro of a source path is read-only in the view"
  assert_contains "$OUT" "y:viewy" "--allow-ro of a source path shows the view's content, not the source's"
  ws diff w1 --name-status
  assert_eq "$OUT" "$(printf 'M\tdir/sub/y\nA\ttop')" "only the writable part changed"
  ws remove w1
}

# A name the command chose never reaches the terminal raw (issue 19, 4): one with ESC, CR,
# TAB and a newline (that once erased a line of `workspace diff` and faked a "D f" entry) is
# printed as git prints it, quoted with C escapes, by diff, diff --name-status and
# integrate's messages, for our own diff (the overlay and copy backends) and git's (the
# worktree backend); the patch still applies.  Positive controls: a plain name and a UTF-8
# one are printed as they are.
EVIL_MAKE='printf x > "$(printf "e\033[2K\rD\tf\nz")"; printf "y\n" > "caf$(printf "\303\251") plain"
mkfifo "$(printf "p\033[1Aq")"'
EVIL_N='e\033[2K\rD\tf\nz' # as quoted, without the quotes
EVIL_Q="\"$EVIL_N\""
case_names_quoted() {
  setup_src
  local b
  for b in "$(any_backend)" worktree; do
    ws create "q$b" --source "$SRC" --backend "$b"
    [ "$RC" = 0 ] || die "create --backend $b: $(last_run)"
    wsrun "q$b" -- sh -c "$EVIL_MAKE"
    [ "$RC" = 0 ] || die "making the names ($b): $(last_run)"
    ws diff "q$b" --name-status
    [ "$RC" = 0 ] || die "diff --name-status ($b): $(last_run)"
    case $OUT in *$'\e'* | *$'\r'*) die "diff --name-status ($b) printed a raw ESC or CR: $(printf '%q' "$OUT")" ;; esac
    local utf=$'caf\303\251 plain' plain=$'caf\303\251 plain'
    [ "$b" = worktree ] && plain='"caf\303\251 plain"' # git's own core.quotePath=true
    assert_eq "$OUT" "$(printf 'A\t%s\nA\t%s' "$plain" "$EVIL_Q")" "diff --name-status ($b)"
    ws diff "q$b"
    [ "$RC" = 0 ] || die "diff ($b): $(last_run)"
    case $OUT in *$'\e'* | *$'\r'*) die "diff ($b) printed a raw ESC or CR: $(printf '%q' "$OUT" | head -c 400)" ;; esac
    assert_contains "$OUT" "diff --git \"a/$EVIL_N\" \"b/$EVIL_N\"" "the diff header quotes the name ($b)"
    assert_contains "$OUT" "+++ \"b/$EVIL_N\"" "the +++ line quotes the name ($b)"
    # git reads the quoted names back: the patch makes the same files
    rm -rf "$CT/applied" && mkdir "$CT/applied"
    (cd "$SRC" && tar -cf - --exclude=.git .) | (cd "$CT/applied" && tar -xf -)
    (cd "$CT/applied" && git apply --unsafe-paths -p1 "$OUTF") 2>"$CT/apply.err" ||
      die "git apply of the diff ($b) failed: $(head -c 300 "$CT/apply.err")"
    assert_file_content "$CT/applied/$(printf 'e\033[2K\rD\tf\nz')" x "the patch makes the file with the quoted name ($b)"
    assert_file_content "$CT/applied/$utf" y "the patch makes the UTF-8 name ($b)"
  done
  # integrate names what it leaves out (the FIFO) quoted
  b=$(any_backend)
  ws integrate "q$b"
  [ "$RC" = 0 ] || die "integrate: $(last_run)"
  case $ERR in *$'\e'*) die "integrate printed a raw ESC: $(printf '%q' "$ERR")" ;; esac
  assert_contains "$ERR" 'not integrated: "p\033[1Aq"' "integrate quotes a skipped name"
  assert_file_content "$SRC/$(printf 'e\033[2K\rD\tf\nz')" x "the file with the crafted name is integrated"
  # an error that names such a file is printed quoted whole: a tree deeper than the walk
  # goes (4096 levels) below a crafted name ("... too deep", cut at the message's size)
  ws create deep --source "$SRC" --backend "$b"
  wsrun deep -- "$PY" -c 'import os
os.mkdir("t\033[2K\rD\tf\nz"); os.chdir("t\033[2K\rD\tf\nz")
for i in range(4100):
    os.mkdir("d"); os.chdir("d")'
  [ "$RC" = 0 ] || die "making the deep tree: $(last_run)"
  ws diff deep --name-status
  assert_eq "$RC" 125 "diff of a tree too deep ($(last_run))"
  case $ERR in *$'\e'* | *$'\r'*) die "the error printed a raw ESC or CR: $(printf '%q' "$ERR" | head -c 300)" ;; esac
  assert_contains "$ERR" "cordon: \"t${EVIL_N#e}/d/d/d/" "the error names the path quoted"
  assert_eq "$(wc -l <"$ERRF")" 1 "the error is one line of cordon's"
}

# Uncommitted host edits are never overwritten silently (issue 23): the workspace and the
# host both change a.txt (and a file with a newline in its name) after the workspace was
# made; integrate refuses (125) naming them, quoted, and changes nothing; --force
# overwrites them and keeps the host's versions in the workspace's directory, saying
# where.  Positive controls: a file only the workspace changed, a host change that was
# committed (the workspace's version wins, as before), and a plain directory's.
case_host_edits() {
  local b=$1 odd=$'odd\nname'
  setup_src
  printf 'odd\n' >"$SRC/$odd"
  "${GIT[@]}" -C "$SRC" add -A && "${GIT[@]}" -C "$SRC" commit -q -m odd || die "cannot commit the odd name"
  backend_or_skip "$b"
  wsrun w1 -- sh -c 'printf "ws\n" > a.txt; printf "ws b\n" > b.txt; printf "ws odd\n" > "$(printf "odd\nname")"; printf "ws run\n" > run.sh'
  [ "$RC" = 0 ] || die "run: $(last_run)"
  printf 'host edit\n' >"$SRC/a.txt"
  printf 'host odd\n' >"$SRC/$odd"
  printf 'host run\n' >"$SRC/run.sh"
  "${GIT[@]}" -C "$SRC" commit -q -m "host commit" run.sh || die "cannot commit run.sh"
  local head0 before
  head0=$("${GIT[@]}" -C "$SRC" rev-parse HEAD)
  before=$(tree_listing "$SRC")
  ws integrate w1
  assert_eq "$RC" 125 "integrate over uncommitted host edits ($(last_run))"
  assert_contains "$ERR" "a.txt" "the host-edited file is named"
  assert_contains "$ERR" '"odd\nname"' "an odd name is quoted"
  assert_not_contains "$ERR" "b.txt" "a file only the workspace changed is not named"
  assert_not_contains "$ERR" "run.sh" "a committed host change is not named"
  assert_contains "$ERR" "--force"
  assert_eq "$(printf '%s' "$ERR" | grep -c '^name')" 0 "a name forged a line"
  assert_eq "$(tree_listing "$SRC")" "$before" "a refused integrate changed the source"
  assert_eq "$("${GIT[@]}" -C "$SRC" rev-parse HEAD)" "$head0" "a refused integrate moved the branch"
  # --force: overwritten, the host's versions kept where it says
  ws integrate w1 --force
  [ "$RC" = 0 ] || die "integrate --force: $(last_run)"
  assert_file_content "$SRC/a.txt" "ws" "--force: the workspace's version"
  assert_file_content "$SRC/b.txt" "ws b"
  assert_file_content "$SRC/run.sh" "ws run" "a committed host change: the workspace's version wins"
  local saved
  saved=$(printf '%s' "$ERR" | sed -n 's/.* kept in \(.*\) (until .*/\1/p')
  [ -n "$saved" ] || die "--force does not say where the host's versions are: $ERR"
  assert_file_content "$saved/a.txt" "host edit" "the host's version of a.txt is kept"
  assert_file_content "$saved/$odd" "host odd" "the host's version of the odd name is kept"
  assert_absent "$saved/b.txt"
  # the workspace goes on from the integrated source: its own files are not "host edits"
  wsrun w1 -- sh -c 'printf "again\n" > a.txt'
  ws integrate w1
  [ "$RC" = 0 ] || die "integrate after an integration: $(last_run)"
  assert_file_content "$SRC/a.txt" "again"
  ws remove w1
  # a source without git: any change since is the host's own
  mkdir "$CT/plain"
  printf 'p\n' >"$CT/plain/p.txt"
  printf 'q\n' >"$CT/plain/q.txt"
  ws create w2 --source "$CT/plain" --backend "$b"
  [ "$RC" = 0 ] || die "create on a plain directory: $(last_run)"
  wsrun w2 -- sh -c 'printf "ws p\n" > p.txt; printf "ws q\n" > q.txt'
  printf 'host p\n' >"$CT/plain/p.txt"
  ws integrate w2
  assert_eq "$RC" 125 "plain directory: integrate over a host edit ($(last_run))"
  assert_contains "$ERR" "p.txt"
  assert_not_contains "$ERR" "q.txt"
  assert_file_content "$CT/plain/p.txt" "host p"
  assert_file_content "$CT/plain/q.txt" "q" "nothing was integrated"
  # --force integrates both (q.txt, which only the workspace changed, all along)
  printf 'p\n' >"$CT/plain/p.txt"
  ws integrate w2 --force
  [ "$RC" = 0 ] || die "plain directory: integrate --force: $(last_run)"
  assert_file_content "$CT/plain/p.txt" "ws p"
  assert_file_content "$CT/plain/q.txt" "ws q"
  ws remove w2
}

# ---------------------------------------------------------------------------------------

for b in kernel fuse copy; do
  run_case "${b}_cycle" case_cycle "$b"
  run_case "${b}_restore" case_restore "$b"
  run_case "${b}_last_writer" case_last_writer "$b"
  run_case "${b}_two_at_once" case_two "$b"
  run_case "${b}_kill9_integrate" case_kill9 "$b"
  run_case "${b}_git_inside" case_git_inside "$b"
  run_case "${b}_rules" case_rules "$b"
  run_case "${b}_host_edits" case_host_edits "$b"
done
run_case auto case_auto
run_case worktree case_worktree
run_case none case_none
run_case settings case_settings
run_case usage case_usage
run_case corrupt_state case_corrupt_state
run_case full_disk case_full_disk
run_case orphan_git case_orphan_git
run_case unmapped_owner case_unmapped_owner
run_case names_quoted case_names_quoted

finish
