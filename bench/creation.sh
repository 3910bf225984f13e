#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What the creation control costs, against no sandbox and against bubblewrap: work that
# creates many files, timed in one run, alternating
#   bare    the command alone (TMPDIR a fresh directory on a tmpfs)
#   bwrap   bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind WS WS
#           --unshare-all --die-with-parent --new-session (TMPDIR=/tmp, a private tmpfs)
#   nocc    cordon run --base host built with -Dcreation_control=false (the control left
#           out at build time; there is no run-time switch)
#   cordon  cordon run --base host as shipped
# on a tmpfs (one mounted for the run as root, else /dev/shm) and on the disk (--disk),
# as the caller and, when that is root, also as uid 65534 (setpriv --reuid 65534).
#
#   bench/creation.sh [-n REPEATS] [--files N] [--work LIST] [--fs LIST] [--as LIST]
#                     [--disk DIR] [--extra NAME=CORDON]... [--no-count] [--out FILE]
#
#   -n REPEATS    runs of each variant (default 5; start-up: 4 x REPEATS)
#   --files N     files in the tarball (default 10,000); the repository has N/2
#   --work LIST   comma-separated, of (default tar,clone,cp,true,floor):
#     tar     tar xf of N files in 100 directories into the workspace
#     clone   git clone --no-hardlinks of a repository of N/2 files (loose objects) into
#             $TMPDIR (a new repository cannot be made in a writable host path, see README)
#     cp      cp -a of the extracted tree (N files) into the workspace
#     true    start-up: `true`
#     floor   bench/notiffloor.c: N creations served through a seccomp notification
#             with nothing else (no filter, CONTINUE, ADDFD, ADDFD with cordon's CPU
#             pinning), in us per creation: the least any such control costs
#     ninja   building this project (a copy of the sources in the workspace) with ninja
#             (not in the default list: about a minute a run)
#   --fs LIST     tmpfs,disk (default both); the workspace and the inputs live there
#   --as LIST     root,user (default: both as root, the caller's identity otherwise)
#   --disk DIR    where the disk runs go (default /var/tmp; must not be a tmpfs)
#   --extra NAME=CORDON  also time another cordon binary (an older build, say) as the
#                 variant NAME, with its ratio to cordon
#   --no-count    do not count the notified calls (skips the third build)
#   --out FILE    also write the tables to FILE
#
# Builds this checkout three times (build-bench-cc/, build-bench-nocc/, and
# build-bench-trace/ with -Dtrace_timing=true, run once per work and identity to count
# the calls the creation control served).  Prints, per identity, file system and work,
# the medians in ms, cordon's ratio to bubblewrap and to bare, the calls served and the
# cost of one: (cordon - nocc) / calls, in us.  The targets (issue 19): tar and clone at
# most 2 x bubblewrap (stretch 1.3 x), start-up unchanged.  Timing never fails the run;
# a command that fails does.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
repeats=5
files=10000
works=tar,clone,cp,true,floor
fss=tmpfs,disk
ids=
disk=/var/tmp
count=1
out=
extras=()

die() { echo "creation.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    -n|--repeats) repeats=${2:?}; shift 2 ;;
    --files) files=${2:?}; shift 2 ;;
    --work) works=${2:?}; shift 2 ;;
    --fs) fss=${2:?}; shift 2 ;;
    --as) ids=${2:?}; shift 2 ;;
    --disk) disk=${2:?}; shift 2 ;;
    --no-count) count=0; shift ;;
    --extra)
      e=${2:?}
      [[ $e == [a-z]*=?* && ${e%%=*} != *[!a-z0-9]* ]] || die "--extra NAME=CORDON (NAME: lower case letters and digits)"
      case ${e%%=*} in bare|bwrap|nocc|cordon|trace) die "--extra: ${e%%=*} is taken" ;; esac
      [ -x "${e#*=}" ] || die "--extra: ${e#*=} is not an executable"
      extras+=("$e")
      shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done
case $repeats in ''|*[!0-9]*|0) die "-n wants a positive number" ;; esac
case $files in ''|*[!0-9]*|0) die "--files wants a positive number" ;; esac
for w in ${works//,/ }; do
  case $w in tar|clone|cp|true|ninja|floor) ;; *) die "unknown work: $w" ;; esac
done
for f in ${fss//,/ }; do
  case $f in tmpfs|disk) ;; *) die "unknown file system: $f (tmpfs, disk)" ;; esac
done
if [ -z "$ids" ]; then
  if [ "$(id -u)" = 0 ]; then ids=root,user; else ids=user; fi
fi
for i in ${ids//,/ }; do
  case $i in
    root) [ "$(id -u)" = 0 ] || die "--as root needs root" ;;
    user) ;;
    *) die "unknown identity: $i (root, user)" ;;
  esac
done
command -v bwrap >/dev/null || die "bubblewrap (bwrap) is needed for the reference"

. "$here/common.sh" # build
build build-bench-cc
build build-bench-nocc -Dcreation_control=false
[ "$count" = 0 ] || build build-bench-trace -Dtrace_timing=true

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cordon-bench-creation.XXXXXX")
mounted=
cleanup() {
  [ -z "$mounted" ] || umount "$mounted" 2>/dev/null || umount -l "$mounted" 2>/dev/null || true
  for d in "${roots[@]}"; do
    chmod -R u+rwX "$d" 2>/dev/null || true
    rm -rf "$d"
  done
  chmod -R u+rwX "$tmp" 2>/dev/null || true
  rm -rf "$tmp"
}
roots=()
trap cleanup EXIT
chmod 755 "$tmp"
cp "$top/build-bench-cc/cordon" "$tmp/cordon"
cp "$top/build-bench-nocc/cordon" "$tmp/nocc"
[ "$count" = 0 ] || cp "$top/build-bench-trace/cordon" "$tmp/trace"
for e in "${extras[@]}"; do cp "${e#*=}" "$tmp/${e%%=*}"; done
mkdir "$tmp/home"

# The file systems: a directory on each, holding the inputs and the workspaces.
declare -A root_of
for f in ${fss//,/ }; do
  case $f in
    tmpfs)
      if [ "$(id -u)" = 0 ]; then
        mkdir "$tmp/tmpfs"
        mount -t tmpfs -o size=4g,mode=755 cordon-bench "$tmp/tmpfs" || die "cannot mount a tmpfs"
        mounted=$tmp/tmpfs
        root_of[tmpfs]=$tmp/tmpfs/b
      else
        [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || die "/dev/shm is not a tmpfs: run as root, or leave out --fs tmpfs"
        root_of[tmpfs]=$(mktemp -d /dev/shm/cordon-bench.XXXXXX)
      fi ;;
    disk)
      [ "$(stat -f -c %T "$disk")" != tmpfs ] || die "$disk is a tmpfs: pass --disk DIR on a disk"
      root_of[disk]=$(mktemp -d "$disk/cordon-bench.XXXXXX") ;;
  esac
  mkdir -p "${root_of[$f]}"
  chmod 755 "${root_of[$f]}"
  roots+=("${root_of[$f]}")
done
# bare's TMPDIR: on a tmpfs, as the sandboxes' (a private tmpfs) are
if [ -n "${root_of[tmpfs]:-}" ]; then
  baretmp=${root_of[tmpfs]}
elif [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
  baretmp=$(mktemp -d /dev/shm/cordon-bench.XXXXXX)
  roots+=("$baretmp")
else
  baretmp=$tmp
fi

# The inputs, on each file system: a tarball of $files files, the tree it holds (for
# cp), a repository of $files/2 files, the sources (for ninja).
for f in ${fss//,/ }; do
  data=${root_of[$f]}/data
  mkdir "$data"
  python3 - "$data" "$files" <<'PY'
import os, sys, tarfile, io
data, n = sys.argv[1], int(sys.argv[2])
with tarfile.open(os.path.join(data, "files.tar"), "w") as t:
    for i in range(n):
        b = (b"x" * 200)
        ti = tarfile.TarInfo(f"tree/d{i % 100:02d}/f{i:05d}.txt")
        ti.size = len(b)
        ti.mode = 0o644
        t.addfile(ti, io.BytesIO(b))
repo = os.path.join(data, "repo")
for i in range(n // 2):
    d = os.path.join(repo, f"d{i % 50:02d}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{i:05d}.c"), "w") as f:
        f.write(f"int f{i}(void) {{ return {i}; }}\n")
PY
  tar xf "$data/files.tar" -C "$data"
  # no automatic gc or maintenance: it would pack the loose objects in the background,
  # in the middle of the runs (and of the chown below)
  git -C "$data/repo" init -q
  git -C "$data/repo" config gc.auto 0
  git -C "$data/repo" config maintenance.auto false
  git -C "$data/repo" add -A
  git -C "$data/repo" -c user.name=b -c user.email=b@e commit -q -m files
  if [[ ,$works, == *,ninja,* ]]; then
    mkdir "$data/src"
    git -C "$top" ls-files -z | (cd "$top" && xargs -0 tar cf -) | tar xf - -C "$data/src"
  fi
done

declare -A drop_of who_of
drop_of[root]=""
who_of[root]="uid 0"
if [ "$(id -u)" = 0 ]; then
  chown -R 65534:65534 "$tmp" "${roots[@]}"
  chmod 700 "$tmp/home"
  drop_of[user]="setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=$tmp/home USER=nobody LOGNAME=nobody"
  who_of[user]="uid 65534 (setpriv from root)"
else
  drop_of[user]=""
  who_of[user]="uid $(id -u)"
fi

# The command of a work, run in the workspace WS with inputs in DATA.
work_cmd() { # WORK DATA
  case $1 in
    tar) cmd=(tar xf "$2/files.tar") ;;
    clone) cmd=(sh -c 'git clone -q --no-hardlinks "$0" "$TMPDIR/c" && test -d "$TMPDIR/c/d00"' "$2/repo") ;;
    cp) cmd=(cp -a "$2/tree" tree) ;;
    true) cmd=(true) ;;
    ninja) cmd=(ninja -C src/b) ;;
  esac
}

# One timed run: ID FS VARIANT WORK -> milliseconds on stdout (VARIANT trace: the calls
# served instead).
one() {
  local id=$1 fs=$2 variant=$3 what=$4
  local base=${root_of[$fs]} data=${root_of[$fs]}/data
  local ws=$base/ws-$RANDOM$RANDOM bt=$baretmp/t-$RANDOM$RANDOM
  local -a drop cmd run
  read -r -a drop <<<"${drop_of[$id]}"
  "${drop[@]}" mkdir "$ws" "$bt"
  if [ "$what" = ninja ]; then
    "${drop[@]}" cp -a "$data/src" "$ws/src"
    "${drop[@]}" sh -c "cd '$ws/src' && meson setup b -Dtests=false -Dstatic_cli=false >/dev/null 2>&1" ||
      die "meson setup of the copy failed"
  fi
  work_cmd "$what" "$data"
  case $variant in
    bare) run=(env TMPDIR="$bt" "${cmd[@]}") ;;
    bwrap)
      run=(bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --ro-bind "$data" "$data" --bind "$ws" "$ws"
        --chdir "$ws" --setenv TMPDIR /tmp --unshare-all --die-with-parent --new-session "${cmd[@]}") ;;
    *) run=("$tmp/$variant" run --base host --allow-ro "$data" -- "${cmd[@]}") ;;
  esac
  local s e
  sync # another run's writeback must not land in this one's time
  s=$(date +%s%N)
  (cd "$ws" && "${drop[@]}" "${run[@]}" >/dev/null 2>"$tmp/err") ||
    die "$variant $what ($id, $fs) failed: $(grep -v '^cordon-trace: [a-z0-9+-]* [0-9]*$' "$tmp/err" | head -c 400)"
  e=$(date +%s%N)
  rm -rf "$ws" "$bt"
  if [ "$variant" = trace ]; then
    sed -n 's/^cordon-trace: creation-control \([0-9]*\) calls.*/\1/p' "$tmp/err" | tail -n 1
  else
    echo $(((e - s) / 1000000))
  fi
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}'; }

variants=(bare bwrap nocc cordon)
for e in "${extras[@]}"; do variants+=("${e%%=*}"); done
declare -A target=([tar]="<= 2 (1.3)" [clone]="<= 2 (1.3)" [cp]="-" [true]="unchanged" [ninja]="-")
declare -A calls
hdr=$(printf '%-6s %8s %8s %8s %8s  %7s %7s  %7s %7s  %s' work bare bwrap nocc cordon '÷bwrap' '÷bare' calls 'us/call' 'target ÷bwrap')
results="cordon creation-control benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'): $(uname -sr), $(nproc) CPU, $(bwrap --version), $repeats repeats, medians in ms"$'\n'
echo "${results%$'\n'}"
timed=
for w in ${works//,/ }; do [ "$w" = floor ] || timed+=" $w"; done
for id in ${ids//,/ }; do
  [ -n "$timed" ] || break
  for fs in ${fss//,/ }; do
    # git reads a repository of another owner only when told to (safe.directory), and
    # its upload-pack not even then, and cp -a in a user namespace keeps only mapped
    # owners: the inputs are the identity's
    if [ "$(id -u)" = 0 ]; then
      if [ "$id" = root ]; then o=0:0; else o=65534:65534; fi
      chown -R "$o" "${root_of[$fs]}/data"
    fi
    title="as ${who_of[$id]}, on $fs ($(stat -f -c %T "${root_of[$fs]}")), load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo
    echo "$title"
    echo "$hdr"
    results+=$'\n'"$title"$'\n'"$hdr"$'\n'
    for what in $timed; do
      n=$repeats
      [ "$what" != true ] || n=$((repeats * 4))
      for v in "${variants[@]}"; do : >"$tmp/$what.$v"; done
      for ((i = 0; i < n; i++)); do
        for v in "${variants[@]}"; do
          one "$id" "$fs" "$v" "$what" >>"$tmp/$what.$v"
        done
      done
      if [ "$count" = 1 ] && [ -z "${calls[$id.$what]:-}" ]; then
        calls[$id.$what]=$(one "$id" "$fs" trace "$what")
      fi
      declare -A m=()
      for v in "${variants[@]}"; do m[$v]=$(median <"$tmp/$what.$v"); done
      c=${calls[$id.$what]:-}
      per=-
      [ -z "$c" ] || [ "$c" = 0 ] || per=$(awk -v a="${m[cordon]}" -v b="${m[nocc]}" -v n="$c" 'BEGIN {printf "%.1f", (a - b) * 1000 / n}')
      line=$(printf '%-6s %8s %8s %8s %8s  %7s %7s  %7s %7s  %s' "$what" "${m[bare]}" "${m[bwrap]}" "${m[nocc]}" \
        "${m[cordon]}" "$(ratio "${m[cordon]}" "${m[bwrap]}")" "$(ratio "${m[cordon]}" "${m[bare]}")" "${c:--}" "$per" \
        "${target[$what]}")
      for e in "${extras[@]}"; do
        x=${e%%=*}
        line+=$(printf '\n       %s %s ms: cordon ÷ %s %s' "$x" "${m[$x]}" "$x" "$(ratio "${m[cordon]}" "${m[$x]}")")
      done
      echo "$line"
      results+="$line"$'\n'
    done
  done
done

# The floor: the same creations served by a supervisor that does nothing else.
if [[ ,$works, == *,floor,* ]]; then
  ${CC:-cc} -std=c17 -O2 -o "$tmp/notiffloor" "$here/notiffloor.c"
  id=${ids##*,}
  fs=${fss%%,*}
  read -r -a drop <<<"${drop_of[$id]}"
  title="the floor (bench/notiffloor.c, $files creations) as ${who_of[$id]}, on $fs, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "$title"
  results+=$'\n'"$title"$'\n'
  modes=(none continue addfd pin)
  for mo in "${modes[@]}"; do : >"$tmp/floor.$mo"; done
  for ((i = 0; i < repeats; i++)); do
    for mo in "${modes[@]}"; do
      d=${root_of[$fs]}/floor-$RANDOM$RANDOM
      "${drop[@]}" mkdir "$d"
      "${drop[@]}" "$tmp/notiffloor" "$mo" "$d" "$files" >"$tmp/floor.out" 2>&1 ||
        die "notiffloor $mo failed: $(head -c 400 "$tmp/floor.out")"
      sed -n 's/.*, \([0-9.]*\) us each$/\1/p' "$tmp/floor.out" >>"$tmp/floor.$mo"
      rm -rf "$d"
    done
  done
  declare -A f=()
  for mo in "${modes[@]}"; do f[$mo]=$(median <"$tmp/floor.$mo"); done
  line=$(printf 'us per creation: none %s, continue %s, addfd %s, pin %s; the hand-back adds %s (addfd - none), %s pinned' \
    "${f[none]}" "${f[continue]}" "${f[addfd]}" "${f[pin]}" \
    "$(awk -v a="${f[addfd]}" -v b="${f[none]}" 'BEGIN {printf "%.1f", a - b}')" \
    "$(awk -v a="${f[pin]}" -v b="${f[none]}" 'BEGIN {printf "%.1f", a - b}')")
  echo "$line"
  results+="$line"$'\n'
fi
[ -z "$out" ] || printf '%s' "$results" >"$out"
