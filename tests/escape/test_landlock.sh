#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --isolation landlock: no namespaces, so what the namespaces did must be done otherwise.
#   - System V IPC and POSIX message queues are the host's: refused by seccomp (the host's
#     objects of the same user were readable and writable by key or id);
#   - kill -9 of cordon: the supervisor, a child subreaper, reads cordon's death as a
#     signal and kills every descendant (a double-forked grandchild used to survive), and
#     a janitor removes the private HOME/TMPDIR directory;
#   - other processes' /proc/PID/cmdline stays readable (no PID namespace, and Landlock
#     cannot tell /proc/PID apart): a known limitation, asserted as it stands; --no-proc
#     closes it.
#   - the creation control runs here too, served by the stand-in (issue 22): creating,
#     writing, renaming and removing at the top of the workspace and in .git work (cc,
#     git commit), while protected names (.codex, .claude, .vscode, .mcp.json), git hooks
#     and config, read-only paths inside the workspace, set-user-ID bits and host Unix
#     sockets are refused and reported (refused: N), as with namespaces;
#   - --network none: no host TCP service is reached (the supervisor connects within the
#     command's Landlock rules).
# Positive controls: the same attack program reaches the host's objects on the host; the
# grandchild and the private directory did exist while cordon ran; creating at the top and
# git commit work; the same route works for what the view shows.
. "$(dirname "$0")/lib.sh"
esc_build ipc tryops

landlock_abi() { "$PY" -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
r = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint(1))
print(r if r > 0 else 0)'; }
ABI=$(landlock_abi)
need_landlock() { [ "$ABI" -ge 4 ] || skip_case "Landlock ABI $ABI on this kernel; --isolation landlock with --network none needs ABI 4"; }

# The creation control's cases: a workspace that is a git repository, as agents have.
git_ws() {
  command -v git >/dev/null || skip_case "git is not installed (./bootstrap.sh installs it)"
  git -C "$WS" init -q
  git -C "$WS" config user.name cordon-test
  git -C "$WS" config user.email test@cordon.invalid
  echo one >"$WS/tracked"
  git -C "$WS" add tracked
  git -C "$WS" commit -q -m first
}

# Positive control of everything below: ordinary work at the top of a workspace that is a
# repository (before, the tree split around .git/hooks could only be listed: touch, ld's
# output and git's index.lock were EACCES, reported as refused: 0).
t_top_create_and_build() {
  need_landlock
  command -v cc >/dev/null || skip_case "no C compiler"
  git_ws
  printf 'int main(void) { return 7; }\n' >"$WS/hello.c"
  crun run --isolation landlock -- sh -c '
    touch ok && mkdir dir && echo x >dir/f && mv dir/f moved && cc -o hello hello.c &&
      { ./hello; echo "ran $?"; } && cat moved && rm ok && rmdir dir && echo done'
  [ "$RC" = 0 ] || die "$(last_run)"
  assert_eq "$OUT" "$(printf 'ran 7\nx\ndone')" "create, build, run, rename and remove at the top of the workspace"
  assert_exists "$WS/hello"
  assert_file_content "$WS/moved" "x"
  assert_absent "$WS/ok"
  assert_absent "$WS/dir"
  assert_not_contains "$ERR" "refused" "ordinary work reported as refused"
}

t_git_commit() {
  need_landlock
  git_ws
  crun run --isolation landlock -- sh -c '
    echo two >>tracked && echo new >added && git add tracked added && git commit -q -m inside &&
      git commit -q --allow-empty -m again && git gc -q && git status --porcelain && echo committed'
  [ "$RC" = 0 ] || die "git commit under --isolation landlock: $(last_run)"
  assert_eq "$OUT" committed
  assert_eq "$(git -C "$WS" log --format=%s | tr '\n' ' ')" "again inside first " "the commits on the host"
  [ -z "$(find "$WS/.git" -name '*.lock')" ] || die "lock files left in .git: $(find "$WS/.git" -name '*.lock')"
  git -C "$WS" fsck >/dev/null 2>&1 || die "the repository is damaged"
}

t_protected_names_and_git() {
  need_landlock
  git_ws
  echo '#!/bin/sh' >"$WS/.git/hooks/pre-commit.sample"
  local before
  before=$(snapshot "$WS/.git" strict)
  crun run --isolation landlock --allow-ro "$BIN" --status-json "$CT/st.json" -- "$BIN/tryops" \
    mkdir codex .codex mkdir claude .claude mkdir vscode .vscode write mcp .mcp.json "{}" \
    write hook .git/hooks/pre-commit "#!/bin/sh" append config .git/config "[core]" \
    unlink rm_hook .git/hooks/pre-commit.sample unlink rm_config .git/config \
    mkdir nested_repo sub mkdir nested_git sub/.git \
    link hook_link tracked .git/hooks/post-checkout \
    write control made-here "fine" mkdir control_dir madedir
  [ "$RC" = 0 ] || die "$(last_run)"
  want_ok control
  want_ok control_dir
  want_ok nested_repo
  local l
  for l in codex claude vscode mcp hook config rm_hook rm_config nested_git hook_link; do
    want_refused "$l" EPERM EACCES
  done
  for l in .codex .claude .vscode .mcp.json .git/hooks/pre-commit .git/hooks/post-checkout sub/.git; do
    assert_absent "$WS/$l"
  done
  assert_unchanged "$before" "$WS/.git" "the repository's hooks or config changed on the host" strict
  assert_file_content "$WS/made-here" "fine"
  # refused: N, and each refusal printed with its reason (issue 23)
  [ "$(json_get "$CT/st.json" refused)" -ge 10 ] || die "refused: $(json_get "$CT/st.json" refused) in --status-json"
  assert_contains "$ERR" "cordon: refused mkdir .codex: protected .codex"
  assert_contains "$ERR" "git hooks"
  # the repository itself, its hooks and config cannot be moved away from their rules
  crun run --isolation landlock -- sh -c 'mv .git/hooks h; mv .git/config c; mv .git moved-git; exit 0'
  assert_absent "$WS/moved-git"
  assert_absent "$WS/h"
  assert_absent "$WS/c"
  assert_contains "$ERR" "Device or resource busy" "renaming .git away: EBUSY, as the mount point says with namespaces"
  assert_unchanged "$before" "$WS/.git" "the repository's hooks or config changed on the host" strict
}

t_readonly_inside_workspace() {
  need_landlock
  mkdir "$WS/vendor" "$WS/vendor/sub"
  echo v >"$WS/vendor/f"
  echo own >"$WS/own"
  local before
  before=$(snapshot "$WS/vendor" strict)
  crun run --isolation landlock --allow-ro "$BIN" --allow-ro "$WS/vendor" -- "$BIN/tryops" \
    append control own "y" write top newtop "n" read ro_read vendor/f \
    append ro_write vendor/f "changed" write ro_create vendor/new "n" write ro_create_sub vendor/sub/new "n" \
    mkdir ro_mkdir vendor/d unlink ro_unlink vendor/f link ro_link_out vendor/f linked \
    link ro_link_in own vendor/own
  [ "$RC" = 0 ] || die "$(last_run)"
  want_ok control
  want_ok top
  want_ok ro_read
  local l
  for l in ro_write ro_create ro_create_sub ro_mkdir ro_unlink ro_link_out ro_link_in; do
    want_refused "$l" EPERM EACCES EROFS
  done
  crun run --isolation landlock --allow-ro "$WS/vendor" -- sh -c 'mv vendor/f out; mv vendor here; rm -rf vendor; exit 0'
  assert_unchanged "$before" "$WS/vendor" "a read-only path inside the workspace changed on the host" strict
  assert_absent "$WS/out"
  assert_absent "$WS/here"
  assert_file_content "$WS/newtop" "n"
}

# A hidden path inside the workspace: Landlock cannot hide it from a readable directory,
# so that directory stays list-only, and a new name there is refused with the reason
# (the command could not read it back), not as a bare EACCES.
t_hidden_inside_workspace() {
  need_landlock
  echo secret >"$WS/.env"
  echo o >"$WS/other"
  crun run --isolation landlock --allow-ro "$BIN" --deny "$WS/.env" -- "$BIN/tryops" \
    read secret .env append control other "2" write top newtop "n"
  [ "$RC" = 0 ] || die "$(last_run)"
  want_ok control
  want_refused secret EACCES
  want_refused top EPERM
  assert_contains "$ERR" "a hidden path is in this directory"
  assert_absent "$WS/newtop"
}

t_setid_refused() {
  need_landlock
  echo '#!/bin/sh' >"$WS/prog"
  crun run --isolation landlock -- sh -c 'chmod 0755 prog && echo control; chmod u+s prog || echo refused; chmod g+s prog || echo refused'
  assert_eq "$OUT" "$(printf 'control\nrefused\nrefused')" "set-user-ID and set-group-ID bits"
  [ "$(stat -c %a "$WS/prog")" = 755 ] || die "ESCAPE: mode $(stat -c %a "$WS/prog") on the host"
}

# The gap of issue 19 here: with --network host, a host service's pathname socket in the
# view (a tmux server's, the Docker socket) is refused as with namespaces; the command's
# own sockets work.
t_host_unix_socket_refused() {
  need_landlock
  local ready=$CT/ready i
  mkdir "$WS/run"
  "$PY" "$ESC_SRC/unix_server.py" "$WS/run/sock" "$ready" 30 </dev/null >/dev/null 2>"$CT/server.err" &
  track_pid $! "$ESC_SRC/unix_server.py"
  for ((i = 0; i < 100; i++)); do
    [ -e "$ready" ] && break
    sleep 0.05
  done
  [ -e "$ready" ] || die "could not start the host Unix socket server: $(cat "$CT/server.err")"
  host_run tryops connect host_control "$WS/run/sock"
  [ "$(detail host_control)" = pong-from-host ] || die "positive control: the host server does not answer on the host ($OUT)"
  crun run --isolation landlock --allow-ro "$BIN" --network host -- "$BIN/tryops" \
    connect shown "$WS/run/sock" ownstream control_own "$WS/own.sock"
  [ "$RC" = 0 ] || die "$(last_run)"
  want_ok control_own
  want_refused shown EACCES
  assert_contains "$ERR" "connect"
  # positive control: --allow-socket lets it through
  crun run --isolation landlock --allow-ro "$BIN" --network host --allow-socket "$WS/run/sock" -- "$BIN/tryops" connect shown "$WS/run/sock"
  assert_eq "$(detail shown)" pong-from-host "connect to a host socket named by --allow-socket"
}

# --base host: "/" is read-only by a rule, which the supervisor applies itself; the minimal
# /dev and the files handed in as standard descriptors stay writable (controls), the
# host's files do not.
t_base_host_rules() {
  need_landlock
  # (the reopened standard output is written last: it has an offset of its own)
  crun run --isolation landlock --base host -- sh -c '
    echo x >/dev/null && echo devnull; touch made && echo made
    touch /etc/cordon-escape-ll 2>/dev/null || echo etc refused
    echo handed >>/proc/self/fd/1'
  [ "$RC" = 0 ] || die "$(last_run)"
  assert_eq "$OUT" "$(printf 'devnull\nmade\netc refused\nhanded')" "--isolation landlock --base host ($ERR)"
  assert_exists "$WS/made"
  assert_absent /etc/cordon-escape-ll "ESCAPE: a file made in the host's /etc"
}

# KNOWN LIMITATION (doc/security.md): Landlock does not govern file times, and the
# supervisor is not sent utimensat: asserted as it stands; the content stays.
t_times_known_limitation() {
  need_landlock
  mkdir "$WS/vendor"
  echo v >"$WS/vendor/f"
  touch -d 2001-01-01 "$WS/vendor/f"
  crun run --isolation landlock --allow-ro "$WS/vendor" -- sh -c 'touch -c -d 2002-02-02 vendor/f; echo x >vendor/f; exit 0'
  assert_file_content "$WS/vendor/f" "v"
  assert_eq "$(stat -c %Y "$WS/vendor/f")" "$(date -d 2002-02-02 +%s)" \
    "KNOWN LIMITATION changed: the times of a read-only file are no longer changed under --isolation landlock; update doc/security.md"
  # with namespaces the read-only mount refuses it (positive control of the difference)
  touch -d 2001-01-01 "$WS/vendor/f"
  crun run --allow-ro "$WS/vendor" -- sh -c 'touch -c -d 2002-02-02 vendor/f; exit 0'
  assert_eq "$(stat -c %Y "$WS/vendor/f")" "$(date -d 2001-01-01 +%s)" "ESCAPE: the times of a read-only file changed with namespaces"
}

# The supervisor connects on the command's behalf: within the command's Landlock rules.
t_network_none_tcp() {
  need_landlock
  start_tcp_server 30
  local port
  port=$(cat "$CT"/port.*)
  local probe='import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5).close()
    print("connected")
except OSError as e:
    print("refused", e.errno)'
  crun run --isolation landlock --network none -- "$PY" -c "$probe" "$port"
  assert_not_contains "$OUT" connected "ESCAPE: a host TCP service reached under --network none"
  assert_contains "$OUT" refused
  crun run --isolation landlock --network host -- "$PY" -c "$probe" "$port"
  assert_eq "$OUT" connected "positive control: --network host reaches the host's loopback"
}

t_sysv_refused() {
  need_landlock
  command -v ipcmk >/dev/null || skip_case "ipcmk (util-linux) not installed"
  local shmid shmkey msgid msgkey semid semkey mq=cordon-escape-ll-$$-$RANDOM
  shmid=$(ipcmk -M 4096 -p 0600 | awk '{print $NF}')
  msgid=$(ipcmk -Q -p 0600 | awk '{print $NF}')
  semid=$(ipcmk -S 1 -p 0600 | awk '{print $NF}')
  # shellcheck disable=SC2064 # expanded now
  trap "ipcrm -m $shmid -q $msgid -s $semid 2>/dev/null; '$BIN/ipc' mq-unlink '$mq' 2>/dev/null" EXIT
  shmkey=$(ipcs -m | awk -v id="$shmid" '$2 == id { print $1 }')
  msgkey=$(ipcs -q | awk -v id="$msgid" '$2 == id { print $1 }')
  semkey=$(ipcs -s | awk -v id="$semid" '$2 == id { print $1 }')
  "$BIN/ipc" mq-create "$mq" "host message" || die "cannot create the host's POSIX message queue"
  esc_ok --isolation landlock -- ipc attack "$shmkey" "$shmid" "$msgkey" "$semkey" "$mq"
  want_refused shmget_host_key EPERM
  want_refused shmat_host_id EPERM
  want_refused msgget_host_key EPERM
  want_refused semget_host_key EPERM
  want_refused mq_open_host EPERM
  [ "$(ipcs -m | awk -v id="$shmid" '$2 == id { print $6 }')" = 0 ] || die "the host's segment was attached"
  host_run ipc mq-count "$mq"
  assert_eq "$(detail mq_count)" 1 "messages in the host's POSIX queue"
  # positive control: on the host the same program reaches all of them
  host_run ipc attack "$shmkey" "$shmid" "$msgkey" "$semkey" "$mq"
  local l
  for l in shmget_host_key shmat_host_id msgget_host_key semget_host_key mq_open_host; do
    [ "$(result "$l")" = ok ] || die "positive control: '$l' fails on the host ($OUT)"
  done
}

t_kill9_grandchild_and_private_dir() {
  need_landlock
  local m pid i dir
  m=$(new_mark)
  mkdir "$CT/tmpdir"
  TMPDIR=$CT/tmpdir "$CORDON" run --isolation landlock -- sh -c \
    'setsid sleep 1000.'"$m"' & (sleep 1000.'"$m"' &); sleep 1000.'"$m" \
    </dev/null >/dev/null 2>"$CT/err" &
  pid=$!
  track_pid "$pid" "$CORDON"
  # positive controls: the grandchildren run, the private directory exists
  for ((i = 0; i < 100; i++)); do
    [ "$(find_sleepers "$m" | wc -l)" -ge 3 ] && break
    sleep 0.05
  done
  [ "$(find_sleepers "$m" | wc -l)" -ge 3 ] || die "the command's three sleepers did not start: $(cat "$CT/err")"
  dir=$(find "$CT/tmpdir" -maxdepth 1 -name 'cordon-ll-*' -type d)
  [ -n "$dir" ] || die "positive control: no private directory in TMPDIR while cordon runs"
  echo "leftover" >"$dir/tmp/file"
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  wait_no_sleepers "$m" 5 || { reap_sleepers "$m"; die "ESCAPE: processes of the run survived kill -9 of cordon"; }
  for ((i = 0; i < 50; i++)); do
    [ -e "$dir" ] || break
    sleep 0.1
  done
  assert_absent "$dir" "the private HOME/TMPDIR directory after kill -9 of cordon"
}

# kill -9 of every process of the run at once (cordon, the janitor, the supervisor: as a
# cgroup kill or the OOM killer does): the private directory is left, and the next run
# in the same TMPDIR removes it.
t_kill9_everything_then_next_run() {
  need_landlock
  local m pid i dir pids
  m=$(new_mark)
  mkdir "$CT/tmpdir"
  TMPDIR=$CT/tmpdir "$CORDON" run --isolation landlock -- sleep "1000.$m" </dev/null >/dev/null 2>&1 &
  pid=$!
  track_pid "$pid" "$CORDON"
  wait_for_sleepers "$m" 5 >/dev/null || die "the command did not start"
  dir=$(find "$CT/tmpdir" -maxdepth 1 -name 'cordon-ll-*' -type d)
  [ -n "$dir" ] || die "positive control: no private directory in TMPDIR while cordon runs"
  pids=$(for p in /proc/[0-9]*; do
    { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -q "1000\.$m" && echo "${p#/proc/}"
  done; true)
  # stopped first, so that none of them (a janitor woken by cordon's death) acts in between
  # shellcheck disable=SC2086
  kill -STOP $pids 2>/dev/null || true
  # shellcheck disable=SC2086
  kill -9 $pids 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  reap_sleepers "$m"
  sleep 0.2
  assert_exists "$dir" "positive control: with its janitor killed too, the private directory stays"
  TMPDIR=$CT/tmpdir expect_ok run --isolation landlock -- true
  assert_absent "$dir" "the next run did not remove the stale private directory"
  [ -z "$(ls -A "$CT/tmpdir")" ] || die "left in TMPDIR: $(ls -A "$CT/tmpdir")"
}

t_proc_cmdline_known_limitation() {
  need_landlock
  local m pid
  m=$(new_mark)
  "$PY" -c 'import sys, time; time.sleep(1000)' "secret-token-$m" &
  pid=$!
  track_pid "$pid" "secret-token-$m"
  crun run --isolation landlock -- sh -c 'tr "\0" " " <"/proc/$1/cmdline" 2>/dev/null; echo' sh "$pid"
  # KNOWN LIMITATION (doc/security.md): asserted as it stands, so that a change is noticed
  assert_contains "$OUT" "secret-token-$m" \
    "KNOWN LIMITATION changed: other processes' command lines are no longer readable under --isolation landlock; update doc/security.md"
  # the namespaced sandbox does not show them (positive control of the difference) ...
  crun run -- sh -c 'tr "\0" " " <"/proc/$1/cmdline" 2>/dev/null; echo' sh "$pid"
  assert_not_contains "$OUT" "secret-token-$m" "ESCAPE: a host command line is readable in the namespaced sandbox"
  # ... and --no-proc closes it in this mode
  crun run --isolation landlock --no-proc -- sh -c 'tr "\0" " " <"/proc/$1/cmdline" 2>/dev/null; echo' sh "$pid"
  assert_not_contains "$OUT" "secret-token-$m" "--no-proc under --isolation landlock"
  kill "$pid" 2>/dev/null || true
}

# --network none without a network namespace: listen(2) on a socket never bound autobinds it
# to 0.0.0.0:PORT, past Landlock's bind check, and a host process connected in (issue 19).
# The attack: a TCP socket, listen() without bind(), the port printed, accept(); the host
# then connects to 127.0.0.1:PORT.  Positive control: the same program without cordon is
# reached from the host.  (Nothing inside could connect to it either: Landlock refuses
# connect(2) to every port, so refusing listen(2) takes nothing that worked.)
LISTENER='import errno, socket, sys
s = socket.socket(socket.AF_INET6 if sys.argv[1] == "6" else socket.AF_INET, socket.SOCK_STREAM)
print("socket ok", flush=True)
try:
    s.listen(1)
except OSError as e:
    print("listen", errno.errorcode[e.errno], flush=True)
    sys.exit(0)
print("port", s.getsockname()[1], flush=True)
s.settimeout(20)
try:
    s.accept()
    print("accepted", flush=True)
except OSError as e:
    print("accept", e, flush=True)'

# listen_then_connect OUTFILE COMMAND...: start COMMAND (the listener) in the background;
# once it says what listen() did, connect to the port it printed from the host.  Sets
# HOST_CONNECT to "connected", "refused ERR" or "no port"; the listener's lines are in
# OUTFILE.
listen_then_connect() {
  local out=$1 pid i port
  shift
  "$@" </dev/null >"$out" 2>"$out.err" &
  pid=$!
  track_pid "$pid" "$1"
  for ((i = 0; i < 400; i++)); do
    grep -q '^\(listen\|port\) ' "$out" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  port=$(awk '$1 == "port" { print $2 }' "$out")
  HOST_CONNECT="no port"
  if [ -n "$port" ]; then
    HOST_CONNECT=$("$PY" -c 'import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3).close()
    print("connected")
except OSError as e:
    print("refused", e)' "$port")
  fi
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

t_listen_unreachable_from_host() {
  need_landlock
  # positive control: on the host, the autobound port is reachable
  listen_then_connect "$CT/host.out" "$PY" -c "$LISTENER" 4
  [ "$HOST_CONNECT" = connected ] ||
    die "positive control: the host could not reach the program's own autobound port ($HOST_CONNECT; $(cat "$CT/host.out" "$CT/host.out.err" | _one_line))"
  local fam
  for fam in 4 6; do
    listen_then_connect "$CT/ll$fam.out" "$CORDON" run --isolation landlock --network none -- "$PY" -c "$LISTENER" "$fam"
    grep -q '^socket ok' "$CT/ll$fam.out" ||
      die "positive control: no TCP socket under --isolation landlock (IPv$fam): $(cat "$CT/ll$fam.out" "$CT/ll$fam.out.err" | _one_line)"
    [ "$HOST_CONNECT" != connected ] || die "ESCAPE: a host process connected to the sandbox's listening socket (IPv$fam)"
    assert_contains "$(cat "$CT/ll$fam.out")" "listen EPERM" "listen(2) under --isolation landlock --network none (IPv$fam)"
  done
  # with --network host the command's network is the host's: listening works there
  listen_then_connect "$CT/llhost.out" "$CORDON" run --isolation landlock --network host -- "$PY" -c "$LISTENER" 4
  [ "$HOST_CONNECT" = connected ] || die "--isolation landlock --network host: listen(2) should work: $HOST_CONNECT; $(cat "$CT/llhost.out" "$CT/llhost.out.err" | _one_line)"
}

run_case sysv_refused t_sysv_refused
run_case listen_unreachable_from_host t_listen_unreachable_from_host
run_case kill9_grandchild_and_private_dir t_kill9_grandchild_and_private_dir
run_case kill9_everything_then_next_run t_kill9_everything_then_next_run
run_case proc_cmdline_known_limitation t_proc_cmdline_known_limitation
run_case top_create_and_build t_top_create_and_build
run_case git_commit t_git_commit
run_case protected_names_and_git t_protected_names_and_git
run_case readonly_inside_workspace t_readonly_inside_workspace
run_case hidden_inside_workspace t_hidden_inside_workspace
run_case setid_refused t_setid_refused
run_case host_unix_socket_refused t_host_unix_socket_refused
run_case network_none_tcp t_network_none_tcp
run_case base_host_rules t_base_host_rules
run_case times_known_limitation t_times_known_limitation
finish
