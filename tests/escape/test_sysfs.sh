#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes to the kernel's configuration: /sys (shown read-only under --base host, absent
# under --base system), the host's cgroup hierarchies, /proc/sys and /proc/sysrq-trigger
# (cordon's fresh /proc keeps them read-only, as bubblewrap does: a root caller's uid 0 is
# the host's root, whom sysctl permissions trust), and the same through file systems the
# command mounts itself in user namespaces of its own (sysfs, proc, cgroup2). Files are
# only opened for writing, never written. Positive controls: the same files read fine,
# and a /proc file the kernel lets the command write (its own comm) opens for writing.
. "$(dirname "$0")/lib.sh"
esc_build tryops sysw

# Host files to try: kernel settings, cgroup control files (v2 and v1, whichever exist).
host_sys_files() {
  local f cg
  for f in /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/uevent_helper \
    /sys/power/state /sys/module/printk/parameters/time; do
    [ -f "$f" ] && echo "$f"
  done
  awk '$9 == "cgroup2" || $9 == "cgroup" { print $5 }' /proc/self/mountinfo | while read -r cg; do
    for f in cgroup.subtree_control cgroup.procs tasks release_agent cgroup.pressure memory.max pids.max; do
      [ -f "$cg/$f" ] && echo "$cg/$f"
    done
  done | head -n 12
}

t_sys_writes_base_host() {
  local files=() ops=() f i=0
  mapfile -t files < <(host_sys_files)
  [ ${#files[@]} -gt 0 ] || skip_case "this host shows no /sys file to try"
  for f in "${files[@]}"; do
    ops+=(openw "w$i" "$f" read "r$i" "$f")
    i=$((i + 1))
  done
  esc_ok --base host -- tryops "${ops[@]}"
  for ((i = 0; i < ${#files[@]}; i++)); do
    # positive control: the file is there and readable (write-only files excepted)
    case $(result "r$i") in ok | EACCES | EINVAL | EPERM) ;; *) die "positive control: ${files[$i]} is not visible under --base host ($(result "r$i"))" ;; esac
    [ "$(result "w$i")" != ok ] || die "ESCAPE: ${files[$i]} opened for writing inside the sandbox"
    want_refused "w$i" EROFS EACCES EPERM
  done
}

t_sys_absent_base_system() {
  esc_ok -- tryops ls sys /sys ls control_usr /usr openw thp /sys/kernel/mm/transparent_hugepage/enabled
  want_ok control_usr
  want_refused sys ENOENT
  want_refused thp ENOENT
}

t_proc_sys_writes() {
  # global settings (those this kernel has); the sandbox's /proc is its own, but /proc/sys
  # is the host's kernel
  local files=() ops=() f i base
  for f in /proc/sys/vm/drop_caches /proc/sys/kernel/core_pattern /proc/sysrq-trigger \
    /proc/sys/kernel/modprobe /proc/sys/kernel/sysrq /proc/sys/fs/protected_hardlinks; do
    [ -e "$f" ] && files+=("$f")
  done
  [ ${#files[@]} -gt 0 ] || skip_case "no global /proc setting found on this host"
  for ((i = 0; i < ${#files[@]}; i++)); do ops+=(openw "w$i" "${files[$i]}"); done
  for base in system host; do
    esc_ok --base "$base" -- tryops openw control_comm /proc/self/comm \
      read control_read_core_pattern /proc/sys/kernel/core_pattern "${ops[@]}"
    want_ok control_comm
    want_ok control_read_core_pattern
    for ((i = 0; i < ${#files[@]}; i++)); do
      [ "$(result "w$i")" != ok ] || die "ESCAPE: ${files[$i]} opened for writing inside the sandbox (--base $base)"
      want_refused "w$i" EROFS EACCES
    done
  done
}

t_nested_cgroup2() {
  # a cgroup namespace and a cgroup2 mount of its own show the host's cgroup tree from
  # cordon's cgroup down; none of its files may be writable, no cgroup may be made
  mkdir "$WS/scratch"
  esc_ok -- sysw cgroup "$WS/scratch"
  case $(result unshare) in ok) ;; *) skip_case "new user namespaces refused inside" ;; esac
  [ "$(result cgroup2_mount)" = ok ] || return 0 # refused: nothing to write through
  if [ "$(result cgroup_files)" = ok ]; then
    # the files belong to the owner of cordon's cgroup on the host; when that is the
    # caller (always for root), a command can write them (doc/security.md)
    die "ESCAPE: from a cgroup namespace of its own the command can open the host's cgroup files for writing: $(detail cgroup_files | cut -c1-200)"
  fi
  want_refused cgroup_files EACCES EPERM EROFS NOFILES
  want_refused cgroup_mkdir EACCES EPERM EROFS
}

t_nested_cgroup2_limits() {
  # with resource limits in a cgroup of the run's own, the command's cgroup namespace is
  # rooted in a leaf below the cgroup that holds pids.max and memory.max: a cgroup2 mount
  # of its own must not show those limits (what it can write there is its own leaf)
  mkdir "$WS/scratch"
  esc --limit-pids 64 --limit-memory 512M --status-json "$CT/status.json" -- sysw cgroup "$WS/scratch"
  local mech
  mech=$(json_get "$CT/status.json" limits | "$PY" -c 'import json,sys; print((json.load(sys.stdin) or {}).get("mechanism", ""))' 2>/dev/null || true)
  case $mech in
    cgroup2*) ;;
    "") [ "$RC" = 0 ] || skip_case "the limits cannot be enforced here ($(last_run))"
      skip_case "no limit mechanism reported" ;;
    *) skip_case "limits enforced by $mech here, not cgroup2: cgroup v1 cannot be mounted in a user namespace and rlimits are not files" ;;
  esac
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  case $(result unshare) in ok) ;; *) skip_case "new user namespaces refused inside" ;; esac
  [ "$(result cgroup2_mount)" = ok ] || return 0
  # 64 processes for the command, +1 for cordon's PID 1; 512 MiB
  if [ "$(detail cgroup_r_pids.max)" = 65 ]; then want_refused cgroup_w_pids.max EPERM EACCES EROFS; fi
  if [ "$(detail cgroup_r_memory.max)" = 536870912 ]; then want_refused cgroup_w_memory.max EPERM EACCES EROFS; fi
}

t_nested_cgroup2_no_nested() {
  # --no-nested refuses the user namespace the attack above starts from
  mkdir "$WS/scratch"
  esc_ok --no-nested -- sysw cgroup "$WS/scratch"
  want_refused unshare EPERM
}

t_nested_sysfs_proc() {
  # proc may only be mounted where one is already fully visible, and then no less
  # read-only: a proc of its own works for an unprivileged caller (cordon leaves /proc
  # fully visible for nested sandboxes then), whose global settings belong to the host's
  # root.  sysfs is refused by cordon itself, by fsopen and by mount alike: the kernel
  # would allow a read-write one wherever it finds a sysfs mount it deems fully visible
  # and not locked read-only (under systemd-nspawn, and tests/move-root.sh, which enters
  # a root the same way: the host's /sys stays in the mount namespace, out of sight), and
  # a root caller would then write the kernel's global settings
  mkdir "$WS/scratch"
  local base
  for base in system host; do
    esc_ok --base "$base" -- sysw sysfs "$WS/scratch"
    case $(result unshare) in ok) ;; *) skip_case "new user namespaces refused inside" ;; esac
    want_refused sysfs_fsopen EPERM
    want_refused sysfs_mount_rw EPERM
    want_refused sysfs_mount_ro EPERM
    assert_contains "$ERR" "refused mount sysfs" "cordon's own refusal of a nested sysfs (--base $base)"
    esc_ok --base "$base" -- sysw proc "$WS/scratch"
    if [ "$(result proc_mount)" = ok ]; then
      # a root caller's nested proc shows only processes (subset=pid): no sysctl at all
      want_refused proc_drop_caches EROFS EACCES ENOENT
      want_refused proc_core_pattern EROFS EACCES ENOENT
      want_refused proc_sysrq_trigger EROFS EACCES ENOENT
    else
      # where cordon's /proc is the only one (its read-only overmounts for a root caller
      # leave none fully visible), the kernel refuses it; not under tests/move-root.sh,
      # whose hidden /proc it counts
      [ -z "${CORDON_TEST_MOVE_ROOT:-}" ] || die "a nested proc was refused under tests/move-root.sh: no control"
      want_refused proc_mount EPERM
    fi
  done
}

run_case sys_writes_base_host t_sys_writes_base_host
run_case sys_absent_base_system t_sys_absent_base_system
run_case proc_sys_writes t_proc_sys_writes
run_case nested_cgroup2 t_nested_cgroup2
run_case nested_cgroup2_limits t_nested_cgroup2_limits
run_case nested_cgroup2_no_nested t_nested_cgroup2_no_nested
run_case nested_sysfs_proc t_nested_sysfs_proc
finish
