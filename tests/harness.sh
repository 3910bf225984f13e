#!/usr/bin/env bash
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
case $1 in
  /*) ;;
  */*) [ -e "$1" ] && set -- "$(readlink -f "$1")" "${@:2}" ;;
esac
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
# (only as uid 65534), it runs copies.
if [ ${#runner[@]} -gt 0 ]; then
  need_copy=0
  "${runner[@]}" test -r "$TESTS_DIR/e2e/lib.sh" 2>/dev/null || need_copy=1
  [ -z "$bin" ] || "${runner[@]}" test -x "$bin" 2>/dev/null || need_copy=1
  "${runner[@]}" test -r "$1" -o ! -e "$1" 2>/dev/null || need_copy=1
  if [ "$need_copy" = 1 ]; then
    mkdir -p "$base/copy"
    cp -r "$TESTS_DIR" "$base/copy/tests"
    [ -d "$TESTS_DIR/../python" ] && cp -r "$TESTS_DIR/../python" "$base/copy/python"
    case $1 in
      "$TESTS_DIR"/*) set -- "$base/copy/tests/${1#"$TESTS_DIR"/}" "${@:2}" ;;
      */*) cp "$1" "$base/copy/$(basename "$1")" && set -- "$base/copy/$(basename "$1")" "${@:2}" ;;
    esac
    if [ -n "$bin" ]; then
      cp "$bin" "$base/copy/cordon"
      bin=$base/copy/cordon
    fi
    chmod -R a+rX "$base/copy"
    echo "# the checkout is not readable by uid $uid: running copies under $base/copy"
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
