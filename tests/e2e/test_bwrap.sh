#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cordon as bubblewrap (doc/bwrap.md): `cordon bwrap ARGS` and a link named bwrap speak
# bwrap's command line; each supported option's effect and order compared with Debian's
# /usr/bin/bwrap where it runs here, the refusals, cordon's additions, and stock Codex
# with cordon's bwrap first on PATH.
. "$(dirname "$0")/lib.sh"
require_cordon

REAL_BWRAP=/usr/bin/bwrap
REAL_OK=0
if [ -x "$REAL_BWRAP" ] && "$REAL_BWRAP" --ro-bind / / true 2>/dev/null; then REAL_OK=1; fi
need_real() { [ "$REAL_OK" = 1 ] || skip_case "Debian's $REAL_BWRAP is missing or does not run here (as uid $(id -u))"; }

# both ARG...: the same bwrap line through /usr/bin/bwrap and through cordon; the same
# stdout and exit status (stderr may differ: the messages are each one's own).
both() {
  local rrc=0
  REAL_OUT=$("$REAL_BWRAP" "$@" 2>"$CT/real.err") || rrc=$?
  crun bwrap "$@"
  [ "$RC" = "$rrc" ] || die "bwrap $(_argstr "$@"): /usr/bin/bwrap exits $rrc ($(head -c 200 "$CT/real.err" | _one_line)), cordon's bwrap $(last_run)"
  [ "$OUT" = "$REAL_OUT" ] || die "bwrap $(_argstr "$@"): /usr/bin/bwrap prints '$(printf '%s' "$REAL_OUT" | _one_line)', cordon's '$(printf '%s' "$OUT" | _one_line)'"
}

t_help() {
  expect_ok bwrap --help
  assert_contains "$OUT" "usage: bwrap [OPTIONS...] [--] COMMAND [ARGS...]"
  assert_contains "$OUT" "    --ro-bind SRC DEST           Bind mount the host path SRC readonly on DEST (SRC = DEST;"
  assert_contains "$OUT" "    --as-pid-1                   Accepted: cordon's own PID 1 supervises the command"
  assert_contains "$OUT" "    --proc DEST                  Mount new procfs on DEST (/proc only)"
  assert_contains "$OUT" "--perms OCTAL"
  assert_contains "$OUT" "--dir DEST"
  assert_contains "$OUT" "--file FD DEST"
  assert_not_contains "$OUT" "--dev-bind"
  assert_contains "$OUT" "--cap-add CAP"
  assert_contains "$OUT" "--symlink SRC DEST"
  assert_not_contains "$OUT" "--argv0"
  expect_ok bwrap --version
  assert_contains "$OUT" "bubblewrap 0.8.0"
  # through a link named bwrap, too
  ln -s "$CORDON" "$CT/bwrap"
  "$CT/bwrap" --version | grep -q '^bubblewrap ' || die "a link named bwrap does not speak bwrap"
}
run_case help_and_version t_help

t_refused() {
  local o
  for o in "--seccomp 3" "--add-seccomp-fd 3" "--dev-bind / /" "--mqueue /m" "--userns 3" "--bind-fd 3 /x" \
    "--argv0 x" "--userns-block-fd 3" "--pidns 3" "--overlay-src /a" "--tmp-overlay /a"; do
    # shellcheck disable=SC2086  # the option and its arguments
    expect_exit 1 bwrap $o true
    assert_contains "$ERR" "bwrap: ${o%% *} is not supported by cordon's bwrap"
  done
  expect_exit 1 bwrap --no-such-option true
  assert_eq "$ERR" "bwrap: Unknown option --no-such-option"
  expect_exit 1 bwrap --perms 700 --ro-bind / / true
  assert_eq "$ERR" "bwrap: --perms must be followed by an option that creates a file"
  expect_exit 1 bwrap --size 4096 --ro-bind / / true
  assert_eq "$ERR" "bwrap: --size must be followed by --tmpfs"
  local s
  for s in 0 " -5" "+4096" " 4096" 4k ""; do
    expect_exit 1 bwrap --size "$s" --tmpfs /tmp true
    assert_eq "$ERR" "bwrap: --size takes a non-zero number of bytes"
  done
  expect_ok bwrap --ro-bind / / --size 4096 --tmpfs /mnt --cordon-explain true
  assert_contains "$OUT" "[mode 755; 4096 bytes]"
  # a size for the root, which bwrap would give a writable root: refused, not dropped
  expect_exit 1 bwrap --size 1048576 --tmpfs / --ro-bind /usr /usr true
  assert_contains "$ERR" "bwrap: --size 1048576 --tmpfs /: cordon's bwrap root is its own read-only tmpfs"
  expect_ok bwrap --tmpfs / --ro-bind /usr /usr --cordon-explain true
  expect_exit 1 bwrap --ro-bind /
  assert_eq "$ERR" "bwrap: --ro-bind takes two arguments"
  expect_exit 1 bwrap --cap-drop ALL --cap-add CAP_NET_RAW true
  assert_eq "$ERR" "bwrap: --cap-add CAP_NET_RAW: cordon's bwrap gives the command no capability but CAP_SETFCAP (see doc/bwrap.md)"
  expect_exit 1 bwrap --ro-bind / / --bind "$WS" "$WS" --symlink t "$WS/l" true
  assert_contains "$ERR" "refusing to create the symlink $WS/l in a host directory"
  assert_absent "$WS/l"
  expect_exit 1 bwrap --bind / / true
  assert_contains "$ERR" "only read-only"
}
run_case refused t_refused

t_exit_status() {
  need_real
  both --ro-bind / / sh -c 'exit 7'
  both --ro-bind / / sh -c 'kill -9 $$'
  both --ro-bind / / /no/such/command
  both --ro-bind /no/such/source /x true
  assert_contains "$ERR" "bwrap: Can't find source path /no/such/source"
  both --ro-bind / / --ro-bind-try /no/such/source /x sh -c 'echo ok'
}
run_case exit_status t_exit_status

t_order() {
  need_real
  local o
  o=$(scratch_outside_tmp)
  echo host >"$o/f"
  # a later mount covers an earlier one at or below its path
  both --ro-bind / / --bind "$o" "$o" --ro-bind "$o" "$o" sh -c "echo x >$o/f 2>/dev/null; cat $o/f"
  both --ro-bind / / --ro-bind "$o" "$o" --bind "$o" "$o" sh -c "echo w >$o/f; cat $o/f"
  echo host >"$o/f"
  mkdir -p "$o/sub"
  both --ro-bind / / --tmpfs "$o/sub" --bind "$o" "$o" sh -c "ls $o"
  both --ro-bind / / --bind "$o" "$o" --perms 700 --tmpfs "$o/sub" sh -c "stat -c %a $o/sub; touch $o/sub/t; ls $o/sub"
  both --ro-bind / / --proc /proc --size 1048576 --perms 750 --tmpfs "$o/sub" sh -c "stat -c %a $o/sub; df -B1 --output=size $o/sub | tail -1"
  both --ro-bind / / --bind "$o" "$o" --tmpfs "$o/sub" --remount-ro "$o/sub" sh -c "touch $o/sub/t 2>/dev/null || echo refused; ls $o/sub"
  # /dev/null over a file: bwrap's nodev bind cannot be opened, cordon's is an empty,
  # read-only file (doc/bwrap.md, "Differences")
  crun bwrap --ro-bind / / --bind "$o" "$o" --ro-bind /dev/null "$o/f" sh -c "cat $o/f; echo z >$o/f || echo ro"
  assert_eq "$OUT" "ro" "$(last_run)"
  assert_file_content "$o/f" "host"
  # symlinks in the empty root, where a later one below another's path goes through it
  both --tmpfs / --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 \
    --symlink /nowhere /opt sh -c 'readlink /bin /opt; test -e /opt || echo dangling'
  # the root: bwrap's own tmpfs, or the host's read-only
  both --tmpfs / --ro-bind /usr /usr --ro-bind /etc /etc --ro-bind-try /lib /lib --ro-bind-try /lib64 /lib64 \
    --ro-bind-try /bin /bin --chdir /usr sh -c 'pwd; test -e /root || echo no-root'
}
run_case order t_order

# --args FD, --info-fd, --json-status-fd: the same documents as bwrap's (cordon makes more
# namespaces, so it may name more of them; the keys bwrap names are there too).
t_fds() {
  need_real
  printf -- '--ro-bind\0/\0/\0--setenv\0V\0from args\0' >"$CT/args"
  # (each with descriptors of its own: --args reads to the end)
  assert_eq "$("$REAL_BWRAP" --args 3 --args 4 sh -c 'echo "$V"' 3<"$CT/args" 4<"$CT/args")" "from args"
  crun bwrap --args 3 --args 4 sh -c 'echo "$V"' 3<"$CT/args" 4<"$CT/args"
  assert_eq "$OUT" "from args" "$(last_run)"
  crun bwrap --args 9 true
  assert_eq "$RC" 1 && assert_contains "$ERR" "bwrap: Can't read --args data"
  "$REAL_BWRAP" --ro-bind / / --unshare-net --info-fd 3 --json-status-fd 4 sh -c 'exit 3' 3>"$CT/ri" 4>"$CT/rs" || true
  crun bwrap --ro-bind / / --unshare-net --info-fd 3 --json-status-fd 4 sh -c 'exit 3' 3>"$CT/ci" 4>"$CT/cs"
  assert_eq "$RC" 3
  host_py 'import json, sys
ri, ci = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
rs = [json.loads(l) for l in open(sys.argv[3])]
cs = [json.loads(l) for l in open(sys.argv[4])]
assert set(ri) <= set(ci), (ri, ci)
assert ci["child-pid"] > 0 and set(cs[0]) == set(ci) and cs[0]["child-pid"] == ci["child-pid"], (ci, cs)
assert [set(d) for d in rs[1:]] == [set(d) for d in cs[1:]] == [{"exit-code"}], (rs, cs)
assert cs[1]["exit-code"] == rs[1]["exit-code"] == 3, (rs, cs)
assert open(sys.argv[2]).read().startswith("{\n    \"child-pid\": ")' "$CT/ri" "$CT/ci" "$CT/rs" "$CT/cs" 2>"$CT/py.err" ||
    die "the JSON documents differ: $(_one_line <"$CT/py.err")"
}
run_case fds t_fds

t_env_and_dirs() {
  need_real
  both --ro-bind / / --setenv A 1 --setenv B 2 --unsetenv A --setenv C 3 sh -c 'echo "${A-unset} $B $C"'
  both --ro-bind / / --setenv A 1 --clearenv --setenv B 2 /usr/bin/env
  both --ro-bind / / --chdir /usr sh -c pwd
  both --ro-bind / / --chdir usr sh -c pwd
  both --ro-bind / / --unshare-net --proc /proc sh -c 'tail -n +3 /proc/net/dev | wc -l'
  both --ro-bind / / --unshare-all --share-net --proc /proc sh -c 'test "$(tail -n +3 /proc/net/dev | wc -l)" -gt 1 && echo shared'
  both --ro-bind / / --unshare-user --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup-try --new-session \
    --die-with-parent --as-pid-1 --cap-drop ALL --dev /dev --proc /proc sh -c 'echo ok; test -c /dev/null'
}
run_case env_and_dirs t_env_and_dirs

# The lines the peers sent (tests/e2e/bwrap/*.args), replayed with their paths moved into
# scratch directories: the same output and status through both, every mount target made
# beforehand (as Codex does), so that bwrap creates nothing either.
replay_line() { # FILE WS O: the arguments, one an element of LINE
  local l
  LINE=()
  while IFS= read -r l; do
    case $l in '#'*) continue ;; esac
    l=${l//\/tmp\/bwws/$2}
    l=${l//\/tmp/$3}
    LINE+=("$l")
  done <"$E2E_DIR/bwrap/$1"
}
t_codex_line() {
  need_real
  local ws o n
  ws=$(scratch_outside_tmp)
  o=$(scratch_outside_tmp)
  mkdir -p "$ws/.git" "$o/codex-daemon-0" "$o/codex-bwrap-synthetic-mount-targets-0"
  for n in .git .agents .codex .aws; do mkdir -p "$o/$n" "$ws/$n"; done
  replay_line codex-0.169-workspace-write.args "$ws" "$o"
  both "${LINE[@]}" sh -c "echo w >$ws/f && cat $ws/f; echo t >$o/t && cat $o/t; echo x >/etc/x 2>/dev/null || echo ro;
    echo c >$ws/.codex/x 2>/dev/null || echo codex-ro; ls $o/codex-daemon-0 2>&1 | head -c 0; cd $ws && pwd"
  replay_line codex-0.169-probe.args "$ws" "$o"
  # (not `ls /`: cordon's empty root differs, doc/bwrap.md "Differences")
  both "${LINE[@]}" sh -c 'test -x /usr/bin/true && echo ok; echo x >/usr/x 2>/dev/null || echo ro; test -e /home || echo no-home'
}
run_case codex_line t_codex_line

# cordon's additions: where bwrap creates a missing mount point on the host and lets the
# command create agent and git names, cordon holds them.
t_additions() {
  local before
  git init -q "$WS"
  before=$(cd "$WS" && ls -A | sort)
  crun bwrap --ro-bind / / --bind "$WS" "$WS" --ro-bind /dev/null "$WS/.vscode" --ro-bind /dev/null "$WS/.bashrc" \
    sh -c 'echo in >inside.txt; echo x >.vscode 2>/dev/null || echo held; mkdir .codex 2>/dev/null || echo codex-refused;
           echo h >.git/hooks/pre-commit 2>/dev/null || echo hook-refused; echo y >/etc/cordon-test 2>/dev/null || echo ro'
  [ "$RC" = 0 ] || die "$(last_run)"
  assert_eq "$OUT" "held
codex-refused
hook-refused
ro"
  assert_file_content "$WS/inside.txt" "in"
  rm "$WS/inside.txt"
  assert_eq "$(cd "$WS" && ls -A | sort)" "$before" "cordon's bwrap left something in the workspace"
  assert_absent "$WS/.git/hooks/pre-commit"
}
run_case additions t_additions

bwrap_check() { host_py 'import json, sys; c = json.load(open(sys.argv[1]))["checks"]["bwrap_link"]; print(c["ok"], c["fix"])' "$OUTF"; }
t_check() {
  local bin
  bin=$(scratch_outside_tmp)
  cp "$CORDON" "$bin/bwrap"
  PATH=$bin:$PATH crun check --json
  assert_eq "$(bwrap_check)" "True None" "check, with a copy of cordon first on PATH"
  PATH=/usr/bin:/bin crun check --json
  assert_contains "$(bwrap_check)" "False cordon install-bwrap ~/.local/bin"
}
run_case check_link t_check

# CORDON_BWRAP_EXACT=1: cordon's additions off, so bwrap's own behaviour, mount points made
# on the host included; the same output and the same files left as /usr/bin/bwrap's.
t_exact() {
  need_real
  local o r c
  o=$(scratch_outside_tmp)
  for r in real cordon; do
    rm -rf "${o:?}/ws"
    mkdir "$o/ws"
    git init -q "$o/ws"
    set -- --ro-bind / / --bind "$o/ws" "$o/ws" --ro-bind /dev/null "$o/ws/.vscode" --perms 555 --tmpfs "$o/ws/.d/sub" \
      --remount-ro "$o/ws/.d/sub" sh -c "cd $o/ws && mkdir .codex && echo made; echo h >.git/hooks/x && echo hook;
        stat -c %a .d/sub; echo >/etc/x 2>/dev/null || echo ro; echo x >.vscode 2>/dev/null || echo vscode-ro"
    if [ $r = real ]; then
      REAL_OUT=$("$REAL_BWRAP" "$@" 2>"$CT/real.err") || die "/usr/bin/bwrap: $(_one_line <"$CT/real.err")"
      c=$(cd "$o/ws" && find . -path ./.git/objects -prune -o -print | sort | xargs stat -c '%n %a')
    else
      CORDON_BWRAP_EXACT=1 crun bwrap "$@"
      assert_eq "$RC" 0 "$(last_run)"
      assert_eq "$OUT" "$REAL_OUT" "the output in exact mode"
      assert_eq "$(cd "$o/ws" && find . -path ./.git/objects -prune -o -print | sort | xargs stat -c '%n %a')" "$c" \
        "what exact mode leaves on the host"
    fi
  done
  CORDON_BWRAP_EXACT=1 crun bwrap --ro-bind / / --cordon-explain true
  assert_contains "$OUT" "seccomp       none: cordon's protections are off"
  assert_not_contains "$OUT" "host service sockets"
}
run_case exact t_exact

# CORDON_BWRAP_EXACT: only "1" turns the protections off, read from cordon's own
# environment only (not a --setenv), and never passed on to the command (a bwrap the
# command runs keeps its protections unless its own caller turns them off).
t_exact_switch() {
  local v
  CORDON_BWRAP_EXACT=1 crun bwrap --ro-bind / / --cordon-explain true
  assert_eq "$RC" 0 "$(last_run)"
  assert_contains "$OUT" "seccomp       none: cordon's protections are off"
  for v in 0 yes true " 1" "1 " ""; do
    CORDON_BWRAP_EXACT=$v crun bwrap --ro-bind / / --cordon-explain true
    assert_eq "$RC" 0 "$(last_run)"
    assert_contains "$OUT" "creation control (the supervisor performs"
    assert_not_contains "$OUT" "protections are off" "CORDON_BWRAP_EXACT='$v'"
  done
  crun bwrap --ro-bind / / --setenv CORDON_BWRAP_EXACT 1 --cordon-explain true
  assert_contains "$OUT" "creation control (the supervisor performs"
  assert_not_contains "$OUT" "protections are off" "--setenv CORDON_BWRAP_EXACT 1"
  CORDON_BWRAP_EXACT=1 CORDON_TEST_PASSED=p crun bwrap --ro-bind / / sh -c 'echo "${CORDON_BWRAP_EXACT-unset} $CORDON_TEST_PASSED"'
  assert_eq "$RC" 0 "$(last_run)"
  assert_eq "$OUT" "unset p" "the command's environment"
  CORDON_BWRAP_EXACT=1 crun bwrap --ro-bind / / --setenv CORDON_BWRAP_EXACT 1 sh -c 'echo "${CORDON_BWRAP_EXACT-unset}"'
  assert_eq "$OUT" "1" "a --setenv of it"
}
run_case exact_switch t_exact_switch

# --cap-add CAP_SETFCAP (sandbox-runtime as root): the command keeps it, so it can map uid
# 0 into a nested user namespace as under bwrap, but writes no extended attribute (a file
# capability on a host file) unless CORDON_BWRAP_EXACT=1; other capabilities are refused.
t_cap_setfcap() {
  command -v unshare >/dev/null || skip_case "unshare (util-linux) is missing"
  local line=(--ro-bind / / --bind "$WS" "$WS" --dev /dev --proc /proc --unshare-user --unshare-pid --cap-drop ALL)
  both "${line[@]}" --cap-add CAP_SETFCAP -- unshare -U -r id -u
  assert_eq "$OUT" "0" "uid 0 mapped in a nested namespace"
  # the positive control: without the capability, neither maps uid 0 as root
  if [ "$(id -u)" = 0 ]; then
    expect_exit 1 bwrap "${line[@]}" -- unshare -U -r id -u
    assert_contains "$ERR" "uid_map"
  fi
  expect_ok bwrap "${line[@]}" --cap-add cap_setfcap -- sh -c 'grep CapEff /proc/self/status'
  assert_contains "$OUT" "0000000080000000"
  expect_ok bwrap "${line[@]}" --cap-add CAP_SETFCAP --cap-drop CAP_SETFCAP -- sh -c 'grep CapEff /proc/self/status'
  assert_contains "$OUT" "0000000000000000"
  : >"$WS/f"
  local py='import os
try:
    os.setxattr("f", "user.x", b"1"); print("set")
except OSError as e: print("refused", e.errno)'
  crun bwrap "${line[@]}" --cap-add CAP_SETFCAP --chdir "$WS" -- python3 -c "$py"
  assert_eq "$OUT" "refused 1"
  # the positive control: the same write goes through in bwrap's exact mode (or fails as
  # the file system does, never by cordon's filter) and without the capability
  expect_ok bwrap "${line[@]}" --chdir "$WS" -- python3 -c "$py"
  local without=$OUT
  [ "$without" != "refused 1" ] || die "setxattr is refused without --cap-add too: the check proves nothing"
  CORDON_BWRAP_EXACT=1 crun bwrap "${line[@]}" --cap-add CAP_SETFCAP --chdir "$WS" -- python3 -c "$py"
  assert_eq "$OUT" "$without" "exact mode"
  expect_exit 1 bwrap --cap-add CAP_SYS_ADMIN true
  assert_eq "$ERR" "bwrap: --cap-add CAP_SYS_ADMIN: cordon's bwrap gives the command no capability but CAP_SETFCAP (see doc/bwrap.md)"
  expect_exit 1 bwrap --cap-add ALL true
  assert_contains "$ERR" "--cap-add ALL: cordon's bwrap gives the command no capability but CAP_SETFCAP"
  expect_exit 1 bwrap --cap-add CAP_NOPE true
  assert_eq "$ERR" "bwrap: --cap-add: unknown capability: CAP_NOPE"
  # the order: a later --cap-drop takes back what was added
  expect_ok bwrap --ro-bind / / --cap-add ALL --cap-drop ALL --cap-add CAP_SETFCAP true
}
run_case cap_setfcap t_cap_setfcap

# cordon install-bwrap DIR and cordon check: a file of its own (not a symlink, which Codex
# resolves), found first on PATH as Codex looks; the system's bubblewrap never touched.
t_install_bwrap() {
  local d bin
  d=$(scratch_outside_tmp)
  bin=$d/bin
  expect_ok install-bwrap "$bin"
  assert_contains "$OUT" "installed $bin/bwrap"
  [ -f "$bin/bwrap" ] && [ ! -L "$bin/bwrap" ] || die "$bin/bwrap is not a file of its own"
  "$bin/bwrap" --version | grep -q '^bubblewrap .*(cordon ' || die "the installed bwrap is not cordon's"
  check_bwrap() { PATH=$1 "$CORDON" check --json 2>/dev/null | "$PY" -c 'import json, sys
c = json.load(sys.stdin)["checks"]["bwrap_link"]
print("ok" if c["ok"] else "no", c["detail"])'; }
  assert_contains "$(check_bwrap "$bin:/usr/bin:/bin")" "ok the first bwrap on PATH, $bin/bwrap, is this cordon"
  # again: replaced in place
  expect_ok install-bwrap "$bin"
  # the positive control: a symbolic link to cordon is not enough for Codex, and says so
  mkdir "$d/sl"
  ln -s "$CORDON" "$d/sl/bwrap"
  assert_contains "$(check_bwrap "$d/sl:/usr/bin:/bin")" "no the first bwrap on PATH, $d/sl/bwrap, is a symbolic link to cordon"
  # a bwrap in /tmp or in a relative PATH entry is skipped, as Codex skips it
  assert_contains "$(check_bwrap "/tmp:.:$bin:/usr/bin")" "ok the first bwrap on PATH, $bin/bwrap"
  # the install replaced the symlink form of earlier instructions, but never bubblewrap
  expect_ok install-bwrap "$d/sl"
  [ ! -L "$d/sl/bwrap" ] || die "the symlink was not replaced"
  if [ -x "$REAL_BWRAP" ]; then
    mkdir "$d/sys"
    cp "$REAL_BWRAP" "$d/sys/bwrap"
    expect_exit 125 install-bwrap "$d/sys"
    assert_contains "$ERR" "$d/sys/bwrap is not cordon (bubblewrap itself?): cordon leaves it alone"
    cmp -s "$REAL_BWRAP" "$d/sys/bwrap" || die "install-bwrap changed a bubblewrap"
    assert_contains "$(check_bwrap "$d/sys:$bin")" "no the first bwrap on PATH is $d/sys/bwrap, not this cordon"
  fi
  expect_exit 125 install-bwrap "$CT/under-tmp"
  assert_contains "$ERR" "is under /tmp, where Codex never looks for bwrap"
  assert_absent "$CT/under-tmp"
  # a fresh home has no ~/.local: the parents are made (and, under /tmp, none is left)
  expect_ok install-bwrap "$d/home/.local/bin"
  [ -f "$d/home/.local/bin/bwrap" ] || die "install-bwrap did not make the missing parents"
  expect_exit 125 install-bwrap "$CT/fresh/.local/bin"
  assert_absent "$CT/fresh"
}
run_case install_bwrap t_install_bwrap

t_explain() {
  expect_ok bwrap --ro-bind / / --bind "$WS" "$WS" --perms 700 --tmpfs "$WS/t" --cordon-explain true
  assert_contains "$OUT" "tmpfs    $WS/t"
  assert_contains "$OUT" "[mode 700]"
}
run_case explain t_explain

# Stock Codex (its helper runs the first bwrap on PATH) with cordon's bwrap first.
codex_bin() {
  local c=${CORDON_CODEX_PREFIX:-/opt/cordon-test/codex}/node_modules/.bin/codex
  [ -x "$c" ] && command -v node >/dev/null || skip_case "Codex CLI 0.169 is not installed (CORDON_CODEX=1 ./bootstrap.sh, as CI does)"
  printf '%s\n' "$c"
}
t_codex() {
  local cx bin home ws
  cx=$(codex_bin)
  # a copy outside /tmp: Codex skips a bwrap under /tmp, and resolves a symlink, runs
  # what it points to (cordon) with --help and, not seeing bwrap's, takes its own bundled
  # bubblewrap (doc/bwrap.md)
  bin=$(scratch_outside_tmp)
  cp "$CORDON" "$bin/bwrap"
  # Codex refuses its helper links under /tmp, and the workspace must not be /tmp's
  home=$(scratch_outside_tmp)
  ws=$(scratch_outside_tmp)
  git init -q "$ws"
  cxrun() { (cd "$ws" && HOME=$home PATH=$bin:$PATH timeout 120 "$cx" sandbox -c sandbox_mode=workspace-write -- "$@") >"$CT/cx.out" 2>&1; }
  cxrun true || die "codex sandbox true: $(head -c 400 "$CT/cx.out" | _one_line)"
  cxrun sh -c 'echo in >in.txt' || die "a write inside the workspace: $(head -c 400 "$CT/cx.out" | _one_line)"
  assert_file_content "$ws/in.txt" "in"
  rm "$ws/in.txt"
  ! cxrun sh -c "echo out >$home/out.txt" || die "a write outside the workspace went through"
  assert_absent "$home/out.txt"
  ! cxrun sh -c 'echo h >.git/hooks/pre-commit' || die "a write in .git/hooks went through"
  ! cxrun sh -c 'mkdir .codex' || die "creating .codex went through"
  assert_absent "$ws/.git/hooks/pre-commit"
  [ -z "$(git -C "$ws" status --porcelain)" ] || die "the workspace is not clean: $(git -C "$ws" status --porcelain | _one_line)"
  assert_absent "$ws/.codex"
}
run_case codex t_codex

# sandbox-runtime runs the bwrap first on PATH (as uid 0 with --cap-add CAP_SETFCAP for
# its seccomp helper's nested namespace, which maps uid 0).
t_srt() {
  local srt=${CORDON_SRT_PREFIX:-/opt/cordon-test/srt}/node_modules/.bin/srt bin home ws
  [ -x "$srt" ] && command -v node >/dev/null && command -v rg >/dev/null && command -v socat >/dev/null ||
    skip_case "sandbox-runtime, ripgrep or socat is not installed (CORDON_CODEX=1 ./bootstrap.sh, as CI does)"
  bin=$CT/bin
  mkdir -p "$bin"
  ln -s "$CORDON" "$bin/bwrap"
  home=$(scratch_outside_tmp)
  ws=$(scratch_outside_tmp)
  git init -q "$ws"
  printf '%s\n' '{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}' >"$home/.srt-settings.json"
  (cd "$ws" && HOME=$home PATH=$bin:$PATH timeout 120 "$srt" -c "echo in >in.txt; cat in.txt; echo o >$home/out.txt || echo outside-refused;
     echo v >.vscode || echo vscode-refused; echo h >.git/hooks/x || echo hooks-refused; exit 3") >"$CT/srt.out" 2>"$CT/srt.err" && rc=0 || rc=$?
  [ "$rc" = 3 ] || die "srt: exit $rc, expected 3: $(head -c 400 "$CT/srt.out" "$CT/srt.err" | _one_line)"
  assert_eq "$(cat "$CT/srt.out")" "in
outside-refused
vscode-refused
hooks-refused"
  assert_file_content "$ws/in.txt" "in"
  rm "$ws/in.txt"
  assert_absent "$home/out.txt"
  assert_absent "$ws/.vscode"
  assert_absent "$ws/.git/hooks/x"
  [ -z "$(git -C "$ws" status --porcelain)" ] || die "the workspace is not clean: $(git -C "$ws" status --porcelain | _one_line)"
}
run_case srt t_srt

finish
