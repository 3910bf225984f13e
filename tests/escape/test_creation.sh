#!/usr/bin/env bash
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

esc_build tryops
run_case race_rewrites_the_path t_race_rewrites_the_path
run_case own_listener_refused t_own_listener_refused
run_case setid_refused t_setid_refused
run_case setid_hardlink_refused t_setid_hardlink_refused
run_case openat2_and_landlock_enosys t_openat2_and_landlock_enosys
run_case refusals_reported t_refusals_reported
finish
