#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The compatibility suite of cordon's bwrap (doc/bwrap.md), option by option from
# bubblewrap 0.8-0.11's manual: each option's effect, its order semantics, exit statuses
# and bwrap's own messages, run through Debian's /usr/bin/bwrap and through cordon in
# the same case and compared (stdout and exit status; stderr too where both print
# bwrap's message); the options cordon refuses, refused by name; those newer than the
# installed bubblewrap (--level-prefix, ...), checked on cordon alone.  As root and as
# uid 65534.
. "$(dirname "$0")/lib.sh"
require_cordon

REAL=/usr/bin/bwrap
need_real() {
  [ -x "$REAL" ] && "$REAL" --ro-bind / / true 2>/dev/null ||
    skip_case "Debian's $REAL is missing or does not run here (as uid $(id -u)): nothing to compare with"
}

# same [--stderr] ARG...: the same line through both; stdout and exit status equal (and
# stderr, with --stderr).  REAL_OUT, REAL_RC, REAL_ERR: bubblewrap's; OUT, RC, ERR: cordon's.
same() {
  local witherr=0
  [ "$1" = --stderr ] && { witherr=1; shift; }
  REAL_RC=0
  REAL_OUT=$("$REAL" "$@" 2>"$CT/real.err" </dev/null) || REAL_RC=$?
  REAL_ERR=$(cat "$CT/real.err")
  crun bwrap "$@"
  [ "$RC" = "$REAL_RC" ] ||
    die "bwrap $(_argstr "$@"): bubblewrap exits $REAL_RC ($(_one_line <<<"$REAL_ERR")), cordon $(last_run)"
  [ "$OUT" = "$REAL_OUT" ] ||
    die "bwrap $(_argstr "$@"): bubblewrap prints '$(_one_line <<<"$REAL_OUT")', cordon '$(_one_line <<<"$OUT")'"
  [ "$witherr" = 0 ] || [ "$ERR" = "$REAL_ERR" ] ||
    die "bwrap $(_argstr "$@"): bubblewrap says '$(_one_line <<<"$REAL_ERR")', cordon '$(_one_line <<<"$ERR")'"
}

# Is OPTION known to the installed bubblewrap (0.8 has no --level-prefix, ...)?
real_knows() { ! "$REAL" "$1" 2>&1 </dev/null | grep -q "Unknown option $1"; }

HOST=(--ro-bind / / --dev /dev --proc /proc)

t_help_version() {
  need_real
  same sh -c true # (a positive control of the comparison itself)
  crun bwrap --help
  [ "$RC" = 0 ] || die "--help: $(last_run)"
  assert_eq "$(head -n 1 <<<"$OUT")" "$("$REAL" --help | head -n 1 | sed "s,^usage: $REAL ,usage: bwrap ,")" "--help's first line"
  # every option --help lists is taken (none of them says Unknown option)
  local o
  for o in $(sed -n 's/^    \(--[a-z0-9-]*\).*/\1/p' <<<"$OUT"); do
    crun bwrap "$o"
    assert_not_contains "$ERR" "Unknown option" "$o, listed by --help"
    assert_not_contains "$ERR" "is not supported" "$o, listed by --help"
  done
  crun bwrap --version
  [ "$RC" = 0 ] || die "--version: $(last_run)"
  assert_contains "$OUT" "bubblewrap "
}
run_case help_version t_help_version

t_messages() {
  need_real
  # bwrap's own messages, word for word, and exit status 1
  same --stderr --no-such-option true
  same --stderr --bind /
  same --stderr --ro-bind / / --perms 700 --ro-bind /usr /usr true
  same --stderr --ro-bind / / --size 100 --dir /x true
  same --stderr "${HOST[@]}" --hostname h true
  same --stderr --ro-bind / / --info-fd x true
  same --stderr --ro-bind / / --file x /f true
  same "${HOST[@]}" --chdir /nonexistent-dir true
  same --stderr "${HOST[@]}" --as-pid-1 true
  # exit statuses: the command's own, 128+N for a signal, 1 for one not found
  same "${HOST[@]}" sh -c 'exit 7'
  same "${HOST[@]}" sh -c 'kill -TERM $$'
  same "${HOST[@]}" /nonexistent-command
  [ "$RC" = 1 ] || die "a command not found: $(last_run)"
}
run_case messages t_messages

t_namespaces() {
  need_real
  local o
  for o in --unshare-user --unshare-user-try --unshare-ipc --unshare-pid --unshare-uts --unshare-cgroup \
    --unshare-cgroup-try --new-session --die-with-parent "--unshare-pid --as-pid-1" "--cap-drop ALL"; do
    # shellcheck disable=SC2086  # the option and its argument
    same "${HOST[@]}" $o sh -c 'echo ran'
  done
  # the network: none but loopback, or the host's
  same "${HOST[@]}" --unshare-net sh -c 'grep -c : /proc/net/dev'
  same "${HOST[@]}" --unshare-all sh -c 'grep -c : /proc/net/dev'
  same "${HOST[@]}" --unshare-all --share-net sh -c 'grep -c : /proc/net/dev'
  # --hostname in the sandbox's UTS namespace
  same "${HOST[@]}" --unshare-uts --hostname sandbox-host hostname
  # --cap-add CAP_SETFCAP after --cap-drop ALL: that one capability, effective
  same "${HOST[@]}" --unshare-user --cap-drop ALL --cap-add CAP_SETFCAP sh -c 'grep CapEff /proc/self/status'
  # --uid/--gid: the caller's own (cordon refuses another: t_refused)
  same "${HOST[@]}" --unshare-user --uid "$(id -u)" --gid "$(id -g)" sh -c 'id -u; id -g'
  # --disable-userns (bubblewrap 0.8): no user namespace inside
  if real_knows --disable-userns; then
    same "${HOST[@]}" --unshare-user --disable-userns sh -c 'unshare -U true 2>/dev/null && echo nested || echo refused'
    assert_eq "$OUT" refused
  fi
}
run_case namespaces t_namespaces

t_env_chdir_args() {
  need_real
  same "${HOST[@]}" --setenv A 1 --setenv B 2 --unsetenv A --setenv C 3 sh -c 'echo "${A-unset} ${B-unset} ${C-unset}"'
  same "${HOST[@]}" --setenv A 1 --clearenv --setenv B 2 /usr/bin/env
  same "${HOST[@]}" --chdir /usr/share sh -c pwd
  same "${HOST[@]}" --chdir /usr --chdir /etc sh -c pwd
  # --args FD: NUL-separated arguments in the option's place, twice
  printf '%s\0' --setenv A from-fd >"$CT/args1"
  printf '%s\0' --chdir /usr >"$CT/args2"
  REAL_RC=0
  REAL_OUT=$("$REAL" "${HOST[@]}" --args 3 --args 4 sh -c 'echo "$A $PWD"' 3<"$CT/args1" 4<"$CT/args2") || REAL_RC=$?
  local out rc=0
  out=$("$CORDON" bwrap "${HOST[@]}" --args 3 --args 4 sh -c 'echo "$A $PWD"' 3<"$CT/args1" 4<"$CT/args2" 2>"$CT/err") || rc=$?
  assert_eq "$rc $out" "$REAL_RC $REAL_OUT" "--args"
  assert_eq "$out" "from-fd /usr"
}
run_case env_chdir_args t_env_chdir_args

t_mounts_in_order() {
  need_real
  mkdir -p "$WS/sub"
  echo hi >"$WS/sub/f"
  # a later read-only bind covers part of a writable one, and the reverse
  same "${HOST[@]}" --bind "$WS" "$WS" --ro-bind "$WS/sub" "$WS/sub" sh -c "echo a >$WS/a && echo wrote-a; echo b >$WS/sub/b 2>/dev/null || echo ro-b"
  rm -f "$WS/a"
  same "${HOST[@]}" --ro-bind "$WS/sub" "$WS/sub" --bind "$WS" "$WS" sh -c "echo b >$WS/sub/b && echo wrote-b"
  rm -f "$WS/sub/b"
  # --remount-ro of an earlier bind
  same "${HOST[@]}" --bind "$WS" "$WS" --remount-ro "$WS" sh -c "echo a >$WS/a 2>/dev/null || echo ro"
  # -try: a missing source skipped; without: bwrap's failure
  same "${HOST[@]}" --ro-bind-try /nonexistent-src /nonexistent-src sh -c 'echo skipped'
  same "${HOST[@]}" --bind-try /nonexistent-src /nonexistent-src sh -c 'echo skipped'
  same "${HOST[@]}" --ro-bind /nonexistent-src /nonexistent-src true
  # a /dev/null or an empty directory over a path hides it
  mkdir "$CT/empty"
  same "${HOST[@]}" --ro-bind "$CT/empty" "$WS/sub" sh -c "ls -A $WS/sub | wc -l"
  same "${HOST[@]}" --ro-bind /dev/null "$WS/sub/f" sh -c "head -c 10 $WS/sub/f 2>/dev/null | wc -c"
  # a tmpfs covers what earlier options put below it; a later one goes on top
  same "${HOST[@]}" --bind "$WS" "$WS" --tmpfs "$WS" sh -c "ls -A $WS | wc -l"
  same "${HOST[@]}" --tmpfs "$WS" --ro-bind "$WS/sub" "$WS/sub" sh -c "cat $WS/sub/f"
}
run_case mounts_in_order t_mounts_in_order

t_made() {
  need_real
  local base=(--ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64
    --proc /proc --dev /dev)
  [ -e /lib64 ] || base=(--ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib --proc /proc --dev /dev)
  # --perms and --size apply to the next option, in either order
  same "${base[@]}" --perms 0750 --tmpfs /t --tmpfs /u sh -c 'stat -c "%a %n" /t /u'
  same "${base[@]}" --size 65536 --perms 700 --tmpfs /t sh -c 'stat -c %a /t; df -B1 --output=size /t | tail -n 1'
  same "${base[@]}" --perms 700 --size 65536 --tmpfs /t sh -c 'stat -c %a /t; df -B1 --output=size /t | tail -n 1'
  # --dir, its --perms, one that exists (its mode unchanged), one inside a --tmpfs
  same "${base[@]}" --dir /x --perms 700 --dir /y --dir /usr --tmpfs /t --dir /t/d sh -c 'stat -c "%a %n" /x /y /usr /t/d; touch /x/f /t/d/f && echo writable'
  # --file, --bind-data, --ro-bind-data: content and mode (--perms before, --chmod after)
  printf 'one\n' >"$CT/d1"
  printf 'two\n' >"$CT/d2"
  printf 'three\n' >"$CT/d3"
  local script='exec 2>&1; stat -c "%a %n" /etc/f /t/b /etc/r; cat /etc/f /t/b /etc/r; echo x >>/t/b && echo b-writable; echo x >>/etc/r 2>/dev/null || echo r-read-only'
  REAL_RC=0
  REAL_OUT=$("$REAL" "${base[@]}" --tmpfs /t --perms 640 --file 3 /etc/f --bind-data 4 /t/b --ro-bind-data 5 /etc/r \
    --chmod 604 /t/b sh -c "$script" 3<"$CT/d1" 4<"$CT/d2" 5<"$CT/d3" 2>"$CT/real.err") || REAL_RC=$?
  local out rc=0
  out=$("$CORDON" bwrap "${base[@]}" --tmpfs /t --perms 640 --file 3 /etc/f --bind-data 4 /t/b --ro-bind-data 5 /etc/r \
    --chmod 604 /t/b sh -c "$script" 3<"$CT/d1" 4<"$CT/d2" 5<"$CT/d3" 2>"$CT/cordon.err") || rc=$?
  check_sanitizer "$CT/cordon.err" "cordon bwrap --file ..."
  assert_eq "$rc $out" "$REAL_RC $REAL_OUT" "--file, --bind-data, --ro-bind-data, --chmod"
  # --chmod of a --tmpfs; --symlink in the empty root and in a tmpfs
  same "${base[@]}" --tmpfs /t --chmod 1777 /t sh -c 'stat -c %a /t'
  same "${base[@]}" --tmpfs /t --symlink /usr/share /t/l --symlink /t/l /s sh -c 'readlink /t/l /s; ls /s/ >/dev/null && echo resolves'
}
run_case made t_made

t_fds() {
  need_real
  # --info-fd and --json-status-fd: bwrap's documents (the namespaces may differ: cordon
  # always makes its own), the exit code at the end
  local r c
  r=$("$REAL" "${HOST[@]}" --unshare-pid --json-status-fd 3 sh -c 'exit 4' 3>&1 >/dev/null) || true
  c=$("$CORDON" bwrap "${HOST[@]}" --unshare-pid --json-status-fd 3 sh -c 'exit 4' 3>&1 >/dev/null) || true
  assert_eq "$(tail -n 1 <<<"$c")" "$(tail -n 1 <<<"$r")" "--json-status-fd's last line"
  assert_contains "$(head -n 1 <<<"$c")" '{ "child-pid": '
  c=$("$CORDON" bwrap "${HOST[@]}" --unshare-pid --info-fd 3 true 3>&1 >/dev/null) || true
  assert_contains "$c" '"child-pid": '
  # --block-fd: the command starts once the FD has data (or its end)
  printf go >"$CT/go"
  same "${HOST[@]}" --block-fd 3 sh -c 'echo started' 3<"$CT/go"
  # --sync-fd: kept open while the sandbox runs, never passed to the command
  same "${HOST[@]}" --sync-fd 3 sh -c 'echo ran' 3<"$CT/go"
  # --lock-file: a read lock on the file while the sandbox runs
  : >"$WS/lock"
  same "${HOST[@]}" --lock-file "$WS/lock" sh -c 'echo locked'
  local held
  held=$("$CORDON" bwrap "${HOST[@]}" --bind "$WS" "$WS" --lock-file "$WS/lock" "$PY" -c '
import fcntl, os, sys
f = open(sys.argv[1], "r+")
try:
    fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB); print("free")
except OSError:
    print("held")' "$WS/lock" 2>&1) || true
  assert_contains "$held" "held" "the lock while the command runs"
}
run_case fds t_fds

# Newer options than Debian's bubblewrap (0.8) knows: cordon alone.
t_newer() {
  expect_exit 1 bwrap --level-prefix --no-such-option true
  assert_eq "$ERR" "<3>bwrap: Unknown option --no-such-option"
  expect_exit 1 bwrap --ro-bind / / --level-prefix --bind /
  assert_eq "$ERR" "<3>bwrap: --bind takes two arguments"
}
run_case newer t_newer

# Refused by name, exit 1: what cordon cannot give with bwrap's meaning without weakening
# the sandbox (doc/bwrap.md says why, one by one).
t_refused() {
  local o
  for o in "--dev-bind / /" "--dev-bind-try / /" "--bind-fd 3 /x" "--ro-bind-fd 3 /x" "--userns 3" "--userns2 3" \
    "--pidns 3" "--assert-userns-disabled" "--userns-block-fd 3" "--overlay-src /a" "--overlay /a /b /c" \
    "--tmp-overlay /a" "--ro-overlay /a" "--exec-label l" "--file-label l" "--mqueue /m" "--seccomp 3" \
    "--add-seccomp-fd 3" "--argv0 x"; do
    # shellcheck disable=SC2086  # the option and its arguments
    expect_exit 1 bwrap --ro-bind / / $o true
    assert_contains "$ERR" "bwrap: ${o%% *} is not supported by cordon's bwrap (see doc/bwrap.md)"
  done
  expect_exit 1 bwrap --ro-bind / / --unshare-user --uid 4242 true
  assert_contains "$ERR" "bwrap: --uid 4242: cordon's bwrap runs the command as your own uid"
  expect_exit 1 bwrap --ro-bind / / --cap-add CAP_SYS_ADMIN true
  assert_contains "$ERR" "bwrap: --cap-add CAP_SYS_ADMIN: cordon's bwrap gives the command no capability but CAP_SETFCAP"
  expect_exit 1 bwrap --ro-bind / / --bind "$WS" "$WS" --file 3 "$WS/f" true 3</dev/null
  assert_contains "$ERR" "not in a host directory"
  assert_absent "$WS/f"
  # --dir of a missing path in a writable bind: bwrap makes it on the host, cordon refuses
  # (and, in bwrap's exact mode, makes it as bwrap does)
  expect_exit 1 bwrap --ro-bind / / --bind "$WS" "$WS" --dir "$WS/d/e" true
  assert_contains "$ERR" "--dir $WS/d/e: cordon's bwrap makes no directory in a host directory"
  assert_absent "$WS/d"
  if [ -x "$REAL" ] && "$REAL" --ro-bind / / true 2>/dev/null; then
    CORDON_BWRAP_EXACT=1 crun bwrap --ro-bind / / --bind "$WS" "$WS" --dir "$WS/d/e" sh -c "touch $WS/d/e/f && echo made"
    assert_eq "$RC $OUT" "0 made" "--dir in exact mode"
    assert_exists "$WS/d/e/f"
    rm -r "$WS/d"
    "$REAL" --ro-bind / / --bind "$WS" "$WS" --dir "$WS/d/e" true
    assert_exists "$WS/d/e" "bubblewrap's --dir (the positive control)"
  fi
  expect_exit 1 bwrap --ro-bind / / --chmod 4755 /usr/bin true
  assert_contains "$ERR" "bwrap: --chmod 4755 /usr/bin: cordon's bwrap changes the mode only of"
}
run_case refused t_refused

finish
