#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Run one test program as one identity, the way `meson test` runs every shell suite and
# the library's and the binding's tests (tests/meson.build registers each twice):
#
#   tests/harness.sh root|unpriv [--cordon BIN] [--label WORD] [--env NAME=VALUE]... -- CMD [ARG...]
#
#   root     as root; where this runs as anyone else, the test is skipped, loudly
#   unpriv   as uid/gid 65534 (through setpriv) when this runs as root; as the caller
#            otherwise (who is unprivileged already)
#
# The program runs with a clean environment (PATH, HOME, LANG, TERM, the sanitizers'
# options, CORDON, CORDON_TEST_TMP, CORDON_TEST_LABEL, the caller's other CORDON_TEST_*
# settings and CORDON_ORACLE_* (the git oracle's budget and seeds), the --env ones), from
# a fresh directory that belongs to the identity, with a fresh, empty HOME; all of it is
# removed afterwards. Where the identity cannot read the checkout or run the binary (a
# clone in a private home), it gets world-readable copies.
# What the program prints is passed on (TAP); a test that cannot run here prints a TAP
# plan that skips it ("1..0 # SKIP why"), which meson counts as a skip.
set -uo pipefail

UNPRIV_UID=65534
UNPRIV_GID=65534
TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

skip_all() {
  echo "1..0 # SKIP $*"
  exit 0
}
usage() {
  echo "usage: harness.sh root|unpriv [--cordon BIN] [--label WORD] [--env NAME=VALUE]... -- CMD [ARG...]" >&2
  exit 2
}

[ $# -ge 1 ] || usage
who=$1
shift
bin="" label="" extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --cordon) bin=$2; shift 2 ;;
    --label) label=$2; shift 2 ;;
    --env) extra+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) usage ;;
  esac
done
[ $# -ge 1 ] || usage

# meson passes built programs relative to the build directory; the test runs elsewhere
args=()
for a in "$@"; do
  case $a in
    /*) ;;
    */*) [ ! -e "$a" ] || a=$(readlink -f "$a") ;;
  esac
  args+=("$a")
done
set -- "${args[@]}"
[ -z "$bin" ] || bin=$(readlink -f "$bin")

me=$(id -u)
runner=()
case $who in
  root)
    [ "$me" -eq 0 ] || skip_all "not running as root (uid $me): the root pass needs root; run meson test as root for it"
    uid=0 gid=0
    ;;
  unpriv)
    if [ "$me" -eq 0 ]; then
      command -v setpriv >/dev/null 2>&1 ||
        skip_all "setpriv (util-linux) not found: cannot switch to uid $UNPRIV_UID; ./bootstrap.sh installs it"
      uid=$UNPRIV_UID gid=$UNPRIV_GID
      runner=(setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all)
    else
      uid=$me gid=$(id -g)
    fi
    ;;
  *) usage ;;
esac

base=$(mktemp -d "${TMPDIR:-/tmp}/cordon-test.XXXXXX") || { echo "Bail out! harness: mktemp failed"; exit 1; }
cleanup() {
  chmod -R u+rwX "$base" 2>/dev/null
  rm -rf "$base" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$base/home" "$base/tmp"
chmod 0755 "$base" "$base/home" "$base/tmp"

# The identity must be able to read the tests and run what it is given; where it cannot
# (only as uid 65534: a checkout in root's own 0700 home, where `git clone` puts it), it
# runs copies: the tree (without .git and build directories) and the build directory's
# programs and libraries, laid out as the originals are (a test finds the build directory
# as the binary's directory and the tree as tests/..), with every argument naming a file
# of either rewritten to its copy.
if [ ${#runner[@]} -gt 0 ]; then
  repo=$(cd "$TESTS_DIR/.." && pwd)
  build=""
  [ -z "$bin" ] || build=$(dirname "$bin")
  need_copy=0
  "${runner[@]}" test -r "$TESTS_DIR/e2e/lib.sh" 2>/dev/null || need_copy=1
  [ -z "$bin" ] || "${runner[@]}" test -x "$bin" 2>/dev/null || need_copy=1
  for a in "$@"; do
    case $a in
      /*) [ ! -e "$a" ] || "${runner[@]}" test -r "$a" 2>/dev/null || need_copy=1 ;;
    esac
  done
  if [ "$need_copy" = 1 ]; then
    copy=$base/copy
    mkdir -p "$copy/tree" || { echo "Bail out! harness: cannot make $copy"; exit 1; }
    excl=(--exclude=./.git)
    for d in "$repo"/*/; do
      [ ! -e "$d/meson-private" ] || excl+=("--exclude=./$(basename "$d")")
    done
    tar -C "$repo" "${excl[@]}" -cf - . | tar -C "$copy/tree" -xf - ||
      { echo "Bail out! harness: cannot copy $repo to $copy/tree"; exit 1; }
    cbuild=""
    if [ -n "$build" ]; then
      case $build in
        "$repo"/*) cbuild=$copy/tree/${build#"$repo"/} ;;
        *) cbuild=$copy/build ;;
      esac
      mkdir -p "$cbuild"
      # its programs and libraries (not the objects, nor meson's own state: a test that
      # needs a whole build directory, test_install's `meson install`, says SKIP)
      (cd "$build" && find . \( -name '*.p' -o -name 'meson-*' \) -prune -o \( -type f -perm -u+x \) -print0 \
        -o \( \( -type f -o -type l \) \( -name '*.so' -o -name '*.so.*' \) \) -print0 |
        tar --null -T - -cf -) | tar -C "$cbuild" -xf - ||
        { echo "Bail out! harness: cannot copy the programs of $build to $cbuild"; exit 1; }
      bin=$cbuild/${bin#"$build"/}
    fi
    args=()
    for a in "$@"; do
      orig=$a
      if [ -n "$build" ] && [[ $a == "$build"/* ]]; then
        a=$cbuild/${a#"$build"/}
      elif [[ $a == "$repo"/* ]]; then
        a=$copy/tree/${a#"$repo"/}
      fi
      if [ "$a" != "$orig" ] && [ -e "$orig" ] && [ ! -e "$a" ]; then
        mkdir -p "$(dirname "$a")" && cp -a "$orig" "$a" ||
          { echo "Bail out! harness: cannot copy $orig"; exit 1; }
      fi
      args+=("$a")
    done
    set -- "${args[@]}"
    chmod -R a+rX "$copy"
    echo "# the checkout is not readable by uid $uid: running copies under $copy"
  fi
  chown -R "$uid:$gid" "$base"
fi

envs=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  HOME="$base/home" LANG=C.UTF-8 TERM=dumb CORDON_TEST_TMP="$base/tmp")
[ -n "$bin" ] && envs+=(CORDON="$bin")
[ -n "$label" ] && envs+=(CORDON_TEST_LABEL="$label")
for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS CI $(compgen -e | grep -E '^CORDON_(TEST|FAULT|ESCAPE|SEQ|CONCURRENT|CODEX|ORACLE)_'); do
  [ -n "${!v+x}" ] && envs+=("$v=${!v}")
done

cd "$base/tmp" || exit 1
"${runner[@]}" env -i "${envs[@]}" "${extra[@]}" "$@" </dev/null
