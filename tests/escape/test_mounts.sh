#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Undoing the mounts that hide (--deny) and protect (read-only binds): umount2, remount
# read-write, mount_setattr clearing MOUNT_ATTR_RDONLY, MS_MOVE, a non-recursive bind of
# the parent of a hiding mount (which would show what it covers), a new mount on top.
# "direct" tries as the command is (no capabilities: EPERM); "nested" first makes a user
# and mount namespace of its own, as `unshare -Urm` does, where it holds CAP_SYS_ADMIN but
# every inherited mount is locked (umount: EINVAL; clearing read-only: EPERM); a tmpfs of
# its own on a hidden directory only hides more. The host copies stay unchanged.
. "$(dirname "$0")/lib.sh"
esc_build mounts

setup_targets() {
  mkdir -p "$WS/hidden" "$WS/scratch" "$CT/ro"
  echo "host secret behind a deny" >"$WS/hidden/secret"
  echo "host secret file behind a deny" >"$WS/token.env"
  echo "read-only content" >"$CT/ro/file"
  chmod 0755 "$WS/hidden" "$WS/scratch" "$CT/ro"
  BEFORE_HIDDEN=$(snapshot "$WS/hidden" strict)
  BEFORE_RO=$(snapshot "$CT/ro" strict)
  BEFORE_TOKEN=$(md5sum <"$WS/token.env")
  RULES=(--deny "$WS/hidden" --deny "$WS/token.env" --allow-ro "$CT/ro")
}

check_host() {
  assert_unchanged "$BEFORE_HIDDEN" "$WS/hidden" "the denied directory changed on the host" strict
  assert_unchanged "$BEFORE_RO" "$CT/ro" "the read-only directory changed on the host" strict
  assert_eq "$(md5sum <"$WS/token.env")" "$BEFORE_TOKEN" "the denied file changed on the host"
}

# what must hold at the end of either mode, with prefix P ("" or "nested_")
final_expect() {
  local p=$1
  want_refused "${p}deny_dir_content" ENOENT
  want_refused "${p}deny_file_content" EMPTY
  want_refused "${p}ro_write" EROFS
}

t_direct() {
  setup_targets
  esc_ok "${RULES[@]}" -- mounts direct "$WS/hidden" secret "$WS/token.env" "$CT/ro" "$WS/scratch"
  local l
  for l in umount_deny_dir umount_deny_dir_detach umount_deny_file_detach umount_ro_detach \
    remount_ro_rw remount_root_rw remount_deny_dir_rw setattr_ro_clear_rdonly \
    setattr_root_clear_rdonly_rec setattr_deny_file_clear_rdonly move_deny_dir \
    open_tree_parent_nonrecursive bind_parent_nonrecursive tmpfs_over_deny_dir; do
    want_refused "$l" EPERM
  done
  final_expect ""
  check_host
}

# nested_expect: the attempts after `unshare -Urm` inside.
nested_expect() {
  case $(result unshare_user_mount) in
    ok) ;;
    "") die "the attack program did not report 'unshare_user_mount' ($(last_run))" ;;
    *) skip_case "the sandbox refuses new user namespaces ($(result unshare_user_mount)): the nested attack cannot start" ;;
  esac
  # positive control: in its own namespaces the command may mount, so the refusals below
  # come from the locks on the sandbox's mounts, not from a missing capability
  want_ok make_private
  want_ok control_tmpfs_on_scratch
  local l
  # locked mounts cannot be unmounted or moved (EINVAL); EPERM where Landlock forbids
  # mounting altogether
  for l in umount_deny_dir umount_deny_dir_detach umount_deny_file_detach umount_ro_detach \
    move_deny_dir open_tree_parent_nonrecursive bind_parent_nonrecursive; do
    want_refused "nested_$l" EINVAL EPERM
  done
  # locked read-only flags cannot be cleared
  for l in remount_ro_rw remount_root_rw remount_deny_dir_rw setattr_ro_clear_rdonly \
    setattr_root_clear_rdonly_rec setattr_deny_file_clear_rdonly; do
    want_refused "nested_$l" EPERM EINVAL
  done
  if [ "$(result nested_recursive_clone)" = "" ]; then
    want_refused nested_umount_deny_in_recursive_clone EINVAL EPERM
    want_refused nested_recursive_clone_reveals ENOENT
  fi
  # a mount of its own over the hidden directory may work, but shows nothing of it
  want_refused nested_tmpfs_over_deny_dir_reveals ENOENT
  final_expect nested_
}

t_nested() {
  setup_targets
  esc_ok "${RULES[@]}" -- mounts nested "$WS/hidden" secret "$WS/token.env" "$CT/ro" "$WS/scratch"
  nested_expect
  check_host
}

t_nested_no_nested() {
  # with --no-nested the user namespace is refused (seccomp) and Landlock forbids every
  # mount change: the direct attempts fail as before
  setup_targets
  esc_ok --no-nested "${RULES[@]}" -- mounts nested "$WS/hidden" secret "$WS/token.env" "$CT/ro" "$WS/scratch"
  want_refused unshare_user_mount EPERM
  esc_ok --no-nested "${RULES[@]}" -- mounts direct "$WS/hidden" secret "$WS/token.env" "$CT/ro" "$WS/scratch"
  local l
  for l in umount_deny_dir remount_ro_rw setattr_ro_clear_rdonly move_deny_dir \
    open_tree_parent_nonrecursive bind_parent_nonrecursive tmpfs_over_deny_dir; do
    want_refused "$l" EPERM ENOSYS
  done
  final_expect ""
  check_host
}

t_nested_unshare_tool() {
  # the same with util-linux's unshare(1) and mount(8), as a user would type it. Unprivileged,
  # the shell it starts holds every capability over its new namespaces; as root, the kernel
  # refuses the uid map (mapping the parent's uid 0 needs CAP_SETFCAP there), so unshare
  # itself fails. Whatever it manages, the hidden and read-only paths stay so.
  setup_targets
  crun run "${RULES[@]}" -- sh -c '
    unshare -Urm sh -c "
      umount -l \"\$1\" 2>/dev/null; echo \"umount \$?\"
      mount -o remount,rw,bind \"\$2\" 2>/dev/null; echo \"remount \$?\"
      mount -t tmpfs none \"\$1\" 2>/dev/null; echo \"tmpfs \$?\"
      cat \"\$1/secret\" 2>/dev/null && echo LEAK
      umount \"\$1\" 2>/dev/null
      cat \"\$1/secret\" 2>/dev/null && echo LEAK
      [ -s \"\$3\" ] && echo LEAK-FILE
      (echo x >\"\$2/new\") 2>/dev/null && echo RO-WRITTEN
      exit 0" sh "$1" "$2" "$3" 2>/dev/null
    echo "unshare $?"
    cat "$1/secret" 2>/dev/null && echo LEAK
    (echo x >"$2/new") 2>/dev/null && echo RO-WRITTEN
    echo done' sh "$WS/hidden" "$CT/ro" "$WS/token.env"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_contains "$OUT" "done"
  assert_not_contains "$OUT" LEAK "the hidden content was read after unshare -Urm"
  assert_not_contains "$OUT" RO-WRITTEN "the read-only bind was written after unshare -Urm"
  if [ "$MY_UID" != 0 ]; then
    assert_contains "$OUT" "unshare 0" "unshare -Urm failed inside (nesting is allowed by default)"
    assert_not_contains "$OUT" "umount 0" "umount -l of a hidden path worked after unshare -Urm"
    assert_not_contains "$OUT" "remount 0" "remount,rw of a read-only bind worked after unshare -Urm"
  fi
  check_host
}

t_direct_base_host() {
  # under --base host the root itself is the host's root, bound read-only
  local d
  d=$(scratch_outside_tmp)
  mkdir "$d/hidden"
  echo "host secret behind a deny" >"$d/hidden/secret"
  echo "host secret file behind a deny" >"$d/token.env"
  mkdir "$WS/scratch"
  local before
  before=$(snapshot "$d" strict)
  esc_ok --base host --deny "$d/hidden" --deny "$d/token.env" -- mounts direct "$d/hidden" secret \
    "$d/token.env" / "$WS/scratch"
  want_refused remount_root_rw EPERM
  want_refused setattr_root_clear_rdonly_rec EPERM
  want_refused umount_deny_dir EPERM
  want_refused move_deny_dir EPERM
  final_expect ""
  assert_unchanged "$before" "$d" "a host directory changed" strict
}

t_nested_base_host() {
  local d
  d=$(scratch_outside_tmp)
  mkdir "$d/hidden"
  echo "host secret behind a deny" >"$d/hidden/secret"
  echo "host secret file behind a deny" >"$d/token.env"
  mkdir "$WS/scratch"
  local before
  before=$(snapshot "$d" strict)
  esc_ok --base host --deny "$d/hidden" --deny "$d/token.env" -- mounts nested "$d/hidden" secret \
    "$d/token.env" / "$WS/scratch"
  case $(result unshare_user_mount) in ok) ;; *) skip_case "new user namespaces refused inside" ;; esac
  want_ok control_tmpfs_on_scratch
  want_refused nested_remount_root_rw EPERM
  want_refused nested_setattr_root_clear_rdonly_rec EPERM
  want_refused nested_umount_deny_dir EINVAL EPERM
  want_refused nested_umount_deny_file_detach EINVAL EPERM
  want_refused nested_move_deny_dir EINVAL EPERM
  want_refused nested_open_tree_parent_nonrecursive EINVAL EPERM
  want_refused nested_bind_parent_nonrecursive EINVAL EPERM
  want_refused nested_tmpfs_over_deny_dir_reveals ENOENT
  final_expect nested_
  assert_unchanged "$before" "$d" "a host directory changed" strict
}

run_case direct t_direct
run_case nested t_nested
run_case nested_no_nested t_nested_no_nested
run_case nested_unshare_tool t_nested_unshare_tool
run_case direct_base_host t_direct_base_host
run_case nested_base_host t_nested_base_host
finish
