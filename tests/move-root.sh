#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Run a test program as root the way systemd-nspawn runs a container's payload: in a
# mount namespace of its own whose root was moved over / (MS_MOVE) and entered with
# chroot, not pivot_root, so that the original mounts stay in the namespace beneath it,
# out of sight: a read-write /sys and a fully visible /proc the kernel still counts when
# it decides whether a nested sysfs or proc may be mounted (mount_too_revealing).  The
# visible /sys is made read-only, as nspawn's.
#
#   tests/move-root.sh [--cordon BIN] CMD [ARG...]
#
# tests/meson.build runs tests/escape/test_sysfs.sh through it (escape/sysfs/root-moveroot):
# a nested sysfs must be refused and a nested proc show no writable kernel setting, though
# the kernel would allow both here.  CMD gets CORDON_TEST_MOVE_ROOT=1.  Where this cannot
# be arranged (not root, no unshare or chroot), it prints a TAP plan that skips, with the
# reason.
set -uo pipefail

skip_all() {
  echo "1..0 # SKIP $*"
  exit 0
}
if [ "${1:-}" = --cordon ]; then
  export CORDON=$2
  shift 2
fi
[ $# -ge 1 ] || { echo "usage: tests/move-root.sh [--cordon BIN] CMD [ARG...]" >&2; exit 2; }

if [ "$1" = --inside ]; then
  shift
  new=$(mktemp -d "${TMPDIR:-/tmp}/cordon-moveroot.XXXXXX") || skip_all "mktemp failed"
  mount --rbind / "$new" || skip_all "cannot bind / recursively"
  if mountpoint -q "$new/sys"; then
    mount -o remount,bind,ro "$new/sys" || skip_all "cannot make /sys read-only"
  fi
  cd "$new" || skip_all "cannot enter $new"
  mount --move . / || skip_all "cannot move the new root over / (MS_MOVE)"
  export CORDON_TEST_MOVE_ROOT=1
  echo "# move-root: the root moved over / and entered by chroot, as systemd-nspawn does; /sys read-only"
  exec chroot . /usr/bin/env --chdir="$OLDPWD" "$@"
fi

[ "$(id -u)" -eq 0 ] || skip_all "not running as root: moving a root over / needs root"
{ command -v unshare && command -v chroot && command -v mountpoint; } >/dev/null 2>&1 ||
  skip_all "unshare, chroot or mountpoint (util-linux, coreutils) not found"
unshare -m --propagation private true 2>/dev/null || skip_all "unshare -m refused here"
exec unshare -m --propagation private bash "${BASH_SOURCE[0]}" --inside "$@"
