#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Confinement beyond the namespaces: no capabilities, no_new_privs, the seccomp filter
# (every refused call fails with EPERM, Unix sockets keep working), --no-nested, cordon
# inside cordon, and Landlock (scoped abstract sockets; filesystem rules with --no-nested).
# A small C program (confine_probe.c, compiled here) makes the system calls inside.
. "$(dirname "$0")/lib.sh"

PROBE_SRC=$E2E_DIR/confine_probe.c
PROBE=$T/confine_probe
PROBE_ERR=
if ! command -v cc >/dev/null 2>&1; then
  PROBE_ERR="no C compiler (cc) to build the probe"
elif ! cc -O2 -o "$PROBE" "$PROBE_SRC" 2>"$T/.cc.err"; then
  PROBE_ERR="cannot compile $PROBE_SRC: $(head -c 300 "$T/.cc.err")"
fi

need_probe() {
  [ -z "$PROBE_ERR" ] || skip_case "$PROBE_ERR"
  cp "$PROBE" "$WS/probe"
}

# probe_in OPTIONS... -- NAME...: run the probe in the sandbox; sets $PR (its output).
probe_in() {
  local opts=()
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  crun run "${opts[@]}" -- ./probe "$@"
  [ "$RC" = 0 ] || die "probe inside: $(last_run)"
  PR=$OUT
}

# result NAME: the probe's result for NAME in $PR.
result() { printf '%s\n' "$PR" | awk -v n="$1" '$1 == n { print $2 }'; }

expect_result() {
  local got
  got=$(result "$1")
  [ "$got" = "$2" ] || die "$1 inside the sandbox${3:+ ($3)}: expected $2, got '${got:-nothing}'"
}

landlock_abi() { "$PY" -c '
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
r = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint(1))
print(r if r > 0 else 0)'; }

t_status() {
  crun run -- sh -c 'grep -E "^(NoNewPrivs|Seccomp|CapEff|CapPrm|CapBnd|CapAmb|CapInh):" /proc/self/status'
  [ "$RC" = 0 ] || die "$(last_run)"
  local line bad=""
  for line in "NoNewPrivs:	1" "Seccomp:	2" "CapEff:	0000000000000000" "CapPrm:	0000000000000000" \
    "CapBnd:	0000000000000000" "CapAmb:	0000000000000000" "CapInh:	0000000000000000"; do
    case $'\n'$OUT$'\n' in *$'\n'"$line"$'\n'*) ;; *) bad+=" [$line]" ;; esac
  done
  [ -z "$bad" ] || die "/proc/self/status inside lacks$bad; got: $OUT"
  # the reaper (PID 1) runs under the filter too
  crun run -- sh -c 'grep "^Seccomp:" /proc/1/status'
  assert_eq "$OUT" "Seccomp:	2" "PID 1's seccomp mode"
}

t_refused_calls() {
  need_probe
  # positive control: on the host these calls fail with something else than EPERM (or work)
  local host
  host=$("$WS/probe" io_uring_setup tiocsti keyctl add_key socket_alg)
  case $host in *EPERM*) die "the probe cannot tell a refusal on this host: $host" ;; esac
  probe_in -- io_uring_setup io_uring_enter io_uring_register socket_vsock socket_vsock_hi \
    socket_packet socket_alg socket_bluetooth tiocsti tioclinux keyctl add_key request_key userfaultfd \
    perf_event_open kexec_load kexec_file_load bpf syslog uselib acct modify_ldt quotactl move_pages \
    migrate_pages mbind get_mempolicy set_mempolicy open_by_handle_at init_module personality_exec \
    personality_bsd
  local n
  for n in $(printf '%s\n' "$PR" | awk '{print $1}'); do
    expect_result "$n" EPERM
  done
  assert_eq "$(printf '%s\n' "$PR" | wc -l | tr -d ' ')" 32 "number of probes run"
}

t_allowed_calls() {
  need_probe
  probe_in -- socket_unix socket_inet socket_inet6 socket_netlink unix_traffic tcgets personality_query \
    personality_linux32 personality_norandom
  local n
  for n in socket_unix socket_inet socket_inet6 socket_netlink unix_traffic personality_query \
    personality_linux32 personality_norandom; do
    expect_result "$n" ok
  done
  expect_result tcgets ENOTTY "an ordinary ioctl reaches the kernel"
}

t_tiocsti_64bit() {
  need_probe
  # the kernel reads the request as 32 bits: TIOCSTI | 1<<32 is TIOCSTI (CVE-2019-10063)
  local host
  host=$("$WS/probe" tiocsti_hi)
  assert_eq "$host" "tiocsti_hi ENOTTY" "control on the host"
  probe_in -- tiocsti tiocsti_hi tioclinux
  expect_result tiocsti EPERM
  expect_result tiocsti_hi EPERM
  expect_result tioclinux EPERM
}

t_unix_sockets_python() {
  # what asyncio does: a Unix stream server and client, send/sendto/setsockopt/getsockname
  expect_output "echo: hello|dgram ok|names ok" run -- "$PY" -c '
import asyncio, os, socket, tempfile
async def main():
    path = os.path.join(tempfile.mkdtemp(), "s")
    async def handle(r, w):
        w.write(b"echo: " + await r.readline()); await w.drain(); w.close()
    srv = await asyncio.start_unix_server(handle, path)
    r, w = await asyncio.open_unix_connection(path)
    w.write(b"hello\n"); await w.drain()
    line = (await r.readline()).decode().strip()
    w.close(); srv.close()
    return line
line = asyncio.run(main())
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
c = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
c.bind("\0cordon-e2e-%d" % os.getpid())
a.send(b"x")
a.sendto(b"y", c.getsockname())
ok = b.recv(1) == b"x" and c.recv(1) == b"y"
names = a.getsockname() in ("", b"") and c.getsockname().startswith(b"\0cordon-e2e-")
print(line + "|" + ("dgram ok" if ok else "dgram broken") + "|" + ("names ok" if names else "names wrong"))'
}

t_no_nested() {
  need_probe
  probe_in -- unshare_user clone_user clone3 fsopen open_tree unshare_cgroup
  expect_result unshare_user ok "nesting is allowed by default"
  expect_result clone_user ok "nesting is allowed by default"
  expect_result clone3 ENOSYS "clone3, whose flags seccomp cannot see (libc falls back to clone)"
  expect_result unshare_cgroup EPERM "a cgroup namespace of the command's own"
  probe_in --no-nested -- unshare_user clone_user clone3 fsopen open_tree socket_unix unix_traffic
  expect_result unshare_user EPERM "--no-nested"
  expect_result clone_user EPERM "--no-nested"
  expect_result clone3 ENOSYS "--no-nested (so that libc falls back to clone)"
  expect_result fsopen ENOSYS "--no-nested"
  expect_result open_tree ENOSYS "--no-nested"
  expect_result socket_unix ok "--no-nested"
  expect_result unix_traffic ok "--no-nested"
  # threads and processes still start (glibc falls back from clone3 to clone)
  expect_output "ok" run --no-nested -- "$PY" -c '
import subprocess, threading
t = threading.Thread(target=lambda: None); t.start(); t.join()
print(subprocess.run(["echo", "ok"], capture_output=True, text=True).stdout.strip())'
}

t_nested() {
  local bindir
  bindir=$(dirname "$CORDON")
  mkdir "$CT/shown"
  echo visible >"$CT/shown/file"
  echo hidden >"$CT/shown/secret"
  if [ "$MY_UID" -eq 0 ]; then
    # The kernel maps uid 0 into a new user namespace only for a creator holding
    # CAP_SETFCAP, which root inside cordon does not have: a clear error, exit 125.
    expect_exit 125 run --allow-ro "$bindir" -- "$CORDON" run -- true
    assert_contains "$ERR" "CAP_SETFCAP" "nesting as root explains why it cannot work"
    return 0
  fi
  expect_output "visible" run --allow-ro "$bindir" --allow-ro "$CT/shown" -- \
    "$CORDON" run --allow-ro "$CT/shown" -- cat "$CT/shown/file"
  # what the outer hid stays hidden inside, even where the inner allows it
  crun run --allow-ro "$bindir" --allow-ro "$CT/shown" --deny "$CT/shown/secret" -- \
    "$CORDON" run --allow "$CT/shown" -- sh -c 'cat "$1" 2>&1; echo x >"$1" 2>/dev/null && echo wrote' sh "$CT/shown/secret"
  assert_not_contains "$OUT" "hidden" "the outer's denied file inside the inner sandbox"
  assert_not_contains "$OUT" "wrote" "the outer's denied file written inside the inner sandbox"
  assert_file_content "$CT/shown/secret" "hidden"
  # a command runs under two filters (the deny list, and its own that sends creations to
  # the supervisor); the inner command under both sandboxes' (the inner's own without a
  # listener: the outer's serves it)
  expect_output "Seccomp_filters:	2" run -- grep Seccomp_filters /proc/self/status
  expect_output "Seccomp_filters:	4" run --allow-ro "$bindir" -- "$CORDON" run -- grep Seccomp_filters /proc/self/status
  # --no-nested refuses it, with a message
  expect_exit 125 run --no-nested --allow-ro "$bindir" -- "$CORDON" run -- true
  assert_contains "$ERR" "seccomp"
}

t_landlock_fs() {
  need_probe
  local abi
  abi=$(landlock_abi)
  [ "$abi" -ge 2 ] || skip_case "Landlock ABI $abi on this kernel (filesystem rules need ABI 2, Linux 5.19)"
  mkdir "$OUTSIDE/dir"
  chmod 0777 "$OUTSIDE/dir"
  # A host directory handed over as stdin: the mount would let the command create files
  # in it through the descriptor; with Landlock's filesystem rules it cannot.
  CRUN_STDIN=$OUTSIDE/dir probe_in -- create_in_fd0
  expect_result create_in_fd0 ok "without --no-nested (namespaces only)"
  rm -f "$OUTSIDE/dir/created-by-probe"
  CRUN_STDIN=$OUTSIDE/dir probe_in --no-nested -- create_in_fd0
  expect_result create_in_fd0 EACCES "--no-nested: Landlock"
  assert_absent "$OUTSIDE/dir/created-by-probe" "Landlock let a file be created outside the writable paths"
}

t_landlock_usable() {
  # Everything ordinary still works under the filesystem rules: writable paths, the
  # devices, /dev/stdout to a pipe and to a file outside the view, ptys, /proc/self.
  local script='
set -e
echo ws >ws-file; echo tmp >/tmp/f; echo home >"$HOME/f"; echo shm >/dev/shm/f
echo tmpdir >"$TMPDIR/g"
echo null >/dev/null; head -c 4 /dev/zero >/dev/null; head -c 4 /dev/urandom >/dev/null
echo stderr >/dev/stderr
echo name >/proc/self/comm
mkdir d; mv ws-file d/; ln -s d/ws-file l; cat l >/dev/null; rm -r d l
"$1" -c "import pty, os
pid, fd = pty.fork()
if pid == 0:
    import time; print(\"in pty\", flush=True); time.sleep(0.5); os._exit(0)
out = b\"\"
while True:
    try:
        d = os.read(fd, 100)
    except OSError:
        break
    if not d:
        break
    out += d
os.waitpid(pid, 0)
print(\"pty:\", out.decode().strip())"
if (echo x >/etc/cordon-e2e) 2>/dev/null; then echo "wrote /etc"; fi
echo done'
  local mode
  for mode in "" --no-nested; do
    crun run $mode -- sh -c "$script" sh "$PY"
    [ "$RC" = 0 ] || die "run ${mode:-(default)}: $(last_run)"
    assert_eq "$OUT" "$(printf 'pty: in pty\ndone')" "run ${mode:-(default)}"
    assert_contains "$ERR" "stderr"
    # /dev/stdout is a pipe, then a file outside the view
    "$CORDON" run $mode -- sh -c 'echo to-pipe >/dev/stdout' 2>"$CT/err" | cat >"$CT/piped" ||
      die "run ${mode:-(default)} with stdout to a pipe: $(cat "$CT/err")"
    assert_file_content "$CT/piped" "to-pipe" "/dev/stdout to a pipe"
    "$CORDON" run $mode -- sh -c 'echo to-file >/dev/stdout && echo more >>/dev/stdout' >"$OUTSIDE/out" 2>"$CT/err" ||
      die "run ${mode:-(default)} with stdout to a file: $(cat "$CT/err")"
    assert_file_content "$OUTSIDE/out" "$(printf 'to-file\nmore')" "/dev/stdout to a file (truncated, then appended)"
  done
}

t_landlock_abstract_unix() {
  local abi
  abi=$(landlock_abi)
  [ "$abi" -ge 6 ] || skip_case "Landlock ABI $abi on this kernel (scoping needs ABI 6, Linux 6.12)"
  local name=cordon-e2e-$$-$RANDOM
  "$PY" -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("\0" + sys.argv[1]); s.listen(4); s.settimeout(20)
open(sys.argv[2], "w").close()
try:
    while True:
        c, _ = s.accept(); c.sendall(b"pong\n"); c.close()
except Exception:
    pass' "$name" "$CT/ready" </dev/null >/dev/null 2>&1 &
  track_pid $! "$name"
  local i
  for ((i = 0; i < 100; i++)); do [ -e "$CT/ready" ] && break; sleep 0.05; done
  local client='
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect("\0" + sys.argv[1]); print(s.makefile().readline().strip())
except OSError as e:
    print("refused", e.errno)'
  # positive control: the host reaches it
  assert_eq "$("$PY" -c "$client" "$name")" "pong" "host client"
  # --network host shares the abstract namespace; Landlock scopes it away
  expect_output "refused 1" run --network host -- "$PY" -c "$client" "$name"
}

t_explain() {
  # the seccomp list only with --verbose (issue 9, item 9)
  expect_ok explain -- true
  assert_contains "$OUT" "calls refused (\`cordon explain --verbose\` lists them"
  assert_not_contains "$OUT" "ioctl(TIOCSTI)"
  expect_ok explain --verbose -- true
  assert_contains "$OUT" "seccomp"
  assert_contains "$OUT" "ioctl(TIOCSTI)"
  assert_contains "$OUT" "landlock"
  assert_contains "$OUT" "clone3 (ENOSYS)"
  assert_not_contains "$OUT" "fsopen (ENOSYS)"
  expect_ok explain --verbose --no-nested -- true
  assert_contains "$OUT" "fsopen (ENOSYS)"
  if [ "$(landlock_abi)" -ge 2 ]; then
    assert_contains "$OUT" "read    /"
    assert_contains "$OUT" "write   $WS"
  else
    assert_contains "$OUT" "no filesystem rules"
  fi
  expect_ok help run
  assert_contains "$OUT" "--no-nested"
}

t_check_json() {
  expect_ok check --json
  "$PY" - "$OUTF" "$(landlock_abi)" <<'PYEOF' || die "cordon check --json: $(cat "$OUTF.why" 2>/dev/null || echo invalid JSON)"
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
def want(cond, what):
    if not cond: bad.append(what)
want(d.get("default_sandbox") is True, "default_sandbox is not true")
want(d.get("error") is None, "error is not null")
checks = d.get("checks", {})
names = ["user_namespaces", "seccomp", "pidfd", "proc", "landlock", "overlayfs", "fuse_overlayfs",
         "cgroup_delegation", "landlock_isolation", "bwrap_link"]
# the mode the default sandbox ran in: the full sandbox here (a masked /proc: e2e/maskedproc)
want(d.get("mode") == ("namespaces" if checks.get("proc", {}).get("ok") else "namespaces-kept-proc"),
     "mode is %r" % d.get("mode"))
want(isinstance(d.get("mode_detail"), str) and d["mode_detail"], "mode_detail")
want(list(checks) == names, "checks are %s" % list(checks))
for n in names:
    c = checks.get(n, {})
    want(isinstance(c.get("ok"), bool), n + ".ok")
    want(isinstance(c.get("required"), bool), n + ".required")
    want(isinstance(c.get("detail"), str) and c["detail"], n + ".detail")
    want(c.get("fix") is None or (isinstance(c["fix"], str) and c["fix"]), n + ".fix")
    want(c.get("ok") or c.get("fix"), n + " fails without a fix")
    want(c.get("required") == (n in ("user_namespaces", "seccomp", "pidfd")), n + ".required")
for n in ("user_namespaces", "seccomp", "pidfd"):
    want(checks.get(n, {}).get("ok") is True, n + " not ok although the default sandbox works")
want(checks.get("landlock", {}).get("abi") == int(sys.argv[2]), "landlock.abi != " + sys.argv[2])
if bad:
    open(sys.argv[1] + ".why", "w").write("; ".join(bad))
    sys.exit(1)
PYEOF
  expect_ok check
  assert_contains "$OUT" "default sandbox: works"
  assert_contains "$OUT" "seccomp"
}

t_check_explains_refusal() {
  # Inside `cordon run --no-nested` user namespaces are refused by seccomp: check says so,
  # with the fix, and exits 1.
  local bindir
  bindir=$(dirname "$CORDON")
  expect_exit 1 run --no-nested --allow-ro "$bindir" -- "$CORDON" check --json
  "$PY" -c '
import json, sys
d = json.loads(sys.argv[1])
u = d["checks"]["user_namespaces"]
assert d["default_sandbox"] is False and d["error"], d
assert u["ok"] is False and "seccomp" in u["fix"] and "--isolation landlock" in u["fix"], u
' "$OUT" || die "cordon check inside --no-nested: $OUT"
}

run_case status t_status
run_case refused_calls t_refused_calls
run_case allowed_calls t_allowed_calls
run_case tiocsti_64bit t_tiocsti_64bit
run_case unix_sockets_python t_unix_sockets_python
run_case no_nested t_no_nested
run_case nested t_nested
run_case landlock_fs t_landlock_fs
run_case landlock_usable t_landlock_usable
run_case landlock_abstract_unix t_landlock_abstract_unix
run_case explain t_explain
run_case check_json t_check_json
run_case check_explains_refusal t_check_explains_refusal
finish
