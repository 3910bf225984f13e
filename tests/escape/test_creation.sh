#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The creation control (doc/security.md): PID 1 performs the command's creations and
# writes itself, on a directory descriptor it resolved, so that what it checked is what
# happens. Attacks: a second thread rewriting the path between the check and the call; a
# seccomp listener of the command's own in front of cordon's; set-user-ID files; openat2
# and Landlock, which the supervisor could not honour. Positive controls: the same calls
# with ordinary names work.
. "$(dirname "$0")/lib.sh"
esc_build creation

t_race_rewrites_the_path() {
  # 2 seconds of mkdir/open/symlink on a buffer another thread flips between okNNN and
  # a protected name: the protected name must never be created
  esc -- creation race "$WS" .codex 2
  [ "$RC" = 0 ] || die "the race program failed: $(last_run)"
  want_refused race_.codex EPERM
  want_ok race_control
  assert_absent "$WS/.codex" ".codex appeared on the host"
  esc -- creation race "$WS" .git 1
  want_refused race_.git EPERM
  want_ok race_control
  assert_absent "$WS/.git" "a .git appeared on the host"
}

t_own_listener_refused() {
  esc -- creation listener
  want_refused listener_own EBUSY
  want_ok filter_control
}

t_setid_refused() {
  cp /bin/true "$WS/prog"
  esc -- creation setid "$WS/prog"
  want_ok chmod_control
  local l
  for l in chmod_suid chmod_sgid fchmod_suid fchmodat_suid fchmodat2_suid open_suid mknod_suid; do
    want_refused "$l" EPERM ENOSYS
  done
  local mode
  mode=$(stat -c %a "$WS/prog")
  assert_eq "$mode" 755 "the file's mode on the host"
  assert_absent "$WS/prog.new"
  assert_absent "$WS/prog.node"
  if [ "$MY_UID" -eq 0 ]; then
    # the attack the issue names: a setuid-root copy of id for any host user
    cp /usr/bin/id "$WS/id"
    crun run -- sh -c 'chmod 4755 id; install -m 4755 id id2; echo done'
    assert_contains "$OUT" "done"
    [ -u "$WS/id" ] && die "ESCAPE: $WS/id is set-user-ID on the host"
    [ -e "$WS/id2" ] && [ -u "$WS/id2" ] && die "ESCAPE: $WS/id2 is set-user-ID on the host"
  fi
  return 0
}

t_setid_hardlink_refused() {
  # a hard link to a set-user-ID file keeps it runnable after the host fixed it
  cp /bin/true "$WS/suid"
  chmod 4755 "$WS/suid" || skip_case "cannot make a set-user-ID file here"
  echo plain >"$WS/plain"
  crun run -- sh -c 'ln suid suid.link; echo "suid=$?"; ln plain plain.link; echo "plain=$?"'
  assert_contains "$OUT" "suid=1"
  assert_contains "$OUT" "plain=0"
  assert_absent "$WS/suid.link"
  assert_exists "$WS/plain.link"
}

t_openat2_and_landlock_enosys() {
  esc -- creation openat2 "$WS/via-openat2"
  want_refused openat2 ENOSYS
  assert_absent "$WS/via-openat2"
  esc -- creation landlock
  want_refused landlock_abi ENOSYS
}

t_refusals_reported() {
  crun run --status-json "$CT/s.json" -- sh -c 'mkdir .codex; touch .mcp.json; echo ok > plain'
  [ "$RC" = 0 ] || die "$(last_run)"
  assert_contains "$ERR" "cordon: refused mkdir .codex"
  assert_contains "$ERR" "cordon: refused open"
  assert_contains "$ERR" ".mcp.json"
  assert_eq "$(json_get "$CT/s.json" refused)" 2 "refused in --status-json"
  assert_contains "$(cat "$CT/s.json")" ".codex"
  assert_file_content "$WS/plain" "ok"
}

# A refused path is the command's own text: printed quoted (issue 19, 4), so an ESC, a CR or
# a newline in it cannot erase the line or fake another on the user's terminal, also where
# the reason holds ": ".  The JSON holds the path as it was (jansson escapes it there).
# Positive control: a plain refused name is printed as it is.
t_refusal_names_quoted() {
  crun run --status-json "$CT/s.json" -- sh -c 'd=$(printf "e\033[2K\rD\tf\nz"); mkdir "$d"
mkdir "$d/../.codex" "$d/.git" 2>/dev/null; touch .mcp.json 2>/dev/null; true'
  [ "$RC" = 0 ] || die "$(last_run)"
  case $ERR in *$'\e'* | *$'\r'*) die "a refusal printed a raw ESC or CR: $(printf '%q' "$ERR")" ;; esac
  assert_contains "$ERR" 'cordon: refused mkdir "e\033[2K\rD\tf\nz/../.codex": protected .codex' "the crafted path is quoted"
  # the reason may hold ": " itself: the quotes end with the path
  assert_contains "$ERR" 'cordon: refused mkdir "e\033[2K\rD\tf\nz/.git": a new git repository' "the crafted path is quoted, not the reason"
  assert_contains "$ERR" "cordon: refused openat .mcp.json: protected .mcp.json" "positive control: a plain name as it is"
  # (a sanitizer build's own warnings, "==PID==WARNING: ..." and the line after, are not
  # the command's)
  assert_eq "$(grep -c '^cordon: ' "$ERRF")" "$(grep -cv -e '^==[0-9]*==' -e '^False positive error reports' -e '^For details see' "$ERRF")" "every line of stderr is cordon's own"
  "$PY" -c 'import json, sys
r = json.load(open(sys.argv[1]))["refusals"]
sys.exit(0 if any(x.startswith("mkdir e\x1b[2K\rD\tf\nz/../.codex: ") for x in r) else 1)' "$CT/s.json" ||
    die "the JSON does not hold the path as it was: $(json_get "$CT/s.json" refusals)"
  assert_absent "$WS/.codex"
}

# need_nested_userns: skip unless the command can make a user namespace of its own (root
# cannot: the kernel wants CAP_SETFCAP to map uid 0).
need_nested_userns() {
  crun run -- unshare -Urm true
  [ "$RC" = 0 ] || skip_case "the command cannot create a nested user namespace here ($(head -c 200 "$ERRF"))"
}

t_kernel_overlay_refused() {
  # a kernel overlay mounted in a namespace of the command's own creates its files in the
  # upper directory itself, out of the supervisor's sight: refused; tmpfs and proc work
  need_nested_userns
  crun run -- unshare -Urm sh -c 'mkdir -p l u w m t
mount -t overlay overlay -o lowerdir=l,upperdir=u,workdir=w m 2>/dev/null && mkdir m/.git && echo "overlay made .git"
mount -t tmpfs -o size=1m none t && touch t/in-tmpfs && echo tmpfs-ok'
  assert_not_contains "$OUT" "overlay made" "a kernel overlay in a nested namespace"
  assert_absent "$WS/u/.git" "a .git made through a kernel overlay's upper directory"
  assert_contains "$OUT" "tmpfs-ok" "positive control: a tmpfs of the command's own"
  assert_contains "$ERR" "cordon: refused mount overlay"
  # the new mount API the same way
  crun run -- unshare -Urmpf --mount-proc sh -c 'ps -e | wc -l'
  [ "$RC" = 0 ] || die "a fresh /proc in a nested PID namespace: $(last_run)"
  [ "$(printf '%s\n' "$OUT" | tail -n 1 | tr -d ' ')" -le 4 ] || die "the nested /proc shows more than the nested namespace's processes: $OUT"
}

t_bubblewrap_inside() {
  # a nested bubblewrap works (tmpfs, proc, devpts, id maps of a nested user namespace),
  # and cordon's protections hold inside it
  need_nested_userns
  command -v bwrap >/dev/null || skip_case "bwrap not found (./bootstrap.sh installs bubblewrap)"
  crun run --base host -- bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind "$WS" "$WS" \
    --unshare-user --unshare-pid --unshare-net --die-with-parent sh -c 'cd "$1"; echo in-bwrap; touch ok;
mkdir .codex 2>/dev/null && echo made-codex; git init -q 2>/dev/null && echo made-repo; exit 0' sh "$WS"
  [ "$RC" = 0 ] || die "bwrap inside cordon: $(last_run)"
  assert_contains "$OUT" "in-bwrap"
  assert_not_contains "$OUT" "made-codex" "a protected name, from inside a nested bubblewrap"
  assert_not_contains "$OUT" "made-repo" "a new repository, from inside a nested bubblewrap"
  assert_exists "$WS/ok" "positive control: an ordinary file from inside bubblewrap"
  assert_absent "$WS/.codex"
  assert_absent "$WS/.git"
}

esc_build tryops
t_lease_does_not_block() {
  # a read lease makes an open for writing wait for its holder (lease-break-time, 45 s
  # by default): the supervisor's own open must not wait, or every other command's calls
  # stall behind it. The holder keeps its lease 8 s; a mkdir meanwhile must return well
  # before (under 4 s, however loaded the machine: it returns in milliseconds).
  echo x >"$WS/leased"
  crun run -- python3 -c '
import fcntl, os, signal, subprocess, threading, time
signal.signal(signal.SIGIO, lambda *a: None)
fd = os.open("leased", os.O_RDONLY)
fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
threading.Timer(8, lambda: fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)).start()
w = subprocess.Popen(["sh", "-c", "echo y >>leased"])
time.sleep(0.5)
t = time.monotonic()
os.mkdir("after")
print("mkdir-ms %d" % ((time.monotonic() - t) * 1000))
w.wait()
print("writer-rc %d" % w.returncode)
print("content " + open("leased").read().replace("\n", ","))'
  [ "$RC" = 0 ] || die "the lease program failed: $(last_run)"
  local ms
  ms=$(printf '%s\n' "$OUT" | awk '$1 == "mkdir-ms" { print $2 }')
  [ -n "$ms" ] || die "no timing: $(last_run)"
  [ "$ms" -lt 4000 ] || die "a mkdir waited ${ms} ms behind an open that breaks a lease (the supervisor blocked)"
  # positive control: the writer did get through once the lease was gone
  assert_contains "$OUT" "writer-rc 0"
  assert_contains "$OUT" "content x,y,"
  assert_exists "$WS/after"
}

run_case race_rewrites_the_path t_race_rewrites_the_path
run_case own_listener_refused t_own_listener_refused
run_case setid_refused t_setid_refused
run_case setid_hardlink_refused t_setid_hardlink_refused
run_case openat2_and_landlock_enosys t_openat2_and_landlock_enosys
run_case refusals_reported t_refusals_reported
run_case refusal_names_quoted t_refusal_names_quoted
run_case kernel_overlay_refused t_kernel_overlay_refused
run_case bubblewrap_inside t_bubblewrap_inside
run_case lease_does_not_block t_lease_does_not_block
finish
