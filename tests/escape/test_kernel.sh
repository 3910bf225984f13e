#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Kernel interfaces that namespaces do not cover, refused by cordon's seccomp filter
# (issue 4): io_uring (its operations are not system calls, so no filter sees them),
# AF_VSOCK sockets (they reach the hypervisor and other VMs from any network namespace)
# and the kernel keyrings (not namespaced: the caller's session keyring, with its
# Kerberos tickets or fscrypt keys, is inherited through every namespace). Each must fail
# with EPERM inside. Positive controls: on the host, without cordon, the same program
# sets up an io_uring, makes a vsock socket and reads the key; inside, Unix and IP
# sockets still work.
. "$(dirname "$0")/lib.sh"
esc_build kernel keys

t_io_uring() {
  local host
  host_run kernel
  host=$(result io_uring_setup)
  esc_ok -- kernel
  want_ok control_unix
  want_ok control_inet
  want_refused io_uring_setup EPERM
  [ "$host" = ok ] || skip_case "refused inside, but the host refuses io_uring too ($host; kernel.io_uring_disabled?), so the control cannot show it works"
}

t_vsock() {
  local host base
  host_run kernel
  host=$(result vsock_stream)
  for base in system host; do
    esc_ok --base "$base" -- kernel
    want_ok control_unix
    want_refused vsock_stream EPERM EAFNOSUPPORT
    want_refused vsock_dgram EPERM EAFNOSUPPORT ENODEV
  done
  esc_ok --network host -- kernel
  want_refused vsock_stream EPERM EAFNOSUPPORT
  [ "$host" = ok ] || skip_case "refused inside, but this host has no vsock either ($host), so the control cannot show it works"
}

t_keyring() {
  local desc=cordon-escape-$$-$RANDOM secret=keyring-secret-$RANDOM$RANDOM
  # positive control: in the same kind of session, without cordon, the key is read
  host_run keys host "$desc" "$secret" -- "$BIN/keys" attack "$desc" "$secret"
  [ "$RC" = 0 ] || skip_case "cannot make a session keyring on this host: $(head -c 300 "$ERRF")"
  assert_contains "$OUT" "secret FOUND" "positive control: the key is not readable on the host, so the test proves nothing"
  # the same session, through cordon
  RC=0
  "$BIN/keys" host "$desc" "$secret" -- timeout -k 3 "$WATCHDOG" "$CORDON" run --allow-ro "$BIN" -- \
    "$BIN/keys" attack "$desc" "$secret" >"$OUTF" 2>"$ERRF" || RC=$?
  OUT=$(cat "$OUTF")
  ERR=$(cat "$ERRF")
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_contains "$OUT" "secret absent" "ESCAPE: the caller's session key was read inside the sandbox"
  local l
  for l in get_session_keyring read_session_keyring read_user_keyring read_user_session_keyring \
    search_session search_user request_key add_key; do
    want_refused "$l" EPERM
  done
}

run_case io_uring t_io_uring
run_case vsock t_vsock
run_case keyring t_keyring
finish
