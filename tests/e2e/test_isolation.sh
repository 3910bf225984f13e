#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --isolation landlock|namespaces|auto: the Landlock-only mode for hosts without user
# namespaces enforces allow, deny (a split tree), read-only and --network none; it is never
# chosen silently (the default fails naming it; auto says so on stderr and in
# --status-json). A host without user namespaces is made by running cordon inside
# `cordon run --no-nested`, whose seccomp filter refuses them.
. "$(dirname "$0")/lib.sh"

landlock_abi() { "$PY" -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
r = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint(1))
print(r if r > 0 else 0)'; }
ABI=$(landlock_abi)

need_abi() {
  [ "$ABI" -ge "$1" ] || skip_case "Landlock ABI $ABI on this kernel; this case needs ABI $1 ($2)"
}

# cordon's binary and this file's helpers must be visible inside an outer sandbox.
BINDIR=$(dirname "$CORDON")

t_allow_deny_readonly() {
  need_abi 1 "Landlock"
  echo data >"$WS/file"
  mkdir "$WS/sub" "$CT/ro"
  echo ro >"$CT/ro/f"
  crun run --isolation landlock --allow-ro "$CT/ro" --deny "$WS/sub" -- sh -c '
    cat file; echo more >>file && echo "appended ws file"
    cat "$1/ro/f"; (echo x >"$1/ro/f") 2>/dev/null && echo "wrote ro"
    ls sub 2>/dev/null; (echo x >sub/new) 2>/dev/null && echo "wrote denied"
    cat "$1/outside/secret" 2>/dev/null && echo "read outside"
    (echo x >"$1/outside/new") 2>/dev/null && echo "wrote outside"
    echo h >"$HOME/h" && echo t >"$TMPDIR/t" && echo "private dirs writable"
    exit 0' sh "$CT"
  [ "$RC" = 0 ] || die "$(last_run)"
  assert_eq "$OUT" "$(printf 'data\nappended ws file\nro\nprivate dirs writable')" "landlock mode"
  assert_file_content "$WS/file" "$(printf 'data\nmore')"
  assert_file_content "$CT/ro/f" "ro"
  assert_absent "$WS/sub/new"
  assert_absent "$OUTSIDE/new"
  # --read-only: the workspace too
  expect_output "" run --isolation landlock --read-only -- sh -c '(echo x >>file) 2>/dev/null && echo wrote; exit 0'
  assert_file_content "$WS/file" "$(printf 'data\nmore')"
}

t_deny_splits_tree() {
  need_abi 1 "Landlock"
  mkdir -p "$CT/tree/a/secret" "$CT/tree/b"
  echo s >"$CT/tree/a/secret/key"
  echo o >"$CT/tree/a/other"
  crun run --isolation landlock --allow "$CT/tree" --deny "$CT/tree/a/secret" -- sh -c '
    t=$1/tree
    echo b >"$t/b/new" && echo "new file in a sibling tree"
    echo o2 >>"$t/a/other" && echo "existing sibling writable"
    cat "$t/a/secret/key" 2>/dev/null && echo "read the secret"
    (echo x >"$t/a/created") 2>/dev/null && echo "created next to the secret"
    (rm -r "$t/a/secret") 2>/dev/null && echo "removed the secret"
    ls "$t/a" >/dev/null && echo "listed the split directory"
    exit 0' sh "$CT"
  [ "$RC" = 0 ] || die "$(last_run)"
  assert_eq "$OUT" "$(printf 'new file in a sibling tree\nexisting sibling writable\nlisted the split directory')" "split tree"
  assert_absent "$CT/tree/a/created" "entries created later in a split directory stay denied"
  assert_file_content "$CT/tree/a/secret/key" "s"
}

t_base_host() {
  need_abi 1 "Landlock"
  mkdir -p "$CT/home/.ssh"
  echo key >"$CT/home/.ssh/id"
  local blk
  blk=$(find /dev -maxdepth 1 -type b 2>/dev/null | head -n 1)
  crun run --isolation landlock --base host -- sh -c '
    cat "$1/.ssh/id" 2>/dev/null && echo "read a credential store"
    ls / >/dev/null && echo "listed /"
    cat /etc/hostname >/dev/null && echo "read /etc"
    if [ -n "$2" ]; then head -c 1 "$2" >/dev/null 2>&1 && echo "read a block device"; fi
    (echo x >/etc/cordon-e2e) 2>/dev/null && echo "wrote /etc"
    exit 0' sh "$CT/home" "$blk"
  [ "$RC" = 0 ] || die "$(last_run)"
  assert_eq "$OUT" "$(printf 'listed /\nread /etc')" "--isolation landlock --base host"
}

t_network_none() {
  need_abi 4 "TCP rules, Linux 6.7"
  start_tcp_server 30
  # positive control: with --network host the same client gets through
  expect_output "pong" run --isolation landlock --network host -- "$PY" -c "$TCP_CLIENT" "$SERVER_PORT"
  crun run --isolation landlock -- "$PY" -c "$TCP_CLIENT" "$SERVER_PORT"
  assert_contains "$OUT" "error:" "TCP connect to the host's loopback under --network none"
  expect_output "udp EPERM|unix EPERM|netlink EPERM|pair ok|tcp socket ok" run --isolation landlock -- "$PY" -c '
import errno, socket
out = []
for name, args in (("udp", (socket.AF_INET, socket.SOCK_DGRAM)), ("unix", (socket.AF_UNIX, socket.SOCK_STREAM)),
                   ("netlink", (socket.AF_NETLINK, socket.SOCK_RAW, 0))):
    try:
        socket.socket(*args); out.append(name + " ok")
    except OSError as e:
        out.append(name + " " + errno.errorcode[e.errno])
a, b = socket.socketpair(); a.send(b"x"); out.append("pair ok" if b.recv(1) == b"x" else "pair broken")
socket.socket(socket.AF_INET, socket.SOCK_STREAM); out.append("tcp socket ok")
print("|".join(out))'
}

t_processes_and_cleanup() {
  need_abi 1 "Landlock"
  local m
  m=$(new_mark)
  # (new files cannot be made at the top of the workspace in this mode: a subdirectory)
  mkdir "$WS/out"
  crun run --isolation landlock --status-json "$CT/s.json" -- sh -c 'echo "$HOME" >out/home-was; (setsid sleep 1000.'"$m"' &) ; exit 3'
  assert_eq "$RC" 3 "exit status ($(last_run))"
  wait_no_sleepers "$m" 3 || { reap_sleepers "$m"; die "a process the command left behind survived the run"; }
  local home
  home=$(cat "$WS/out/home-was")
  case $home in */cordon-ll-*/home) ;; *) die "HOME inside was $home, not a private directory" ;; esac
  assert_absent "$home" "the private HOME after the run"
  assert_absent "$(dirname "$home")" "the private directory after the run"
  assert_eq "$(json_get "$CT/s.json" isolation)" '"landlock"' "--status-json isolation"
  # the namespaced run says so too
  expect_ok run --status-json "$CT/n.json" -- true
  assert_eq "$(json_get "$CT/n.json" isolation)" '"namespaces"' "--status-json isolation"
}

t_signals_scoped() {
  need_abi 6 "scoping, Linux 6.12"
  local m pid
  m=$(new_mark)
  sleep "1000.$m" &
  pid=$!
  crun run --isolation landlock -- sh -c 'kill -TERM "$1" 2>/dev/null && echo "killed a host process"; exit 0' sh "$pid"
  kill -0 "$pid" 2>/dev/null || die "a host process was killed from inside ($(last_run))"
  assert_not_contains "$OUT" "killed"
  kill -9 "$pid"
}

t_default_names_option() {
  # No user namespaces (the outer's --no-nested refuses them): the default fails closed.
  crun run --no-nested --allow-ro "$BINDIR" -- "$CORDON" run -- sh -c 'echo ran'
  assert_eq "$RC" 125 "inner default run without user namespaces ($(last_run))"
  assert_not_contains "$OUT" "ran"
  assert_contains "$ERR" "--isolation landlock"
}

t_auto_says_so() {
  need_abi 1 "Landlock"
  # where namespaces work, auto uses them, silently
  expect_ok run --isolation auto --status-json "$CT/a.json" -- true
  assert_eq "$(json_get "$CT/a.json" isolation)" '"namespaces"' "auto with user namespaces"
  # (a sanitizer build may add ASan's note about the sandbox's stack switch)
  assert_eq "$(printf '%s\n' "$ERR" | grep -v -e '__asan_handle_no_return' -e '^[[:space:]]*$' -e 'False positive error reports may follow' -e 'For details see')" "" \
    "auto with user namespaces: stderr"
  # where they do not, auto falls back to Landlock, and says so on stderr and in the status
  # (bubblewrap's --disable-userns makes such a host: inside cordon, Landlock is not
  # offered to the command, see doc/security.md)
  command -v bwrap >/dev/null || skip_case "bwrap not found (./bootstrap.sh installs bubblewrap)"
  bwrap --ro-bind / / --dev /dev --proc /proc --unshare-user --disable-userns true 2>/dev/null ||
    skip_case "bwrap --disable-userns does not work here"
  RC=0
  # (from the workspace: $CT is above HOME, which is refused as a writable workspace; the
  # build tree shown again in case the checkout is under /tmp)
  local top
  top=$(cd "$(dirname "$CORDON")/.." && pwd)
  OUT=$(cd "$WS" && bwrap --ro-bind / / --tmpfs /tmp --ro-bind "$top" "$top" --bind "$CT" "$CT" --dev /dev --proc /proc --unshare-user \
    --disable-userns -- "$CORDON" run --isolation auto --network host --status-json "$CT/b.json" -- \
    sh -c 'echo ran; grep NoNewPrivs /proc/self/status' 2>"$ERRF") || RC=$?
  ERR=$(cat "$ERRF")
  [ "$RC" = 0 ] || die "auto without user namespaces: $(last_run)"
  assert_contains "$OUT" "ran"
  assert_contains "$ERR" "--isolation auto"
  assert_contains "$ERR" "Landlock"
  assert_eq "$(json_get "$CT/b.json" isolation)" '"landlock"' "auto without user namespaces"
}

t_settings_and_explain() {
  printf '{"sandbox": {"isolation": "landlock"}}\n' >"$CT/s.json"
  expect_ok explain --settings "$CT/s.json" -- true
  assert_contains "$OUT" "isolation landlock"
  printf '{"sandbox": {\n  "isolation": "chroot"\n}}\n' >"$CT/bad.json"
  expect_exit 125 run --settings "$CT/bad.json" -- true
  assert_contains "$ERR" "bad.json"
  assert_contains "$ERR" "isolation"
  expect_exit 125 run --isolation nonsense -- true
  assert_cordon_stderr
  expect_ok help run
  assert_contains "$OUT" "--isolation"
  if [ "$ABI" -ge 1 ]; then
    mkdir "$WS/sub"
    expect_ok explain --isolation landlock --deny "$WS/sub" -- true
    assert_contains "$OUT" "device  /dev/null"
    assert_contains "$OUT" "list    $WS "
    assert_not_contains "$OUT" "$WS/sub"$'\n'
    assert_contains "$OUT" "the mount plan above is not carried out"
    # issue 22: the creation control is on, and what differs from namespaces is listed
    assert_contains "$OUT" "creation control  on:"
    assert_contains "$OUT" "unlike the namespaced sandbox:"
    assert_contains "$OUT" "the host's processes are visible"
    expect_ok explain --json --isolation landlock -- true
    printf '%s' "$OUT" >"$CT/explain.json"
    assert_eq "$(json_get "$CT/explain.json" landlock_isolation | "$PY" -c 'import json, sys
d = json.load(sys.stdin)
print(d["creation_control"], len(d["differences"]) > 3)')" "True True" "explain --json: landlock_isolation"
    # only a read-only path below (the protected .git/hooks): the top is readable, and the
    # supervisor's to create in
    rmdir "$WS/sub"
    mkdir -p "$WS/.git/hooks"
    expect_ok explain --isolation landlock -- true
    assert_contains "$OUT" "read    $WS "
    assert_contains "$OUT" "create  $WS "
  fi
}

run_case allow_deny_readonly t_allow_deny_readonly
run_case deny_splits_tree t_deny_splits_tree
run_case base_host t_base_host
run_case network_none t_network_none
run_case processes_and_cleanup t_processes_and_cleanup
run_case signals_scoped t_signals_scoped
run_case default_names_option t_default_names_option
run_case auto_says_so t_auto_says_so
run_case settings_and_explain t_settings_and_explain
finish
