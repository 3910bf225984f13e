#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Install what cordon needs to build and test on Debian 12, then build it in build/.
#
#   ./bootstrap.sh && ./build/cordon run -- sh -c 'echo hello from the sandbox'
#
# Idempotent and quiet: it asks apt only about packages that are missing (and runs
# `apt-get update` only then), configures build/ only when it is not configured yet, and
# prints nothing when everything succeeds. On failure it prints the tail of the failing
# step's log and exits non-zero.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"

PACKAGES=(
  build-essential meson ninja-build pkg-config
  libjansson-dev libseccomp-dev libcmocka-dev
  bubblewrap iproute2 python3 util-linux git valgrind
  # the Python package: pip install ./python into a venv (tests/python_pip.sh), dh-python
  python3-venv python3-pip python3-setuptools dh-python
  curl socat tmux
  fuse-overlayfs
  dpkg-dev debhelper fakeroot
  # what the tests run besides (most are there on any Debian; none may be assumed):
  # pgrep (procps), fusermount3 (fuse3), script (bsdutils), mount/umount (mount)
  procps fuse3 bsdutils mount
  # the git protections are tested on the file systems repositories live on besides ext4
  # (tests/escape/test_git.sh, filesystems; the git oracle, tests/escape/test_gitoracle.sh):
  # a btrfs subvolume (a directory's st_dev is the subvolume's) and XFS on loop devices
  btrfs-progs xfsprogs
)
# The fuzzers (fuzz/, run by tests/run-all.sh when clang is there) need clang and its
# libFuzzer runtime: installed for CI, and on request (CORDON_FUZZ=1).
if [ "${CI:-}" = true ] || [ "${CORDON_FUZZ:-}" = 1 ]; then
  PACKAGES+=(clang libclang-rt-dev)
fi
# The lint pass (tests/analyze.sh: clang's static analyzer; tests/format.sh: clang-format;
# tests/cppcheck.sh): for CI, and on request (CORDON_ANALYZE=1).
if [ "${CI:-}" = true ] || [ "${CORDON_ANALYZE:-}" = 1 ]; then
  PACKAGES+=(clang clang-format cppcheck)
fi
# The container matrix (tests/containers/matrix.sh): an image root built with debootstrap
# from Debian's mirror, run with Podman (runc: crun refuses a hybrid cgroup hierarchy),
# rootless too (uidmap, slirp4netns); and systemd-nspawn for the sysfs finding.  For CI,
# and on request (CORDON_CONTAINERS=1).
if [ "${CI:-}" = true ] || [ "${CORDON_CONTAINERS:-}" = 1 ]; then
  PACKAGES+=(podman runc debootstrap uidmap slirp4netns systemd-container)
fi
# The bindings' tests (tests/rust.sh: Debian's cargo, offline, no crate from the network;
# tests/node.sh: node, and Node's headers for the package's fast path, which it compiles
# with cc): for CI, and on request (CORDON_BINDINGS=1); without them those tests skip,
# saying why. cargo is 60 MB to fetch, about 15 s to install.
if [ "${CI:-}" = true ] || [ "${CORDON_BINDINGS:-}" = 1 ]; then
  PACKAGES+=(cargo)
  command -v node >/dev/null 2>&1 || PACKAGES+=(nodejs)
  # a Node from elsewhere (NodeSource's) ships its headers; Debian's are libnode-dev
  [ -e /usr/include/node/node_api.h ] || PACKAGES+=(libnode-dev)
fi
# The real Codex helper (tests/e2e/test_codex_diff.sh compares cordon with it): npm, for
# CI and on request (CORDON_CODEX=1); installed below, after the packages.
CODEX_REF_VERSION=0.169.0
CODEX_REF_PREFIX=${CORDON_CODEX_PREFIX:-/opt/cordon-test/codex}
# And sandbox-runtime (`srt`, which runs the bwrap first on PATH: tests/e2e/test_bwrap.sh
# runs it with cordon's), which needs ripgrep and socat besides.
SRT_REF_VERSION=0.0.78
SRT_REF_PREFIX=${CORDON_SRT_PREFIX:-/opt/cordon-test/srt}
want_codex_ref=0
if [ "${CI:-}" = true ] || [ "${CORDON_CODEX:-}" = 1 ]; then
  want_codex_ref=1
  command -v npm >/dev/null 2>&1 || PACKAGES+=(nodejs npm)
  PACKAGES+=(ripgrep)
fi
BUILD_DIR=${CORDON_BUILD_DIR:-build}

log=$(mktemp "${TMPDIR:-/tmp}/cordon-bootstrap.XXXXXX")
trap 'rm -f "$log"' EXIT

die() {
  echo "bootstrap: $*" >&2
  exit 1
}

# Run a step with its output captured; show the log only when it fails.
quietly() {
  local what=$1
  shift
  if ! "$@" >"$log" 2>&1; then
    echo "bootstrap: $what failed: $*" >&2
    tail -n 60 "$log" >&2
    exit 1
  fi
}

# --- packages ---------------------------------------------------------------------------
command -v dpkg-query >/dev/null 2>&1 ||
  die "dpkg-query not found: this script installs packages on Debian/Ubuntu only; install ${PACKAGES[*]} by hand"

missing=()
for pkg in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)
  case $status in
    ii*) ;;
    *) missing+=("$pkg") ;;
  esac
done

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    as_root=(env DEBIAN_FRONTEND=noninteractive)
  elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo env DEBIAN_FRONTEND=noninteractive)
  else
    die "missing packages: ${missing[*]}; run this script as root or install sudo"
  fi
  quietly "apt-get update" "${as_root[@]}" apt-get update
  quietly "installing ${missing[*]}" "${as_root[@]}" apt-get install -y --no-install-recommends \
    -o Dpkg::Use-Pty=0 "${missing[@]}"
fi

# --- the real Codex helper, for the differential test ---------------------------------------
# Into a world-readable prefix, so that the unprivileged pass of the tests can run it too.
# A failure here is loud but not fatal: the differential test then skips, saying why.
if [ "$want_codex_ref" = 1 ]; then
  have=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$CODEX_REF_PREFIX/node_modules/@openai/codex/package.json" 2>/dev/null | head -n 1 || true)
  if [ "$have" != "$CODEX_REF_VERSION" ]; then
    if [ "$(id -u)" -eq 0 ]; then as_root=(); elif command -v sudo >/dev/null 2>&1; then as_root=(sudo); else as_root=(false); fi
    if ! { "${as_root[@]}" mkdir -p "$CODEX_REF_PREFIX" &&
      "${as_root[@]}" npm install --prefix "$CODEX_REF_PREFIX" --no-audit --no-fund --loglevel=error \
        "@openai/codex@$CODEX_REF_VERSION" >"$log" 2>&1 &&
      "${as_root[@]}" chmod -R a+rX "$CODEX_REF_PREFIX"; }; then
      echo "bootstrap: warning: could not install @openai/codex@$CODEX_REF_VERSION into $CODEX_REF_PREFIX" \
        "(tests/e2e/test_codex_diff.sh will skip):" >&2
      tail -n 20 "$log" >&2
    fi
  fi
fi

# --- sandbox-runtime, for the bwrap test ---------------------------------------------------
if [ "$want_codex_ref" = 1 ]; then
  have=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$SRT_REF_PREFIX/node_modules/@anthropic-ai/sandbox-runtime/package.json" 2>/dev/null | head -n 1 || true)
  if [ "$have" != "$SRT_REF_VERSION" ]; then
    if [ "$(id -u)" -eq 0 ]; then as_root=(); elif command -v sudo >/dev/null 2>&1; then as_root=(sudo); else as_root=(false); fi
    if ! { "${as_root[@]}" mkdir -p "$SRT_REF_PREFIX" &&
      "${as_root[@]}" npm install --prefix "$SRT_REF_PREFIX" --no-audit --no-fund --loglevel=error \
        "@anthropic-ai/sandbox-runtime@$SRT_REF_VERSION" >"$log" 2>&1 &&
      "${as_root[@]}" chmod -R a+rX "$SRT_REF_PREFIX"; }; then
      echo "bootstrap: warning: could not install @anthropic-ai/sandbox-runtime@$SRT_REF_VERSION into $SRT_REF_PREFIX" \
        "(its case of tests/e2e/test_bwrap.sh will skip):" >&2
      tail -n 20 "$log" >&2
    fi
  fi
fi

# --- build --------------------------------------------------------------------------------
if [ ! -f "$BUILD_DIR/meson-private/coredata.dat" ] || [ ! -f "$BUILD_DIR/build.ninja" ]; then
  # -Dwerror=true: warnings are errors in development and CI (tests/run-all.sh sets it
  # on every tree it builds); meson's default (off) is a distribution's build
  quietly "meson setup" meson setup "$BUILD_DIR" -Dwerror=true
fi
quietly "build (ninja -C $BUILD_DIR)" ninja -C "$BUILD_DIR"
[ -x "$BUILD_DIR/cordon" ] || die "the build finished but $BUILD_DIR/cordon is missing"
