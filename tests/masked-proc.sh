#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Run a test program as root where /proc is masked as a container runtime masks it:
#
#   tests/masked-proc.sh [--cordon BIN] CMD [ARG...]
#
# CMD runs in a mount namespace of its own (private propagation: nothing reaches the
# host's mounts) in which runc's default maskedPaths are covered (a file by /dev/null, a
# directory by an empty read-only tmpfs) and its readonlyPaths bound read-only onto
# themselves, as Docker, Podman and Kubernetes' default procMount do.  No procfs is then
# fully visible, and the kernel refuses a fresh one in a user namespace (doc/kubernetes.md):
# cordon must keep the inherited /proc (sandbox/root.c).  tests/meson.build runs
# tests/e2e/test_maskedproc.sh through it: inside tests/harness.sh as root
# (e2e/maskedproc/root), and around tests/harness.sh unpriv, whose uid 65534 then runs
# in the namespace made here (e2e/maskedproc/unpriv; --cordon BIN, as the harness is not
# there to set CORDON).  CMD gets CORDON_TEST_MASKED_PROC: the masks laid.  Where this
# cannot be arranged (not root, no unshare), it prints a TAP plan that skips, with the
# reason.
set -uo pipefail

skip_all() {
  echo "1..0 # SKIP $*"
  exit 0
}
usage() { echo "usage: tests/masked-proc.sh [--cordon BIN] CMD [ARG...]" >&2; exit 2; }
if [ "${1:-}" = --cordon ]; then
  [ $# -ge 3 ] || usage
  export CORDON=$2
  shift 2
fi
[ $# -ge 1 ] || usage

if [ "$1" = --inside ]; then
  shift
  laid=()
  # runc's defaults (oci spec's maskedPaths and readonlyPaths), where this kernel has them
  for p in /proc/acpi /proc/asound /proc/kcore /proc/keys /proc/latency_stats /proc/timer_list /proc/timer_stats \
    /proc/sched_debug /proc/scsi /sys/firmware; do
    if [ -d "$p" ] && [ ! -L "$p" ]; then
      mount -t tmpfs -o ro,nosuid,nodev,noexec tmpfs "$p" || skip_all "cannot mask $p"
    elif [ -e "$p" ]; then
      mount --bind /dev/null "$p" || skip_all "cannot mask $p"
    else
      continue
    fi
    laid+=("$p")
  done
  for p in /proc/bus /proc/fs /proc/irq /proc/sys /proc/sysrq-trigger; do
    [ -e "$p" ] || continue
    { mount --bind "$p" "$p" && mount -o remount,bind,ro "$p"; } || skip_all "cannot make $p read-only"
    laid+=("$p:ro")
  done
  [ ${#laid[@]} -gt 0 ] || skip_all "none of runc's masked paths exists under /proc here"
  echo "# masked-proc: ${laid[*]}"
  export CORDON_TEST_MASKED_PROC="${laid[*]}"
  exec "$@"
fi

me=$(id -u)
[ "$me" -eq 0 ] || skip_all "not running as root (uid $me): masking /proc in a mount namespace needs root"
command -v unshare >/dev/null 2>&1 || skip_all "unshare (util-linux) not found; ./bootstrap.sh installs it"
unshare -m --propagation private true 2>/dev/null ||
  skip_all "unshare -m refused here: no mount namespace of the test's own"
exec unshare -m --propagation private bash "${BASH_SOURCE[0]}" --inside "$@"
