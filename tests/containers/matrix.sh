#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The container matrix: cordon in Podman containers of a Debian 12 image built with
# debootstrap (tests/containers/image.sh; no registry), one row per way containers are
# run, and in each the same facts (tests/containers/inside.sh, probe.sh): `cordon check`,
# the mode the default sandbox runs in, and the confinement checks.  TAP on stdout.
#
#   tests/containers/matrix.sh --cordon BUILD/cordon
#
# Rows: default (Podman's profile, as root: /proc masked), no-userns (a seccomp profile
# refusing user namespaces as Docker's default and Kubernetes' RuntimeDefault do:
# seccomp-no-userns.json), user1000 (--user 1000), unmasked (--security-opt
# unmask=/proc/*: the full sandbox), rootless (Podman run by an unprivileged user, where
# this machine allows it).
#
# The image: built when missing if CI=true or CORDON_CONTAINERS=1 (about a minute or two:
# debootstrap from deb.debian.org), else the matrix SKIPs, saying so; cached in
# /var/cache/cordon-ci ($CORDON_CI_CACHE).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CORDON=
[ "${1:-}" = --cordon ] && CORDON=$(readlink -f "$2")
skip_all() {
  echo "1..0 # SKIP $*"
  exit 0
}
[ -n "$CORDON" ] && [ -x "$CORDON" ] || { echo "usage: tests/containers/matrix.sh --cordon BUILD/cordon" >&2; exit 2; }
# (ldd fails on a static executable; `file` is not on every machine)
! ldd "$CORDON" >/dev/null 2>&1 ||
  skip_all "$CORDON is not statically linked (a sanitized or shared build): it cannot run in the image as it is"
[ "$(id -u)" = 0 ] || skip_all "not root: the matrix runs rootful Podman (and the rootless row as another user)"
command -v podman >/dev/null || skip_all "podman is not installed (./bootstrap.sh installs it with CI=true or CORDON_CONTAINERS=1)"

t0=$(date +%s)
if ! IMAGE=$("$HERE/image.sh" --cached); then
  if [ "${CI:-}" = true ] || [ "${CORDON_CONTAINERS:-}" = 1 ]; then
    IMAGE=$("$HERE/image.sh" 2> >(sed 's/^/# /' >&2)) || skip_all "the image could not be built (debootstrap: is deb.debian.org reachable?)"
  else
    skip_all "no cached image in ${CORDON_CI_CACHE:-/var/cache/cordon-ci}: the container matrix did NOT run (CORDON_CONTAINERS=1, or CI=true, builds it: debootstrap, about a minute)"
  fi
fi
podman image exists "$IMAGE" || IMAGE=$("$HERE/image.sh") || skip_all "the cached image root could not be imported"
t1=$(date +%s)
echo "# matrix: image $IMAGE ready in $((t1 - t0)) s"

# crun refuses a hybrid cgroup hierarchy; runc takes it
RUNTIME=()
command -v runc >/dev/null && RUNTIME=(--runtime runc)
# limits low enough never to be a raise (Podman's defaults may be one, refused where the
# container runtime lacks CAP_SYS_RESOURCE)
LIMITS=(--ulimit nofile=1024:1024 --ulimit nproc=4096:4096)
COMMON=("${RUNTIME[@]}" --rm --network none "${LIMITS[@]}"
  -v "$CORDON:/usr/local/bin/cordon:ro" -v "$HERE/inside.sh:/inside.sh:ro" -v "$HERE/probe.sh:/probe.sh:ro")

n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; }

# row NAME MODE PROC_OK PODMAN_ARGS...: run inside.sh in a container, judge its facts
row() {
  local name=$1 want_mode=$2 want_proc=$3
  shift 3
  local out s e
  s=$(date +%s%N)
  out=$("$@" 2>&1)
  e=$(date +%s%N)
  echo "# $name: $(((e - s) / 1000000)) ms"
  fact() { printf '%s\n' "$out" | awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }'; }
  local mode
  mode=$(fact mode)
  if [ -z "$(fact uid)" ]; then
    notok "$name: the container did not run: $(printf '%s' "$out" | head -c 400 | tr '\n' ' ')"
    return
  fi
  echo "# $name: uid $(fact uid), cordon check exit $(fact check_exit), mode $mode, run isolation $(fact run_isolation), /proc kept $(fact run_proc_kept)"
  [ "$mode" = "$want_mode" ] && ok "$name: cordon check: mode $mode" || notok "$name: cordon check: mode '$mode', expected $want_mode"
  [ "$(fact proc_ok)" = "$want_proc" ] && ok "$name: cordon check: a /proc of its own: $want_proc" ||
    notok "$name: cordon check: proc ok '$(fact proc_ok)', expected $want_proc"
  [ "$(fact control_loopback)" = loopback-hello ] && [ "$(fact control_environ)" = 1 ] ||
    notok "$name: positive controls outside the sandbox failed (loopback '$(fact control_loopback)', environ '$(fact control_environ)')"
  local want_iso=namespaces
  [ "$want_mode" = None ] && want_iso=landlock # the default sandbox cannot start: auto chooses Landlock
  [ "$(fact run_isolation)" = "$want_iso" ] && ok "$name: cordon run --isolation auto: $want_iso" ||
    notok "$name: cordon run --isolation auto ran '$(fact run_isolation)', expected $want_iso"
  local k want got
  for k in read_outside:refused write_outside:refused workspace_top:ok git_commit:ok git_hooks:refused codex:refused \
    loopback_outside:refused other_environ:refused own_environ:ok host_outside_new:absent host_codex:absent \
    host_hook:absent; do
    want=${k#*:} k=${k%%:*}
    got=$(fact "$k")
    if [ "$got" = "$want" ]; then
      ok "$name: $k $got"
    else
      notok "$name: $k '$got', expected $want (stderr: $(fact stderr))"
    fi
  done
}

row default namespaces-kept-proc False podman run "${COMMON[@]}" "$IMAGE" bash /inside.sh
row no-userns None False podman run "${COMMON[@]}" --security-opt seccomp="$HERE/seccomp-no-userns.json" "$IMAGE" bash /inside.sh
row user1000 namespaces-kept-proc False podman run "${COMMON[@]}" --user 1000 "$IMAGE" bash /inside.sh
row unmasked namespaces True podman run "${COMMON[@]}" --security-opt 'unmask=/proc/*' "$IMAGE" bash /inside.sh

# rootless: Podman run by a user of this machine with subordinate ids
ROOTLESS_USER=${CORDON_CI_ROOTLESS_USER:-cordon-ci}
why=""
if ! id "$ROOTLESS_USER" >/dev/null 2>&1; then
  why="no user $ROOTLESS_USER (CI=true makes one)"
  if [ "${CI:-}" = true ]; then
    useradd -m -s /bin/bash "$ROOTLESS_USER" 2>/dev/null && why=""
  fi
fi
if [ -z "$why" ] && ! grep -q "^$ROOTLESS_USER:" /etc/subuid 2>/dev/null; then
  usermod --add-subuids 200000-265535 --add-subgids 200000-265535 "$ROOTLESS_USER" 2>/dev/null ||
    why="no subordinate ids for $ROOTLESS_USER"
fi
if [ -z "$why" ]; then
  home=$(getent passwd "$ROOTLESS_USER" | cut -d: -f6)
  rt=/tmp/cordon-ci-rootless-$(id -u "$ROOTLESS_USER")
  mkdir -p "$rt" && chown "$ROOTLESS_USER" "$rt" && chmod 0700 "$rt"
  # the user's copies of what the container binds (root's files may be out of its reach)
  install -o "$ROOTLESS_USER" -m 0755 "$CORDON" "$rt/cordon"
  install -o "$ROOTLESS_USER" -m 0755 "$HERE/inside.sh" "$rt/inside.sh"
  install -o "$ROOTLESS_USER" -m 0755 "$HERE/probe.sh" "$rt/probe.sh"
  TAR=$("$HERE/image.sh" --tar)
  as_user() { runuser -u "$ROOTLESS_USER" -- env HOME="$home" XDG_RUNTIME_DIR="$rt" "$@"; }
  if ! as_user podman image exists "$IMAGE" && ! as_user podman import --quiet "$TAR" "$IMAGE" >/dev/null 2>"$rt/import.err"; then
    why="rootless podman cannot import the image here: $(head -c 300 "$rt/import.err" | tr '\n' ' ')"
  fi
fi
if [ -n "$why" ]; then
  echo "# SKIP rootless: $why"
else
  row rootless namespaces-kept-proc False as_user podman run "${RUNTIME[@]}" --rm --network none \
    "${LIMITS[@]}" -v "$rt/cordon:/usr/local/bin/cordon:ro" \
    -v "$rt/inside.sh:/inside.sh:ro" -v "$rt/probe.sh:/probe.sh:ro" "$IMAGE" bash /inside.sh
fi
echo "# matrix: $(($(date +%s) - t1)) s for the rows"
echo "1..$n"
