#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Run a test program as root where every cgroup file system is read-only, as
# /sys/fs/cgroup is in a Docker container by default:
#
#   tests/ro-cgroup.sh [--cordon BIN] CMD [ARG...]
#
# CMD runs in a mount namespace of its own (private propagation: nothing reaches the
# host's mounts) in which every cgroup and cgroup2 mount has been remounted read-only, so no
# run can make a cgroup: as root, --limit-pids must then fail closed (exit 125) and memory
# and CPU time fall back to rlimits (README, "Resource limits"). tests/meson.build runs the
# limits suite through it: inside tests/harness.sh as root (e2e/limits/root-rocgroup), and
# around tests/harness.sh unpriv, whose uid 65534 then runs in the namespace made here
# (e2e/limits/unpriv-rocgroup; --cordon BIN, as the harness is not there to set CORDON).
# CMD gets CORDON_TEST_RO_CGROUP: the mechanism `cordon explain` ($CORDON, as root) named
# for --limit-* before
# the remount (cgroup2, cgroup1, rlimit, unknown), so that a test can tell a cgroup lost to
# the read-only mount from one this host never offered. Where this cannot be arranged (not
# root, no unshare or findmnt, a remount refused), it prints a TAP plan that skips, with
# the reason.
set -uo pipefail

skip_all() {
  echo "1..0 # SKIP $*"
  exit 0
}
usage() { echo "usage: tests/ro-cgroup.sh [--cordon BIN] CMD [ARG...]" >&2; exit 2; }
if [ "${1:-}" = --cordon ]; then
  [ $# -ge 3 ] || usage
  export CORDON=$2
  shift 2
fi
[ $# -ge 1 ] || usage

if [ "$1" = --inside ]; then
  shift
  before=unknown
  if [ -n "${CORDON:-}" ]; then
    case $("$CORDON" explain --limit-pids 50 --limit-memory 64M --limit-cpu 2 2>/dev/null | grep -m1 '^limits (') in
      "limits (cgroup v2"*) before=cgroup2 ;;
      "limits (cgroup v1"*) before=cgroup1 ;;
      "limits (rlimits"*) before=rlimit ;;
    esac
  fi
  n=0
  while IFS= read -r m; do
    [ -n "$m" ] || continue
    printf -v m '%b' "$m" # findmnt -r writes a space as \x20
    mount -o remount,bind,ro "$m" 2>/dev/null ||
      skip_all "cannot remount the cgroup file system $m read-only in a mount namespace of its own"
    n=$((n + 1))
  done < <(findmnt -rn -t cgroup,cgroup2 -o TARGET)
  # every one of them, or the configuration is not the one this runs the tests in
  left=$(findmnt -rn -t cgroup,cgroup2 -o TARGET,OPTIONS | awk '$2 !~ /(^|,)ro(,|$)/ { print $1 }')
  if [ -n "$left" ]; then
    echo "Bail out! ro-cgroup: still writable after the remount: $(echo "$left" | paste -sd' ' -)"
    exit 1
  fi
  echo "# ro-cgroup: $n cgroup file system(s) read-only in a mount namespace of the test's own; --limit-* by $before outside it"
  export CORDON_TEST_RO_CGROUP=$before
  exec "$@"
fi

me=$(id -u)
[ "$me" -eq 0 ] || skip_all "not running as root (uid $me): making the cgroup file systems read-only in a mount namespace needs root"
{ command -v unshare && command -v findmnt; } >/dev/null 2>&1 ||
  skip_all "unshare or findmnt (util-linux) not found; ./bootstrap.sh installs them"
unshare -m --propagation private true 2>/dev/null ||
  skip_all "unshare -m refused here: no mount namespace of the test's own"
exec unshare -m --propagation private bash "${BASH_SOURCE[0]}" --inside "$@"
