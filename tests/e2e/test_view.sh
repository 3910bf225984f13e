#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The filesystem view: only the base and the allowed paths are visible; writes land only
# in writable paths; the base variants (system, host, empty); the minimal /dev.
. "$(dirname "$0")/lib.sh"

t_workspace_visible() {
  echo "hello from the host" >"$WS/hello.txt"
  expect_output "hello from the host" run -- cat "$WS/hello.txt"
  # relative to the default working directory, the workspace
  expect_output "hello from the host" run -- cat hello.txt
}

t_outside_absent() {
  # positive control: the files exist on the host
  assert_exists "$OUTSIDE/secret"
  expect_output "" run -- sh -c "$VISIBLE" sh "$OUTSIDE/secret" "$OUTSIDE"
  expect_exit 1 run -- cat "$OUTSIDE/secret"
}

t_repo_and_binary_absent() {
  local paths=()
  case $CORDON in /usr/*) ;; *) paths+=("$CORDON" "$(dirname "$CORDON")") ;; esac
  case $REPO_ROOT in /usr/* | /tmp/*) ;; *) paths+=("$REPO_ROOT/tests/e2e/lib.sh") ;; esac
  [ ${#paths[@]} -gt 0 ] || skip_case "the binary and the tests live under /usr or /tmp"
  expect_output "" run -- sh -c "$VISIBLE" sh "${paths[@]}"
}

t_system_base_present() {
  expect_ok run -- sh -c 'test -x /usr/bin/true && test -x /bin/sh && test -r /etc/passwd && /usr/bin/true'
  local d
  for d in /bin /sbin /lib /lib64; do
    if [ -L "$d" ]; then
      expect_output "$(readlink "$d")" run -- readlink "$d"
    fi
  done
}

t_host_dirs_hidden() {
  # Directories outside the default view: absent inside, or at most empty (an ancestor of
  # the private HOME or TMPDIR, wherever cordon puts them, is not counted).
  local d dirs=()
  for d in /root /home /opt /srv /var /mnt /media /boot /run /work; do
    [ -d "$d" ] && dirs+=("$d")
  done
  crun run -- sh -c 'for d do case "$HOME/ $TMPDIR/" in "$d"/*|*" $d"/*) continue;; esac; if [ -e "$d" ] && [ -n "$(ls -A "$d" 2>&1)" ]; then echo "$d: $(ls -A "$d" 2>&1 | head -n 3 | tr "\n" " ")"; fi; done' sh "${dirs[@]}"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  [ -z "$OUT" ] || die "host directories visible inside: $OUT"
}

t_writes_outside_fail() {
  local m
  m=$(new_mark)
  crun run -- sh -c "$WRITABLE" sh "/etc/cordon-e2e-$m" "/usr/cordon-e2e-$m" "/usr/bin/cordon-e2e-$m" \
    "$OUTSIDE/secret" "$OUTSIDE/new-$m"
  local wrote=$OUT
  # whatever happened inside, the host must be untouched (clean up if it was not)
  local leaked=""
  for p in "/etc/cordon-e2e-$m" "/usr/cordon-e2e-$m" "/usr/bin/cordon-e2e-$m" "$OUTSIDE/new-$m"; do
    if [ -e "$p" ]; then leaked+=" $p"; rm -f "$p"; fi
  done
  [ -z "$leaked" ] || die "writes inside the sandbox landed on the host:$leaked"
  assert_file_content "$OUTSIDE/secret" "host secret outside the workspace"
  [ -z "$wrote" ] || die "writes outside the writable paths succeeded inside: $(printf '%s' "$wrote" | _one_line)"
}

t_root_writes_stay_inside() {
  local m
  m=$(new_mark)
  crun run -- sh -c 'echo x >"$1" 2>/dev/null; mkdir "$2" 2>/dev/null; exit 0' sh "/cordon-e2e-$m" "/cordon-e2e-dir-$m"
  local leaked=""
  for p in "/cordon-e2e-$m" "/cordon-e2e-dir-$m"; do
    if [ -e "$p" ]; then leaked+=" $p"; rm -rf "$p"; fi
  done
  [ -z "$leaked" ] || die "writes to / inside the sandbox landed on the host:$leaked"
}

t_workspace_writes_land() {
  echo "old" >"$WS/existing"
  echo "bye" >"$WS/todelete"
  expect_ok run -- sh -c 'echo data >new.txt && mkdir -p d/e && echo deep >d/e/f && echo new >existing && rm todelete'
  assert_file_content "$WS/new.txt" "data"
  assert_file_content "$WS/d/e/f" "deep"
  assert_file_content "$WS/existing" "new"
  assert_absent "$WS/todelete" "a file deleted inside the workspace is still on the host"
  assert_eq "$(stat -c %u:%g "$WS/new.txt")" "$MY_UID:$MY_GID" "owner of a file created in the workspace"
}

t_identity_preserved() {
  echo x >"$WS/mine"
  expect_output "$MY_UID $MY_GID $MY_UID:$MY_GID" run -- sh -c 'echo "$(id -u) $(id -g) $(stat -c %u:%g mine)"'
}

t_no_workspace_hides_cwd() {
  echo "ws file" >"$WS/file"
  expect_output "" run --no-workspace --chdir / -- sh -c "$VISIBLE" sh "$WS/file" "$WS"
}

t_no_workspace_cwd_not_visible_fails() {
  # the default working directory is the current one; with --no-workspace it is not
  # visible, so the run must fail before anything starts
  expect_exit 125 run --no-workspace -- sh -c 'touch "$1"' sh "$OUTSIDE/marker"
  assert_cordon_stderr
  assert_absent "$OUTSIDE/marker"
}

t_workspace_flag() {
  local ws2=$CT/ws2
  mkdir "$ws2"
  echo "first ws" >"$WS/file"
  expect_output "" run --workspace "$ws2" --chdir "$ws2" -- sh -c 'echo here >made && { [ ! -e "$1" ] || echo "visible: $1"; }' sh "$WS/file"
  assert_file_content "$ws2/made" "here"
}

t_base_host() {
  # the host outside /tmp (the private /tmp hides host /tmp whatever the base)
  local h
  h=$(scratch_outside_tmp)
  echo "host file" >"$h/file"
  expect_output "host file" run --base host -- cat "$h/file"
  crun run --base host -- sh -c "$WRITABLE" sh "$h/new" "$h/file" "$WS/ws-file"
  assert_absent "$h/new"
  assert_file_content "$h/file" "host file"
  assert_eq "$OUT" "$WS/ws-file" "writable paths under --base host (only the workspace)"
  assert_file_content "$WS/ws-file" "written"
  expect_ok run --base host -- test -r /etc/passwd -a -x /usr/bin/true
}

t_base_host_hides_credentials() {
  local h
  h=$(scratch_outside_tmp)
  export HOME=$h
  mkdir -p "$HOME/.ssh" "$HOME/.aws" "$HOME/.config/gh"
  echo "PRIVATE KEY" >"$HOME/.ssh/id_ed25519"
  echo "AWS SECRET" >"$HOME/.aws/credentials"
  echo "GH TOKEN" >"$HOME/.config/gh/hosts.yml"
  echo "machine x password NETRC" >"$HOME/.netrc"
  echo "ordinary" >"$h/.profile-e2e"
  crun run --base host -- sh -c 'cat "$1/.ssh/id_ed25519" "$1/.aws/credentials" "$1/.config/gh/hosts.yml" "$1/.netrc" 2>/dev/null; exit 0' sh "$h"
  assert_not_contains "$OUT" "PRIVATE KEY" "~/.ssh readable under --base host"
  assert_not_contains "$OUT" "AWS SECRET" "~/.aws readable under --base host"
  assert_not_contains "$OUT" "GH TOKEN" "~/.config/gh readable under --base host"
  assert_not_contains "$OUT" "NETRC" "~/.netrc readable under --base host"
  # the same files under another directory (not a home) stay readable: the hiding is
  # about the home's credential stores, not about the names
  local other
  other=$(scratch_outside_tmp)
  mkdir "$other/.ssh"
  echo "NOT A HOME KEY" >"$other/.ssh/id_ed25519"
  expect_output "NOT A HOME KEY" run --base host -- cat "$other/.ssh/id_ed25519"
}

t_base_empty() {
  local loader
  loader=$(readlink -f /lib64/ld-linux-x86-64.so.2 2>/dev/null || true)
  [ -n "$loader" ] && [ -f "$loader" ] && [ "${loader#/usr/}" != "$loader" ] ||
    skip_case "no dynamic loader under /usr found for this architecture (needed to start sh without /lib)"
  # (/bin and /sbin: on a merged-/usr host the view that shows /usr has them as the host's
  # symlinks into /usr, and nothing else of the host's; issue 9, item 8)
  crun run --base empty --allow-ro /usr -- "$loader" --library-path "$(dirname "$loader")" /usr/bin/sh -c \
    'for p in /etc/passwd /etc /var /home; do [ -e "$p" ] && echo "visible: $p"; done; for p in /bin /sbin; do [ -e "$p" ] && ! [ -L "$p" ] && echo "visible: $p"; done; [ -e /dev/null ] || echo "no /dev/null"; [ -d /proc/self ] || echo "no /proc"; [ -d /tmp ] || echo "no /tmp"; exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "--base empty view"
}

t_dev_minimal() {
  crun run -- sh -c 'ls -A /dev'
  [ "$RC" = 0 ] || die "ls /dev failed: $(last_run)"
  local e missing="" extra=""
  for e in null zero full random urandom tty pts shm fd stdin stdout stderr; do
    printf '%s\n' "$OUT" | grep -qx "$e" || missing+=" $e"
  done
  for e in $OUT; do
    case $e in null | zero | full | random | urandom | tty | pts | shm | fd | stdin | stdout | stderr | ptmx) ;;
      *) extra+=" $e" ;;
    esac
  done
  [ -z "$missing" ] || die "missing in /dev:$missing"
  [ -z "$extra" ] || die "unexpected entries in /dev:$extra"
  expect_output "00000000" run -- sh -c 'echo x >/dev/null && head -c 4 /dev/zero | od -An -tx1 | tr -d " \n"'
}

t_dev_shm_private() {
  [ -d /dev/shm ] && [ -w /dev/shm ] || skip_case "host /dev/shm is not writable by this user"
  local m f
  m=$(new_mark)
  f=/dev/shm/cordon-e2e-$m
  echo host >"$f"
  crun run -- sh -c '[ -e "$1" ] && echo "visible: $1"; echo inside >"$2" || echo "cannot write $2"' sh "$f" "/dev/shm/inside-$m"
  rm -f "$f"
  if [ -e "/dev/shm/inside-$m" ]; then rm -f "/dev/shm/inside-$m"; die "a file written to /dev/shm inside landed on the host"; fi
  assert_eq "$OUT" "" "/dev/shm inside"
}

t_paths_with_spaces() {
  # names that need escaping in mount tables and option strings
  local ws="$CT/my work space é" ro="$CT/read only,dir" 
  mkdir -p "$ws/secret dir" "$ro"
  echo "hidden" >"$ws/secret dir/f"
  echo "ro" >"$ro/f"
  cd "$ws"
  crun run --deny "$ws/secret dir" --allow-ro "$ro" -- sh -c '
    [ "$(pwd)" = "$1" ] || echo "cwd: $(pwd)"
    cat "secret dir/f" 2>/dev/null && echo "denied dir readable"
    [ "$(cat "$2/f")" = ro ] || echo "read-only dir not readable"
    (echo x >"$2/g") 2>/dev/null && echo "read-only dir writable"
    (echo x >"$1/new file") 2>/dev/null || echo "workspace not writable"
    exit 0' sh "$ws" "$ro"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "paths with spaces, a comma and a non-ASCII letter"
  assert_file_content "$ws/new file" "x"
  assert_absent "$ro/g"
}

run_case workspace_visible t_workspace_visible
run_case outside_absent t_outside_absent
run_case repo_and_binary_absent t_repo_and_binary_absent
run_case system_base_present t_system_base_present
run_case host_dirs_hidden t_host_dirs_hidden
run_case writes_outside_fail t_writes_outside_fail
run_case root_writes_stay_inside t_root_writes_stay_inside
run_case workspace_writes_land t_workspace_writes_land
run_case identity_preserved t_identity_preserved
run_case no_workspace_hides_cwd t_no_workspace_hides_cwd
run_case no_workspace_cwd_not_visible_fails t_no_workspace_cwd_not_visible_fails
run_case workspace_flag t_workspace_flag
run_case base_host t_base_host
run_case base_host_hides_credentials t_base_host_hides_credentials
run_case base_empty t_base_empty
run_case dev_minimal t_dev_minimal
run_case dev_shm_private t_dev_shm_private
run_case paths_with_spaces t_paths_with_spaces
finish
