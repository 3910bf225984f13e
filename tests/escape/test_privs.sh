#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A setuid binary gains nothing inside: every mount of the view is nosuid and the command
# runs with no_new_privs, so the set-user-ID and set-group-ID bits are ignored on exec.
# As root, the test makes the binaries itself and shows on the host that they work: a
# setuid-root program run by uid 65534 (through setpriv) and a program set-user-ID to
# another user run by root. Inside, the effective ids stay the caller's.
. "$(dirname "$0")/lib.sh"
esc_build tryops

UNPRIV=65534

# make_suid OWNER: $CT/suid/ids, a copy of tryops, set-user-ID and set-group-ID OWNER.
make_suid() {
  [ "$MY_UID" = 0 ] || skip_case "only root can make a set-user-ID program owned by another user; the root pass of this file runs it"
  mkdir -p "$CT/suid"
  chmod 0755 "$CT/suid"
  cp "$BIN/tryops" "$CT/suid/ids"
  chown "$1:$1" "$CT/suid/ids"
  chmod 6755 "$CT/suid/ids"
}

t_setuid_root_program() {
  make_suid 0
  command -v setpriv >/dev/null || skip_case "setpriv not found"
  local as_user=(setpriv --reuid="$UNPRIV" --regid="$UNPRIV" --clear-groups --inh-caps=-all)
  # positive control: on the host, uid 65534 becomes root through it
  "${as_user[@]}" "$CT/suid/ids" ids ids >"$OUTF" 2>&1 || true
  OUT=$(cat "$OUTF")
  [ "$(detail ids)" = "uid=$UNPRIV/0/0 gid=$UNPRIV/0/0" ] ||
    skip_case "setuid bits do not work on the host here (nosuid mount?): $OUT"
  RC=0
  "${as_user[@]}" timeout -k 3 "$WATCHDOG" "$CORDON" run --no-workspace --chdir / --allow-ro "$CT/suid" -- \
    "$CT/suid/ids" ids ids status nnp NoNewPrivs >"$OUTF" 2>"$ERRF" || RC=$?
  OUT=$(cat "$OUTF")
  [ "$RC" = 0 ] || die "cordon run as uid $UNPRIV: expected exit 0, got $(last_run)"
  assert_eq "$(detail ids)" "uid=$UNPRIV/$UNPRIV/$UNPRIV gid=$UNPRIV/$UNPRIV/$UNPRIV" "ESCAPE: ids of a setuid-root program run inside"
  assert_eq "$(detail nnp)" 1 "NoNewPrivs inside"
}

t_setuid_other_user() {
  # root running a program set-user-ID to another user: it would become that user
  make_suid 4242
  "$CT/suid/ids" ids ids >"$OUTF" 2>&1 || true
  OUT=$(cat "$OUTF")
  [ "$(detail ids)" = "uid=0/4242/4242 gid=0/4242/4242" ] || skip_case "setuid bits do not work on the host here: $OUT"
  crun run --allow-ro "$CT/suid" -- "$CT/suid/ids" ids ids
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$(detail ids)" "uid=0/0/0 gid=0/0/0" "ids of a program set-user-ID to uid 4242 run inside by root"
}

t_nosuid_and_nnp() {
  # whoever runs it: no mount of the view honours set-user-ID bits, and no_new_privs is
  # set, so neither a host setuid program (su, mount, passwd under /usr) nor one the
  # command writes into its workspace can raise privileges
  local base
  for base in system host; do
    crun run --base "$base" --allow-ro "$BIN" -- "$BIN/tryops" status nnp NoNewPrivs
    [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
    assert_eq "$(detail nnp)" 1 "NoNewPrivs inside (--base $base)"
    crun run --base "$base" -- cat /proc/self/mountinfo
    [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
    # the mount options are field 6; every mount (but /proc's, which is nosuid too) must say nosuid
    local bad
    bad=$(printf '%s\n' "$OUT" | awk '$6 !~ /(^|,)nosuid(,|$)/ { print $5 " " $6 }')
    [ -z "$bad" ] || die "mounts without nosuid inside (--base $base): $(printf '%s' "$bad" | head -n 5)"
    [ "$(printf '%s\n' "$OUT" | wc -l)" -ge 3 ] || die "mountinfo inside looks wrong: $OUT"
  done
}

run_case setuid_root_program t_setuid_root_program
run_case setuid_other_user t_setuid_other_user
run_case nosuid_and_nnp t_nosuid_and_nnp
finish
