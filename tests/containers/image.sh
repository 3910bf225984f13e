#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Build (once) the root of a Debian 12 image for the container matrix (tests/containers/
# matrix.sh) with debootstrap from Debian's mirror (no image registry is needed), and
# import it into Podman as localhost/cordon-ci:KEY.  Cached under $CORDON_CI_CACHE
# (/var/cache/cordon-ci) by a key made of everything that goes into it (suite, variant,
# packages, this script's version): a second run only checks that it is there.
#
#   tests/containers/image.sh            build what is missing, print the image's name
#   tests/containers/image.sh --cached   print the name if the image is cached, else fail
#   tests/containers/image.sh --tar      print the cached root's tarball (for a rootless import)
#
# Prints the time each step took on stderr ("# image: ...").
set -euo pipefail

CACHE=${CORDON_CI_CACHE:-/var/cache/cordon-ci}
SUITE=bookworm
MIRROR=${CORDON_CI_MIRROR:-http://deb.debian.org/debian}
PACKAGES=git,python3,ca-certificates,procps
VERSION=1 # bump to rebuild every cache
KEY=$(printf '%s\n' "$SUITE" minbase "$PACKAGES" "$VERSION" | sha256sum | cut -c1-12)
ROOT=$CACHE/rootfs-$SUITE-$KEY
TAR=$CACHE/rootfs-$SUITE-$KEY.tar
IMAGE=localhost/cordon-ci:$KEY

have_image() { podman image exists "$IMAGE" 2>/dev/null; }

if [ "${1:-}" = --tar ]; then
  [ -s "$TAR" ] && echo "$TAR"
  exit $?
fi
if [ "${1:-}" = --cached ]; then
  if have_image || [ -s "$TAR" ]; then
    echo "$IMAGE"
    exit 0
  fi
  exit 1
fi

mkdir -p "$CACHE"
t0=$(date +%s)
if [ ! -s "$TAR" ]; then
  command -v debootstrap >/dev/null || { echo "debootstrap is not installed (./bootstrap.sh installs it with CI=true)" >&2; exit 1; }
  rm -rf "$ROOT.tmp"
  debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOT.tmp" "$MIRROR" >"$CACHE/debootstrap-$KEY.log" 2>&1 ||
    { echo "debootstrap failed: see $CACHE/debootstrap-$KEY.log" >&2; tail -5 "$CACHE/debootstrap-$KEY.log" >&2; exit 1; }
  rm -rf "$ROOT.tmp/var/cache/apt/archives/"*.deb "$ROOT.tmp/var/lib/apt/lists/"*
  # a user 1000 for --user 1000, with a home
  chroot "$ROOT.tmp" useradd -m -u 1000 -s /bin/bash agent
  tar -C "$ROOT.tmp" -cf "$TAR.tmp" . && mv "$TAR.tmp" "$TAR"
  rm -rf "$ROOT.tmp"
  echo "# image: debootstrap $SUITE ($PACKAGES) in $(($(date +%s) - t0)) s" >&2
fi
t1=$(date +%s)
if ! have_image; then
  podman import --quiet "$TAR" "$IMAGE" >/dev/null
  echo "# image: podman import in $(($(date +%s) - t1)) s" >&2
fi
echo "$IMAGE"
