# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Helpers for the Codex-compatibility tests (test_codex.sh, test_codex_diff.sh), sourced
# after lib.sh: cordon through a link named codex-linux-sandbox, and permission profiles
# built from short specs.

# cordon as the helper: a link of that name to the binary under test.
mkdir -p "$T/bin"
ln -sf "$CORDON" "$T/bin/codex-linux-sandbox"
CODEX_CORDON=$T/bin/codex-linux-sandbox

# cx ARG...: run cordon as codex-linux-sandbox (as crun does: $OUT, $ERR, $RC).
cx() {
  local saved=$CORDON
  CORDON=$CODEX_CORDON
  crun "$@"
  CORDON=$saved
}

# cx_expect CODE ARG...: cx and require exit status CODE.
cx_expect() {
  local code=$1
  shift
  cx "$@"
  [ "$RC" = "$code" ] || die "codex-linux-sandbox $(_argstr "$@"): expected exit $code, got $(last_run)"
}

# Profile entries: sp KIND ACCESS [EXTRA], pe PATH ACCESS [EXTRA], ge PATTERN ACCESS.
sp() { printf '{"path":{"type":"special","value":{"kind":"%s"%s}},"access":"%s"}' "$1" "${3:-}" "$2"; }
pe() { printf '{"path":{"type":"path","path":"%s"},"access":"%s"%s}' "$1" "$2" "${3:-}"; }
ge() { printf '{"path":{"type":"glob_pattern","pattern":"%s"},"access":"%s"}' "$1" "$2"; }
# profile ENTRIES [NETWORK [FS_EXTRA]]: a managed, restricted profile.
profile() {
  printf '{"type":"managed","file_system":{"type":"restricted","entries":[%s]%s},"network":"%s"}' \
    "$1" "${3:+,$3}" "${2:-restricted}"
}
# The profile Codex's workspace-write mode gives its helper.
ws_profile() {
  profile "$(sp root read),$(sp project_roots write),$(sp slash_tmp write),$(sp tmpdir write)" "${1:-restricted}"
}
