#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# open_by_handle_at: a file handle names an inode directly, around every mount (the
# "shocker" container escape). The command gets the real handles of a host file and a host
# directory outside its view (taken on the host) and forges one for the root inode of the
# file system; opening any of them through a directory of the view must fail (EPERM:
# CAP_DAC_READ_SEARCH in the initial user namespace is needed, and after issue 4 seccomp
# refuses the call). Also from a user namespace of its own, where the kernel's relaxed
# check (Linux 6.10) could apply. Positive controls: name_to_handle_at works inside (the
# file system hands out handles there) and, as root, the same handles open the files on
# the host.
. "$(dirname "$0")/lib.sh"
esc_build fhandle

get_handles() {
  H_SECRET=$("$BIN/fhandle" get "$OUTSIDE/secret") || skip_case "this file system gives no file handles: $H_SECRET"
  H_OUTSIDE=$("$BIN/fhandle" get "$OUTSIDE")
}

host_control() {
  # as root the handles are good keys on the host: the attack would work without cordon
  [ "$MY_UID" = 0 ] || return 0
  host_run fhandle attack "$CT" "host secret" secret="$H_SECRET"
  [ "$(detail open_secret)" = "file token=FOUND" ] ||
    die "positive control: the host file's handle does not open it on the host, so the test proves nothing ($OUT)"
}

# expect_refused_all PREFIX [ERRNO...]: every open by handle failed (with one of ERRNO).
expect_refused_all() {
  local p=$1
  shift
  want_ok "${p}name_to_handle_at"
  want_refused "${p}open_secret" "$@"
  want_refused "${p}open_outside" "$@"
  [ "$(result "${p}open_forged_root")" = SKIPPED ] || want_refused "${p}open_forged_root" "$@"
}

t_direct() {
  get_handles
  host_control
  esc_ok -- fhandle attack "$WS" "host secret" secret="$H_SECRET" outside="$H_OUTSIDE"
  expect_refused_all "" EPERM
}

t_nested() {
  get_handles
  esc_ok -- fhandle attack nested "$WS" "host secret" secret="$H_SECRET" outside="$H_OUTSIDE"
  case $(result unshare_user_mount) in ok) ;; *) skip_case "new user namespaces refused inside: the nested attack cannot start" ;; esac
  # any refusal will do (EPERM, ESTALE outside the mount's subtree, ...), never an open
  expect_refused_all nested_
}

t_base_host_root() {
  # under --base host the view's root is the host's root file system: the handles are
  # of the same file system as the mount they are opened through
  local d
  d=$(scratch_outside_tmp)
  mkdir "$d/private"
  echo "host secret in a denied directory" >"$d/private/secret"
  H_SECRET=$("$BIN/fhandle" get "$d/private/secret") || skip_case "no file handles on this file system"
  H_OUTSIDE=$("$BIN/fhandle" get "$d/private")
  esc_ok --base host --deny "$d/private" -- fhandle attack / "host secret" secret="$H_SECRET" outside="$H_OUTSIDE"
  expect_refused_all "" EPERM
  esc_ok --base host --deny "$d/private" -- fhandle attack nested / "host secret" secret="$H_SECRET" outside="$H_OUTSIDE"
  case $(result unshare_user_mount) in ok) ;; *) return 0 ;; esac
  expect_refused_all nested_
}

run_case open_by_handle_at t_direct
run_case open_by_handle_at_nested t_nested
run_case open_by_handle_at_base_host t_base_host_root
finish
