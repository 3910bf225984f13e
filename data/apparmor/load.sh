#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# meson install: load the AppArmor profile just installed, when installing for real (not
# into a DESTDIR for a package, whose maintainer scripts load it) and AppArmor is on.
# Never fails the installation: it says what to run instead.
set -u
profile=$1
[ -z "${DESTDIR:-}" ] || exit 0
command -v apparmor_parser >/dev/null 2>&1 || exit 0
[ -d /sys/kernel/security/apparmor ] || exit 0
if ! apparmor_parser -r -W "$profile" 2>/dev/null; then
  echo "cordon: could not load the AppArmor profile $profile; run: sudo apparmor_parser -r $profile" >&2
fi
exit 0
