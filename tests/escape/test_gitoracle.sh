#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The git oracle (doc/security.md, "The git oracle"; issue 19, section 5): proof of the
# creation control's git promise that does not depend on knowing the attack. Random
# sequences of name-making, renaming, linking, mode-changing and namespace calls run inside
# `cordon run` (default options) against a workspace holding a main repository, a nested
# one, a linked worktree and a submodule; a host git asked, in every directory, what it
# would execute and read must answer the same afterwards (tests/escape/git_oracle.py says
# exactly what is compared). Each finding prints its seed and the sequence with what every
# call returned; each seed is replayed with
#
#   CORDON_ORACLE_SEEDS=SEED CORDON_ORACLE_SECONDS=0 CORDON=build/cordon bash tests/escape/test_gitoracle.sh
#
# Environment (all optional; the harness passes CORDON_ORACLE_* on):
#   CORDON_ORACLE_SECONDS     the random phase's budget on the test's file system (30)
#   CORDON_ORACLE_FS_SECONDS  the random phase per identity on the loop-mounted btrfs and XFS (4)
#   CORDON_ORACLE_LL_SECONDS  the budget under --isolation landlock, its regression entries included (30)
#   CORDON_ORACLE_SEEDS       entries (SEED or SEED@I+J) to run before the regression entries
#   CORDON_ORACLE_KEEP_GOING  1: do not stop at the first failing random seed
# As root, the file runs in a mount namespace of its own: its loop, tmpfs and overlay
# mounts never show in the host's mount table, which other tests running beside it watch
# (stress/faults' sequential_runs counts its lines).
if [ "$(id -u)" = 0 ] && [ -z "${CORDON_TEST_OWN_MNTNS:-}" ] && command -v unshare >/dev/null; then
  CORDON_TEST_OWN_MNTNS=1 exec unshare -m --propagation private -- "$BASH" "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
require_cordon

command -v git >/dev/null || { skip "all" "git not found (./bootstrap.sh installs it)"; finish; }

ORACLE=$ESC_DIR/git_oracle.py
SECONDS_MAIN=${CORDON_ORACLE_SECONDS:-30}
SECONDS_FS=${CORDON_ORACLE_FS_SECONDS:-4}
KEEP=()
[ "${CORDON_ORACLE_KEEP_GOING:-0}" = 1 ] && KEEP=(--keep-going --max-findings 1000)

# The regression entries: what the oracle found on main before the creation control's git
# rules were rewritten (issue 19, section 1), each shrunk by `git_oracle.py minimize` to
# the calls of its seed's sequence that matter (SEED@I+J). They run first, every time, each
# with its positive control (the same calls without cordon must show the difference):
#   1990695145@39+97  main repository: .git/refs swapped with a symlink (RENAME_EXCHANGE),
#                     then .git/commondir made by O_TMPFILE + linkat -> git uses evil/config
#   1803701179@80+91  submodule's git directory: objects moved aside behind a symlink, then
#                     commondir written -> git uses the outside evil directory
#   117@68+70,        nested repository: objects swapped (RENAME_EXCHANGE) with a symlink to
#   208@24+76         an objects directory elsewhere, which git still accepts; then its
#                     config, or a hook, is written
#   65402239@21       bind(AF_UNIX) makes the agent name .cordon at the top
#   39202328@115      bind(AF_UNIX) makes a name in the nested repository's hooks/
#   1771165203@87     an O_PATH descriptor of nested/.git/config reopened for writing
#                     through /proc/self/fd after unshare + a tmpfs over the directory
#                     (as uid 65534)
#   1285190683@55     chmod of the nested repository's hooks directory
#   1111303968@10     chmod 0777 of .git (another local user could then swap its hooks)
#   333056615@52      mkfifo src/HEAD: a host git in src blocks for ever
#   25@3, 117@63      on btrfs only (a subvolume's st_dev is not the mount's): a plain write
#                     of .git/commondir, and of nested/.git/config
FS_SEEDS=25@3,117@63
REGRESSION_SEEDS=${CORDON_ORACLE_SEEDS:+$CORDON_ORACLE_SEEDS,}1990695145@39+97,1803701179@80+91,65402239@21,39202328@115,1771165203@87,1285190683@55,1111303968@10,333056615@52,117@68+70,208@24+76,$FS_SEEDS

# oracle DIR ARG...: the fuzzer in DIR; its report becomes TAP comments, and a finding
# fails the case with the seeds.
oracle() {
  local dir=$1 rc=0
  shift
  "$PY" "$ORACLE" fuzz --cordon "$CORDON" --dir "$dir" "$@" >"$CT/oracle.log" 2>&1 || rc=$?
  cat "$CT/oracle.log"
  [ "$rc" = 0 ] || die "the git oracle found a way for the command to change what a host git runs or reads: $(grep -E '^# (FINDING|CONTROL FAILED)' "$CT/oracle.log" | sed 's/ (replay.*//' | tr '\n' ' ') (the lines above say what changed and the sequence; replay with CORDON_ORACLE_SEEDS)"
}

t_regression_seeds() {
  # every regression seed with its control: without cordon the same calls must change
  # what git runs, or the oracle cannot see
  oracle "$CT/o" --seeds "$REGRESSION_SEEDS" --seconds 0
}

t_random() {
  oracle "$CT/o" --seconds "$SECONDS_MAIN" --control 8 "${KEEP[@]}"
}

# --isolation landlock (issue 22): the creation control runs there too, served by cordon's
# stand-in on the host's own paths; the regression entries, then random sequences for
# CORDON_ORACLE_LL_SECONDS (30, the regression entries included).
t_landlock() {
  "$CORDON" run --isolation landlock -- true >/dev/null 2>"$CT/ll.err" ||
    skip_case "--isolation landlock does not run here: $(head -c 200 "$CT/ll.err")"
  oracle "$CT/o" --seeds "$REGRESSION_SEEDS" --seconds "${CORDON_ORACLE_LL_SECONDS:-30}" --control 8 \
    --cordon-arg=--isolation --cordon-arg=landlock --label landlock "${KEEP[@]}"
}

# on_loop_fs TYPE MKFS...: the oracle on a loop-mounted file system of that type, as root
# and as uid 65534 (a directory on it owned by 65534); btrfs in a subvolume, where a
# directory's st_dev is the subvolume's, not the mount's (issue 19, section 1).
on_loop_fs() {
  local type=$1 mkfs=$2
  [ "$MY_UID" = 0 ] || skip_case "a loop mount needs root: the root pass runs the oracle on $type as root and as uid 65534"
  command -v "$mkfs" >/dev/null || skip_case "$mkfs not found (./bootstrap.sh installs ${3}): the oracle did not run on $type"
  grep -qw "$type" /proc/filesystems || modprobe "$type" 2>/dev/null || true
  grep -qw "$type" /proc/filesystems || skip_case "this kernel has no $type: the oracle did not run on it"
  command -v setpriv >/dev/null || skip_case "setpriv not found: cannot run the oracle as uid 65534 on $type"
  local img=$CT/$type.img mnt=$CT/mnt
  truncate -s 320M "$img"
  "$mkfs" -q "$img" >/dev/null 2>&1 || "$mkfs" "$img" >/dev/null 2>&1 || die "$mkfs $img failed"
  mkdir -p "$mnt"
  mount -o loop "$img" "$mnt" 2>"$CT/mount.err" || skip_case "cannot loop-mount $type here: $(cat "$CT/mount.err")"
  trap 'umount -l "$CT/mnt" 2>/dev/null' EXIT
  local top=$mnt
  if [ "$type" = btrfs ]; then
    btrfs subvolume create "$mnt/sv" >/dev/null || die "btrfs subvolume create failed"
    top=$mnt/sv
  fi
  chmod 0755 "$mnt" "$top"
  mkdir -p "$top/root" "$top/unpriv"
  chown 65534:65534 "$top/unpriv"
  local rc=0
  # as root every regression entry (their controls ran in regression_seeds), as 65534 the
  # ones of the file systems (FS_SEEDS): a CI run stays near 90 s per identity
  "$PY" "$ORACLE" fuzz --cordon "$CORDON" --dir "$top/root" --seeds "$REGRESSION_SEEDS" --no-entry-control \
    --seconds "$SECONDS_FS" --control 0 --label "$type, root" "${KEEP[@]}" >"$CT/root.log" 2>&1 || rc=1
  cat "$CT/root.log"
  # the oracle and cordon must be readable by 65534 (the harness copies the checkout
  # when they are not, but only for its own identity): run copies from the mount
  cp "$ORACLE" "$top/git_oracle.py"
  cp "$CORDON" "$top/cordon"
  chmod 0755 "$top/git_oracle.py" "$top/cordon"
  (cd "$top/unpriv" && setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
    env -i PATH="$PATH" HOME="$top/unpriv" LC_ALL=C \
    "$PY" "$top/git_oracle.py" fuzz --cordon "$top/cordon" --dir "$top/unpriv/o" \
    --seeds "${CORDON_ORACLE_SEEDS:+$CORDON_ORACLE_SEEDS,}$FS_SEEDS" --no-entry-control \
    --seconds "$SECONDS_FS" --control 0 --label "$type, uid 65534" "${KEEP[@]}") >"$CT/unpriv.log" 2>&1 || rc=1
  cat "$CT/unpriv.log"
  [ "$rc" = 0 ] || die "the git oracle found a way on $type: $(cat "$CT/root.log" "$CT/unpriv.log" | grep -E '^# (FINDING|CONTROL FAILED)' | sed 's/ (replay.*//' | tr '\n' ' ')"
}

t_btrfs() { on_loop_fs btrfs mkfs.btrfs btrfs-progs; }
t_xfs() { on_loop_fs xfs mkfs.xfs xfsprogs; }

run_case regression_seeds t_regression_seeds
run_case random t_random
run_case landlock t_landlock
run_case btrfs t_btrfs
run_case xfs t_xfs
finish
