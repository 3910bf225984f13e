#!/usr/bin/env bash
# HOME, TMPDIR and /tmp inside the sandbox are private, empty, writable, and gone after.
. "$(dirname "$0")/lib.sh"

# New entries directly under host /tmp whose name mentions cordon (leftover private dirs).
tmp_cordon_entries() { find /tmp -mindepth 1 -maxdepth 1 -name '*cordon*' -user "$MY_UID" 2>/dev/null | sort; }

# Inside: print each /tmp entry that is not on the way to the cwd, HOME or TMPDIR.
TMP_ENTRIES='
  for e in $(ls -A /tmp); do
    case "$PWD/ $HOME/ ${TMPDIR:-/nonexistent}/" in
      /tmp/"$e"/* | *" /tmp/$e/"*) ;;
      *) echo "unexpected /tmp entry: $e" ;;
    esac
  done
'

t_home_private_empty_writable() {
  echo "host dotfile" >"$HOME/.host-dotfile"
  local before
  before=$(snapshot "$HOME" strict)
  crun run -- sh -c '
    [ -n "${HOME:-}" ] || { echo "HOME unset"; exit 0; }
    [ -d "$HOME" ] || echo "HOME is not a directory"
    l=$(ls -A "$HOME" 2>&1); [ -z "$l" ] || echo "HOME not empty: $l"
    (echo inside >"$HOME/inside-file") 2>/dev/null || echo "HOME not writable"
    mkdir -p "$HOME/.cache/x" 2>/dev/null || echo "cannot mkdir in HOME"
    echo "HOME=$HOME" >&2
    exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "private HOME"
  assert_unchanged "$before" "$HOME" "the caller's HOME on the host" strict
  local inside
  inside=$(sed -n 's/^HOME=//p' "$ERRF" | tail -n 1)
  if [ -n "$inside" ] && [ -e "$inside/inside-file" ]; then
    die "the private HOME ($inside) is still on the host after the run"
  fi
}

t_tmpdir_private_empty_writable() {
  crun run -- sh -c '
    [ -n "${TMPDIR:-}" ] || { echo "TMPDIR unset"; exit 0; }
    [ -d "$TMPDIR" ] || echo "TMPDIR is not a directory"
    # empty, but for the way down to the working directory or HOME when TMPDIR is /tmp
    # and the workspace lives under /tmp
    for e in $(ls -A "$TMPDIR"); do
      case "$PWD/ $HOME/" in "$TMPDIR/$e/"* | *" $TMPDIR/$e/"*) ;; *) echo "TMPDIR not empty: $e" ;; esac
    done
    (echo inside >"$TMPDIR/inside-file") 2>/dev/null || echo "TMPDIR not writable"
    [ "$TMPDIR" != "$HOME" ] || echo "TMPDIR is HOME"
    echo "TMPDIR=$TMPDIR" >&2
    exit 0'
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "private TMPDIR"
  local inside
  inside=$(sed -n 's/^TMPDIR=//p' "$ERRF" | tail -n 1)
  if [ -n "$inside" ] && [ -e "$inside/inside-file" ]; then
    die "the private TMPDIR ($inside) is still on the host after the run"
  fi
}

t_host_tmpdir_not_used() {
  # cordon's own TMPDIR value is not passed in, and nothing of the run stays in it
  mkdir "$CT/hosttmp"
  echo "host tmp file" >"$CT/hosttmp/host-file"
  local before
  before=$(snapshot "$CT/hosttmp")
  TMPDIR=$CT/hosttmp crun run -- sh -c '[ -e "$1/host-file" ] && echo "host TMPDIR visible"; exit 0' sh "$CT/hosttmp"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "host TMPDIR inside"
  assert_unchanged "$before" "$CT/hosttmp" "cordon left something in its own TMPDIR"
}

t_nothing_left_in_host_tmp() {
  local before after
  before=$(tmp_cordon_entries)
  expect_ok run -- sh -c 'echo x >"$HOME/f"; [ -z "${TMPDIR:-}" ] || echo y >"$TMPDIR/f"; echo z >/tmp/f'
  after=$(tmp_cordon_entries)
  local new
  new=$(comm -13 <(printf '%s\n' "$before") <(printf '%s\n' "$after") | grep -v '^$' || true)
  [ -z "$new" ] || die "new entries left in host /tmp after the run: $(printf '%s' "$new" | _one_line)"
}

t_home_fresh_each_run() {
  expect_ok run -- sh -c 'echo first >"$HOME/persist"; mkdir -p "$HOME/.config"'
  expect_output "" run -- sh -c 'ls -A "$HOME"'
}

t_tmp_private() {
  local m marker
  m=$(new_mark)
  marker=$(mktemp "/tmp/cordon-e2e-marker.$m.XXXXXX")
  echo "host tmp marker" >"$marker"
  # the workspace lives under /tmp here: only the path down to it (and to the private HOME
  # and TMPDIR, if cordon puts them there) may show in /tmp
  crun run -- sh -c "$TMP_ENTRIES"'
    [ -e "$1" ] && echo "host marker visible: $1"
    (echo inside >"/tmp/inside-$2") 2>/dev/null || echo "/tmp not writable"
    exit 0' sh "$marker" "$m"
  local leaked=""
  [ -e "/tmp/inside-$m" ] && { leaked=yes; rm -f "/tmp/inside-$m"; }
  rm -f "$marker"
  [ -z "$leaked" ] || die "a file written to /tmp inside landed in host /tmp"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "" "private /tmp"
}

t_tmp_private_no_workspace() {
  expect_output "" run --no-workspace --chdir / -- sh -c "$TMP_ENTRIES"
}

t_tmp_rule_covers() {
  # a rule that covers /tmp replaces the private /tmp
  local marker
  marker=$(mktemp /tmp/cordon-e2e-visible.XXXXXX)
  echo "visible marker" >"$marker"
  crun run --allow-ro /tmp -- cat "$marker"
  rm -f "$marker"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "visible marker" "host /tmp under --allow-ro /tmp"
}

run_case home_private_empty_writable t_home_private_empty_writable
run_case tmpdir_private_empty_writable t_tmpdir_private_empty_writable
run_case host_tmpdir_not_used t_host_tmpdir_not_used
run_case nothing_left_in_host_tmp t_nothing_left_in_host_tmp
run_case home_fresh_each_run t_home_fresh_each_run
run_case tmp_private t_tmp_private
run_case tmp_private_no_workspace t_tmp_private_no_workspace
run_case tmp_rule_covers t_tmp_rule_covers
finish
