#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Hard links out of read-only and denied paths: a hard link of a read-only file made in
# the writable workspace would be a writable name for it, one of a denied file a readable
# one. link(2) never crosses mounts (EXDEV), and a denied path is a mount of an empty file
# or directory: its host inode is not reachable to link. Positive control: a hard link
# inside the workspace works.
. "$(dirname "$0")/lib.sh"
esc_build tryops

t_hardlink_out_of_readonly() {
  mkdir "$CT/ro"
  echo "read-only content" >"$CT/ro/file"
  chmod 0755 "$CT/ro"
  echo "own" >"$WS/own"
  local before
  before=$(snapshot "$CT/ro" strict)
  esc_ok --allow-ro "$CT/ro" -- tryops \
    link control_link "$WS/own" "$WS/own.link" \
    link link_ro "$CT/ro/file" "$WS/ro.link" \
    append write_ro "$CT/ro/file" "changed"
  want_ok control_link
  want_refused link_ro EXDEV EPERM
  want_refused write_ro EROFS
  assert_absent "$WS/ro.link" "a hard link of the read-only file appeared in the workspace"
  assert_unchanged "$before" "$CT/ro" "the read-only directory changed on the host" strict
}

t_hardlink_readonly_via_fd() {
  # the same through /proc/self/fd: the read-only file open on descriptor 0
  mkdir "$CT/ro"
  echo "read-only content" >"$CT/ro/file"
  chmod 0755 "$CT/ro"
  local before
  before=$(snapshot "$CT/ro" strict)
  CRUN_STDIN=$CT/ro/file esc_ok --allow-ro "$CT/ro" -- tryops \
    linkat linkat_proc_fd "/proc/self/fd/0" "$WS/fd.link"
  # descriptor 0 is the host's open file, from a mount the sandbox does not have
  want_refused linkat_proc_fd EXDEV EPERM ENOENT
  assert_absent "$WS/fd.link"
  assert_unchanged "$before" "$CT/ro" "the read-only directory changed on the host" strict
}

t_hardlink_to_denied() {
  mkdir "$WS/hidden"
  echo "host secret" >"$WS/hidden/secret"
  echo "host secret file" >"$WS/token.env"
  esc_ok --deny "$WS/hidden" --deny "$WS/token.env" -- tryops \
    link link_denied_file "$WS/token.env" "$WS/token.link" \
    link link_in_denied_dir "$WS/hidden/secret" "$WS/secret.link" \
    read read_denied_file "$WS/token.env"
  want_refused link_denied_file EXDEV EPERM
  want_refused link_in_denied_dir ENOENT
  assert_eq "$(detail read_denied_file)" "" "the denied file's content inside"
  assert_absent "$WS/token.link"
  assert_absent "$WS/secret.link"
  assert_file_content "$WS/token.env" "host secret file"
}

t_hardlink_base_host_system_file() {
  # under --base host, /etc/passwd is on the same file system as the workspace (often):
  # still a different mount
  esc_ok --base host -- tryops link link_etc_passwd /etc/passwd "$WS/passwd" \
    read control_read /etc/passwd
  [ -n "$(detail control_read)" ] || die "positive control: /etc/passwd not readable under --base host ($OUT)"
  want_refused link_etc_passwd EXDEV EPERM
  assert_absent "$WS/passwd"
}

run_case hardlink_out_of_readonly t_hardlink_out_of_readonly
run_case hardlink_readonly_via_fd t_hardlink_readonly_via_fd
run_case hardlink_to_denied t_hardlink_to_denied
run_case hardlink_base_host_system_file t_hardlink_base_host_system_file
finish
