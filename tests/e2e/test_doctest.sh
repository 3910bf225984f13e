#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The documentation's examples run as written (README.md and doc/*.md): every fenced sh,
# bash, shell or python block, extracted by tests/doctest.py, is one case. The blocks of
# one page run in order, each in a fresh bash (`-e -o pipefail`) or python3, in a scratch
# directory of the page's own with a HOME and an XDG_RUNTIME_DIR of its own (a git identity
# in the HOME, as a person's has), `cordon` first on PATH (this build's), and `~/.local/bin` next (where the pages put
# their links); python blocks find the binding in the tree and this build's libcordon.so.
# A block marked `<!-- doctest: skip (why) -->` is a TAP skip that says why; the summary
# counts and names them. tests/meson.build runs this file as root and as uid 65534.
. "$(dirname "$0")/lib.sh"
require_cordon

DOCS=("$REPO_ROOT/README.md" "$REPO_ROOT"/doc/*.md)
X=$T/examples
mkdir -p "$X" "$T/bin"
ln -s "$CORDON" "$T/bin/cordon"
LIBCORDON=$(dirname "$CORDON")/libcordon.so

# extracted once, whichever cases run (CORDON_TEST_CASES)
EXTRACT_RC=0
EXTRACTED=$("$PY" "$REPO_ROOT/tests/doctest.py" "$X" "${DOCS[@]}" 2>&1) || EXTRACT_RC=$?

t_annotations() {
  local out
  [ "$EXTRACT_RC" = 0 ] || die "$EXTRACTED"
  [ -s "$X/manifest" ] || die "no example found in ${DOCS[*]}"
  # a positive control of the extractor: a mistake in an annotation fails
  mkdir -p "$CT/bad/doc"
  printf '<!-- doctest: skip -->\n```sh\ntrue\n```\n<!-- doctest: skp (x) -->\n```sh\ntrue\n```\n```sh\nseq 9 | head -1\n```\n' >"$CT/bad/doc/x.md"
  if out=$("$PY" "$REPO_ROOT/tests/doctest.py" "$CT/bad/out" "$CT/bad/doc/x.md"); then
    die "the extractor took a skip without a reason and an unknown annotation"
  fi
  assert_contains "$out" "needs a reason"
  assert_contains "$out" "unknown doctest annotation"
  assert_contains "$out" "x.md:10 a pipe into a reader that may stop early"
}
run_case annotations t_annotations
[ -s "$X/manifest" ] || finish

# The page's directory: work/ (the current directory of its blocks) and home/.
page_dir() {
  local d=$T/pages/${1//\//_}
  if [ ! -d "$d" ]; then
    mkdir -p "$d/work" "$d/home"
    mkdir -m 0700 "$d/run"
    printf '[user]\n\tname = Doc Test\n\temail = doctest@example.invalid\n[init]\n\tdefaultBranch = main\n' \
      >"$d/home/.gitconfig"
  fi
  echo "$d"
}

t_example() {
  local n=$1 file=$2 line=$3 lang=$4 action=$5 reason=$6 d rc
  [ "$action" = run ] || skip_case "$reason (<!-- doctest: skip --> at $file:$line)"
  if [ "$lang" = py ]; then
    [ -e "$LIBCORDON" ] || skip_case "$LIBCORDON not found (built by default: default_library=both)"
    ! ldd "$LIBCORDON" 2>/dev/null | grep -q libasan ||
      skip_case "a sanitizer build's libcordon.so: python3 cannot load it without the ASan runtime preloaded"
  fi
  d=$(page_dir "$file")
  cd "$d/work"
  # XDG_RUNTIME_DIR: the page's own sessions (two runs of this test at once, a sanitizer
  # pass beside the plain one, must not stop each other's `tour`)
  export HOME=$d/home PATH=$T/bin:$d/home/.local/bin:$PATH XDG_RUNTIME_DIR=$d/run
  export PYTHONPATH=$REPO_ROOT/python CORDON_LIBRARY=$LIBCORDON
  rc=0
  if [ "$lang" = py ]; then
    timeout -k 10 300 bash -e -o pipefail "$X/$n.setup" >"$CT/out" 2>"$CT/err" &&
      timeout -k 10 300 "$PY" "$X/$n.py" >>"$CT/out" 2>>"$CT/err" || rc=$?
  else
    cat "$X/$n.setup" "$X/$n.sh" >"$CT/script"
    timeout -k 10 300 bash -e -o pipefail "$CT/script" >"$CT/out" 2>"$CT/err" || rc=$?
  fi
  [ "$rc" = 0 ] ||
    die "the example at $file:$line exited with $rc; its output ends: $(tail -c 600 "$CT/out") stderr: $(tail -c 900 "$CT/err")"
}

# A page's cleanup annotations, after its last block, whatever happened.
cleanup_page() {
  local file=$1 d
  d=$(page_dir "$file")
  [ -s "$X/cleanup-${file//\//_}.sh" ] || return 0
  (cd "$d/work" && HOME=$d/home PATH=$T/bin:$PATH XDG_RUNTIME_DIR=$d/run bash "$X/cleanup-${file//\//_}.sh") </dev/null >/dev/null 2>&1
}

skipped=()
prev=""
while IFS=$'\t' read -r n file line lang action reason; do
  [ -z "$prev" ] || [ "$prev" = "$file" ] || cleanup_page "$prev"
  prev=$file
  [ "$action" = run ] || skipped+=("$file:$line ($reason)")
  run_case "$file:$line" t_example "$n" "$file" "$line" "$lang" "$action" "$reason"
done <"$X/manifest"
[ -z "$prev" ] || cleanup_page "$prev"
echo "# doctest: ${#skipped[@]} example(s) marked to skip:"
for s in "${skipped[@]}"; do echo "#   $s"; done
finish
