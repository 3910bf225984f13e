#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The environment passlist, --env/--keep-env/--clear-env, inherited descriptors, and the
# working directory (--chdir, default the current directory).
. "$(dirname "$0")/lib.sh"

env_has() { printf '%s\n' "$OUT" | grep -qx -- "$1"; }
env_has_name() { printf '%s\n' "$OUT" | grep -q -- "^$1="; }

t_passlist() {
  export SECRET_TOKEN=hunter2 AWS_SECRET_ACCESS_KEY=aws-secret GITHUB_TOKEN=gh-secret FOOBAR=1
  export LANG=C.UTF-8 TERM=xterm-e2e LC_TIME=C.UTF-8 TZ=UTC USER=e2e-user LOGNAME=e2e-user
  export PATH=/usr/bin:/bin
  crun run -- /usr/bin/env
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  local v bad=""
  for v in SECRET_TOKEN AWS_SECRET_ACCESS_KEY GITHUB_TOKEN FOOBAR CORDON; do
    env_has_name "$v" && bad+=" $v leaked in;"
  done
  for v in PATH=/usr/bin:/bin LANG=C.UTF-8 TERM=xterm-e2e LC_TIME=C.UTF-8 TZ=UTC USER=e2e-user LOGNAME=e2e-user; do
    env_has "$v" || bad+=" $v not passed;"
  done
  [ -z "$bad" ] || die "environment inside:$bad"
}

t_env_set() {
  expect_output "b|x=y|over" run --env A=b --env=C=x=y --env LANG=over -- sh -c 'echo "$A|$C|$LANG"'
}

t_env_empty_value() {
  expect_output "set:" run --env EMPTY= -- sh -c 'echo "${EMPTY+set}:$EMPTY"'
}

t_keep_env() {
  export SECRET_TOKEN=hunter2 OTHER_SECRET=nope
  crun run --keep-env SECRET_TOKEN -- /usr/bin/env
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  env_has SECRET_TOKEN=hunter2 || die "--keep-env SECRET_TOKEN did not pass it"
  ! env_has_name OTHER_SECRET || die "OTHER_SECRET leaked in"
  expect_output "hunter2" run --keep-env=SECRET_TOKEN -- sh -c 'echo "$SECRET_TOKEN"'
}

t_clear_env() {
  export LANG=C.UTF-8 TERM=xterm-e2e
  crun run --clear-env -- /usr/bin/env
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  local bad=""
  for v in PATH LANG TERM USER LOGNAME; do env_has_name "$v" && bad+=" $v"; done
  [ -z "$bad" ] || die "--clear-env still passes:$bad"
  crun run --clear-env --env ONLY=1 -- /usr/bin/env
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  env_has ONLY=1 || die "--clear-env --env ONLY=1: ONLY missing ($(printf '%s' "$OUT" | _one_line))"
  env_has_name PATH && die "--clear-env --env ONLY=1 passes PATH"
  return 0
}

t_no_inherited_fds() {
  : >"$CT/fd7"
  crun run -- ls /proc/self/fd 5</etc/passwd 7>"$CT/fd7" 9<"$CT/fd7"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  local fds
  fds=$(printf '%s\n' "$OUT" | sort -n | tr '\n' ' ' | sed 's/ $//')
  # 0 1 2, plus the one descriptor ls opens to read the directory
  assert_eq "$fds" "0 1 2 3" "descriptors open inside"
  crun run -- sh -c 'echo leaked >&7' 7>"$CT/fd7"
  [ ! -s "$CT/fd7" ] || die "the command wrote to an inherited descriptor 7"
}

t_cwd_default() {
  mkdir -p "$WS/sub/dir"
  expect_output "$WS" run -- pwd
  cd "$WS/sub/dir"
  expect_output "$WS/sub/dir" run --workspace "$WS" -- pwd
  expect_output "$WS/sub/dir" run -- pwd
}

t_chdir() {
  mkdir -p "$WS/sub"
  expect_output "$WS/sub" run --chdir "$WS/sub" -- pwd
  expect_output "/usr/bin" run --chdir=/usr/bin -- pwd
}

t_chdir_outside_view_125() {
  expect_exit 125 run --chdir "$OUTSIDE" -- sh -c 'touch "$1"' sh "$WS/marker"
  assert_cordon_stderr
  assert_absent "$WS/marker" "the command ran despite --chdir outside the view"
  assert_absent "$OUTSIDE/marker"
}

t_chdir_missing_125() {
  expect_exit 125 run --chdir "$WS/does-not-exist" -- sh -c 'touch "$1"' sh "$WS/marker"
  assert_cordon_stderr
  assert_absent "$WS/marker" "the command ran despite a missing --chdir"
  assert_absent "$WS/does-not-exist" "--chdir created the missing directory on the host"
}

t_chdir_into_denied_125() {
  mkdir -p "$WS/secret/sub"
  expect_exit 125 run --deny "$WS/secret" --chdir "$WS/secret/sub" -- sh -c 'touch "$1"' sh "$WS/marker"
  assert_cordon_stderr
  assert_absent "$WS/marker"
}

t_chdir_through_link_to_outside() {
  ln -s "$OUTSIDE" "$WS/out-link"
  crun run --chdir "$WS/out-link" -- sh -c 'ls -A; cat secret 2>/dev/null; exit 0'
  case $RC in
    125) assert_cordon_stderr ;;
    0) ;;
    *) die "expected 125 (refused) or 0, got $(last_run)" ;;
  esac
  assert_not_contains "$OUT" "secret" "--chdir through a link to a host directory outside the view exposed it"
}

run_case passlist t_passlist
run_case env_set t_env_set
run_case env_empty_value t_env_empty_value
run_case keep_env t_keep_env
run_case clear_env t_clear_env
run_case no_inherited_fds t_no_inherited_fds
run_case cwd_default t_cwd_default
run_case chdir t_chdir
run_case chdir_outside_view_125 t_chdir_outside_view_125
run_case chdir_missing_125 t_chdir_missing_125
run_case chdir_into_denied_125 t_chdir_into_denied_125
run_case chdir_through_link_to_outside t_chdir_through_link_to_outside
finish
