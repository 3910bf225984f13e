#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A command that makes its own user and mount namespaces inside the sandbox (unshare -Urm)
# cannot undo the view: denied paths stay hidden, read-only paths stay read-only.
. "$(dirname "$0")/lib.sh"

# Skip (loudly) where the command cannot make a nested user namespace at all: then there
# is nothing to undo with. As root that is the kernel's rule (mapping uid 0 in a child
# namespace needs CAP_SETFCAP, which root inside a sandbox lacks).
require_nested_userns() {
  command -v unshare >/dev/null || skip_case "unshare (util-linux) not installed"
  crun run -- unshare -Urm true
  [ "$RC" = 0 ] || skip_case "the command cannot create a nested user namespace here ($(head -c 200 "$ERRF" | _one_line))"
}

t_nested_namespace_cannot_undo_view() {
  require_nested_userns
  mkdir -p "$WS/secret" "$CT/ro"
  echo "top secret" >"$WS/secret/a.txt"
  echo "TOKEN" >"$WS/token.env"
  echo "ro" >"$CT/ro/f"
  local before
  before=$(snapshot "$CT/ro" strict)
  crun run --deny "$WS/secret" --deny "$WS/token.env" --allow-ro "$CT/ro" -- sh -c '
    unshare -Urm sh -c "
      umount \"$1/secret\" 2>/dev/null; umount -l \"$1/secret\" 2>/dev/null
      umount \"$1/token.env\" 2>/dev/null; umount -l \"$1/token.env\" 2>/dev/null
      mount -o remount,bind,rw \"$2\" 2>/dev/null
      umount -l \"$2\" 2>/dev/null
      cat \"$1/secret/a.txt\" \"$1/token.env\" 2>/dev/null
      (echo x >\"$2/new\") 2>/dev/null && echo \"wrote $2/new\"
    " 2>/dev/null
    exit 0' sh "$WS" "$CT/ro"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_not_contains "$OUT" "top secret" "a nested namespace revealed a denied directory"
  assert_not_contains "$OUT" "TOKEN" "a nested namespace revealed a denied file"
  assert_not_contains "$OUT" "wrote" "a nested namespace made a read-only path writable"
  assert_unchanged "$before" "$CT/ro" "the read-only directory on the host" strict
}

t_nested_namespace_cannot_see_host_root() {
  require_nested_userns
  crun run -- sh -c 'unshare -Urm sh -c "cat \"$1\"" 2>/dev/null; unshare -Urpf --mount-proc sh -c "cat /proc/1/root$1" 2>/dev/null; exit 0' sh "$OUTSIDE/secret"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_not_contains "$OUT" "host secret" "a nested namespace reached a host file outside the view"
}

run_case nested_namespace_cannot_undo_view t_nested_namespace_cannot_undo_view
run_case nested_namespace_cannot_see_host_root t_nested_namespace_cannot_see_host_root
finish
