#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Deny globs in depth (--deny-glob, --glob-depth, settings deniedPaths with glob
# characters): "**" matches hidden while their siblings stay visible, dot files, depth
# limits, symlinks (a matching link hides its target; a linked directory is never walked),
# a rule that shows part of a matched directory again, refused patterns and the match
# limit (exit 125 naming the rule, nothing runs), settings files, `cordon explain`.
# (tests/e2e/test_glob.sh has the first, simpler cases.)
. "$(dirname "$0")/lib.sh"

# A workspace with secrets at several depths, dot files, and ordinary files beside them.
make_tree() {
  mkdir -p "$WS/a/b/c" "$WS/.git" "$WS/node_modules/pkg"
  echo TOP >"$WS/top.env"
  echo DOT >"$WS/.env"
  echo LOCAL >"$WS/.env.local"
  echo ONE >"$WS/a/one.env"
  echo DEEP >"$WS/a/b/c/deep.env"
  echo INGIT >"$WS/.git/x.env"
  echo PKG >"$WS/node_modules/pkg/p.env"
  echo keep >"$WS/a/keep.txt"
  echo keep >"$WS/a/b/c/keep.txt"
  echo notenv >"$WS/a/one.env.bak"
}

# CAT: print "name=content" for each readable non-empty file given, "name=" for an empty
# one, "name!" when it cannot be read.
CAT='for f do if c=$(cat "$f" 2>/dev/null); then echo "$f=$c"; else echo "$f!"; fi; done'

t_starstar_hides_matches_keeps_siblings() {
  make_tree
  local before
  before=$(snapshot "$WS")
  crun run --deny-glob "$WS/**/*.env" -- sh -c "$CAT"' ; (echo x >a/one.env) 2>/dev/null && echo "wrote one.env"; exit 0' sh \
    top.env .env .env.local a/one.env a/b/c/deep.env .git/x.env node_modules/pkg/p.env a/keep.txt a/b/c/keep.txt a/one.env.bak
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "top.env=
.env=
.env.local=LOCAL
a/one.env=
a/b/c/deep.env=
.git/x.env=
node_modules/pkg/p.env=
a/keep.txt=keep
a/b/c/keep.txt=keep
a/one.env.bak=notenv" "--deny-glob WS/**/*.env: every *.env (dot files and dot directories too) hidden, siblings visible"
  assert_unchanged "$before" "$WS" "the workspace after a --deny-glob run"
}

t_two_globs_and_classes() {
  make_tree
  crun run --deny-glob "$WS/**/.env.local" --deny-glob "$WS/a/[a-o]ne.e?v" -- sh -c "$CAT" sh \
    .env.local a/one.env top.env .env
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" ".env.local=
a/one.env=
top.env=TOP
.env=DOT" "two globs, a class and a '?'"
}

t_depth_limits() {
  make_tree
  crun run --deny-glob "$WS/**/*.env" --glob-depth 1 -- sh -c "$CAT" sh top.env a/one.env a/b/c/deep.env
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "top.env=
a/one.env=ONE
a/b/c/deep.env=DEEP" "--glob-depth 1"
  crun run --deny-glob "$WS/**/*.env" --glob-depth 2 -- sh -c "$CAT" sh top.env a/one.env a/b/c/deep.env
  assert_eq "$OUT" "top.env=
a/one.env=
a/b/c/deep.env=DEEP" "--glob-depth 2"
  # the depth counts from the pattern's static prefix
  crun run --deny-glob "$WS/a/**/*.env" --glob-depth 3 -- sh -c "$CAT" sh a/one.env a/b/c/deep.env
  assert_eq "$OUT" "a/one.env=
a/b/c/deep.env=" "--glob-depth 3 below WS/a"
}

t_symlink_match_hides_target() {
  # link.env -> a file outside the workspace, shown read-only: reading it through the link
  # or by its own path gives nothing
  echo "outside secret" >"$OUTSIDE/real-secret"
  ln -s "$OUTSIDE/real-secret" "$WS/link.env"
  crun run --allow-ro "$OUTSIDE" --deny-glob "$WS/*.env" -- sh -c "$CAT" sh link.env "$OUTSIDE/real-secret" "$OUTSIDE/secret"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "link.env=
$OUTSIDE/real-secret=
$OUTSIDE/secret=host secret outside the workspace" "a symlink match hides its target"
  [ -L "$WS/link.env" ] || die "the symlink on the host is gone"
  assert_file_content "$OUTSIDE/real-secret" "outside secret"
}

t_symlinked_dir_not_walked() {
  # WS/linkdir -> OUTSIDE (shown read-only): WS/**/*.env never walks through the link
  echo "through the link" >"$OUTSIDE/x.env"
  ln -s "$OUTSIDE" "$WS/linkdir"
  echo TOP >"$WS/top.env"
  crun run --allow-ro "$OUTSIDE" --deny-glob "$WS/**/*.env" -- sh -c "$CAT" sh top.env linkdir/x.env
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "top.env=
linkdir/x.env=through the link" "a symlink to a directory is not followed by the walk"
  crun explain --allow-ro "$OUTSIDE" --deny-glob "$WS/**/*.env"
  assert_not_contains "$OUT" "$OUTSIDE/x.env" "explain lists nothing through the link"
}

t_matched_dir_with_rule_below() {
  # secrets/ matches and is hidden whole; --allow-ro shows secrets/public again, where a
  # match must still be hidden
  mkdir -p "$WS/secrets/public"
  echo S >"$WS/secrets/top-secret"
  echo P >"$WS/secrets/public/readme"
  echo K >"$WS/secrets/public/secret-key"
  crun run --deny-glob "$WS/**/secret*" --allow-ro "$WS/secrets/public" -- sh -c "$CAT" sh \
    secrets/top-secret secrets/public/readme secrets/public/secret-key
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "secrets/top-secret!
secrets/public/readme=P
secrets/public/secret-key=" "a match inside a directory shown again below a matched one"
}

t_explain_lists_matches() {
  make_tree
  ln -s nowhere "$WS/dangling.env"
  expect_ok explain --deny-glob "$WS/**/*.env" --glob-depth 2
  local f
  for f in top.env .env a/one.env; do
    printf '%s\n' "$OUT" | grep -E "^ +deny +$WS/$f +--deny-glob $WS/\*\*/\*\.env" >/dev/null ||
      die "explain does not list $WS/$f with its glob: $(printf '%s' "$OUT" | grep -F "$WS" | _one_line)"
    printf '%s\n' "$OUT" | grep -E "hide +$WS/$f +--deny-glob" >/dev/null || die "the plan does not hide $WS/$f"
  done
  assert_not_contains "$OUT" "$WS/a/b/c/deep.env" "explain with --glob-depth 2"
  assert_contains "$OUT" "glob   $WS/**/*.env" "explain's glob line"
  assert_contains "$OUT" "matches under $WS (depth 2)" "explain's glob line"
  printf '%s\n' "$OUT" | grep -E "skip +$WS/dangling.env .*does not exist" >/dev/null ||
    die "explain does not say that the dangling symlink hides nothing"
}

t_refused_patterns() {
  local marker=$CT/marker pat
  for pat in '/*.env' '/**/.env' '**/*.env' 'relative/*.env' "$WS/[ab.env" "$WS/../*.env" "$WS/x\\"; do
    crun run --deny-glob "$pat" -- sh -c 'touch "$1"' sh "$marker"
    [ "$RC" = 125 ] || die "--deny-glob '$pat': expected exit 125, got $(last_run)"
    assert_cordon_stderr
    assert_contains "$ERR" "--deny-glob" "the message names the rule for '$pat'"
    assert_absent "$marker" "--deny-glob '$pat' ran the command"
  done
  crun run --deny-glob '/*.env' -- true
  assert_contains "$ERR" "whole file system" "why a pattern without a static prefix is refused"
  for pat in 0 -1 x 1.5 ''; do
    crun run --deny-glob "$WS/**/*.env" --glob-depth "$pat" -- sh -c 'touch "$1"' sh "$marker"
    [ "$RC" = 125 ] || die "--glob-depth '$pat': expected exit 125, got $(last_run)"
    assert_contains "$ERR" "--glob-depth" "the message names --glob-depth"
    assert_absent "$marker"
  done
}

t_prefix_through_symlink_to_root() {
  # a prefix that is "/" once symlinks are followed would scan the whole file system
  ln -s / "$CT/root-link"
  local marker=$CT/marker
  crun run --deny-glob "$CT/root-link/*.env" -- sh -c 'touch "$1"' sh "$marker"
  [ "$RC" = 125 ] || die "expected exit 125, got $(last_run)"
  assert_contains "$ERR" "whole file system"
  assert_absent "$marker"
}

t_prefix_through_planted_symlink() {
  # WS/linkdir -> OUTSIDE lies in the writable workspace: a command could have planted it to
  # send the walk elsewhere, so the run fails closed even though nothing would match
  ln -s "$OUTSIDE" "$WS/linkdir"
  local marker=$CT/marker
  crun run --deny-glob "$WS/linkdir/**/*.none" -- sh -c 'touch "$1"' sh "$marker"
  [ "$RC" = 125 ] || die "expected exit 125, got $(last_run)"
  assert_cordon_stderr
  assert_contains "$ERR" "crosses the symlink $WS/linkdir"
  assert_contains "$ERR" "--deny-glob"
  assert_absent "$marker"
  # the same link outside any writable path is followed like any rule path
  local d
  d=$(scratch_outside_tmp)
  mkdir "$d/real"
  echo R >"$d/real/x.env"
  ln -s "$d/real" "$d/link"
  crun run --allow-ro "$d" --deny-glob "$d/link/*.env" -- sh -c "$CAT" sh "$d/real/x.env"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "$d/real/x.env=" "a read-only symlinked prefix is followed"
}

t_match_limit() {
  # more than 10,000 matches for one pattern: refused, naming the pattern
  mkdir "$WS/many"
  (cd "$WS/many" && seq -f 'f%g.env' 1 10001 | xargs touch)
  local marker=$CT/marker
  crun run --deny-glob "$WS/**/*.env" -- sh -c 'touch "$1"' sh "$marker"
  [ "$RC" = 125 ] || die "expected exit 125, got $(last_run)"
  assert_cordon_stderr
  assert_contains "$ERR" "$WS/**/*.env" "the message names the pattern"
  assert_contains "$ERR" "more than 10000" "the message names the limit"
  assert_absent "$marker"
  # 10,000 exactly is fine (depth 1 keeps it to the directory)
  rm "$WS/many/f10001.env"
  crun run --deny-glob "$WS/many/*.env" -- sh -c 'cat many/f1.env many/f10000.env; echo ok'
  [ "$RC" = 0 ] || die "10000 matches: expected exit 0, got $(last_run)"
  assert_eq "$OUT" "ok"
}

t_settings_globs() {
  make_tree
  mkdir -p "$WS/secrets"
  echo K >"$WS/secrets/key.pem"
  echo C >"$WS/secrets/cert.txt"
  cat >"$CT/settings.json" <<'EOF'
{
  "sandbox": {
    "deniedPaths": [
      "**/*.env",
      "<workspace>/secrets/*.pem"
    ]
  }
}
EOF
  crun run --settings "$CT/settings.json" -- sh -c "$CAT" sh top.env a/b/c/deep.env secrets/key.pem secrets/cert.txt a/keep.txt
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "top.env=
a/b/c/deep.env=
secrets/key.pem=
secrets/cert.txt=C
a/keep.txt=keep" "globs in a settings file's deniedPaths"
  expect_ok explain --settings "$CT/settings.json"
  assert_contains "$OUT" "$CT/settings.json:4 (deniedPaths \"**/*.env\")" "explain names the settings line and glob"
}

t_settings_bad_glob() {
  cat >"$CT/bad.json" <<'EOF'
{
  "sandbox": {
    "deniedPaths": [
      "<workspace>/ok",
      "<workspace>/[unclosed"
    ]
  }
}
EOF
  local marker=$CT/marker
  crun run --settings "$CT/bad.json" -- sh -c 'touch "$1"' sh "$marker"
  [ "$RC" = 125 ] || die "expected exit 125, got $(last_run)"
  assert_cordon_stderr
  assert_contains "$ERR" "$CT/bad.json:5:" "the message names the file and line"
  assert_contains "$ERR" "closing ']'" "the message says what is wrong"
  assert_absent "$marker"
  # a settings glob whose prefix is the root once ~ is expanded is refused at launch
  printf '{"sandbox": {"deniedPaths": ["/*/x.env"]}}\n' >"$CT/root.json"
  crun run --settings "$CT/root.json" -- sh -c 'touch "$1"' sh "$marker"
  [ "$RC" = 125 ] || die "expected exit 125, got $(last_run)"
  assert_contains "$ERR" "$CT/root.json:1" "the message names the file and line"
  assert_contains "$ERR" "whole file system"
  assert_absent "$marker"
}

t_unreadable_directories() {
  [ "$MY_UID" != 0 ] || skip_case "root reads every directory: the permission rules show only unprivileged (meson test runs this file as uid 65534 too: e2e/globs/unpriv)"
  mkdir -p "$WS/sealed" "$WS/search"
  echo S >"$WS/sealed/in.env"
  echo X >"$WS/search/in.env"
  chmod 000 "$WS/sealed"
  chmod 100 "$WS/search"
  # may enter but not list: a command could open a guessed name, so the walk fails closed
  crun run --deny-glob "$WS/**/*.env" -- true
  [ "$RC" = 125 ] || { chmod 755 "$WS/sealed" "$WS/search"; die "search-only directory: expected exit 125, got $(last_run)"; }
  assert_contains "$ERR" "$WS/search"
  assert_contains "$ERR" "chmod u+rx"
  # may neither list nor enter, but ours: the command could chmod it back (one run's
  # chmod 000, the next's chmod 755), so the walk fails closed too
  chmod 000 "$WS/search"
  crun run --deny-glob "$WS/**/*.env" -- true
  chmod 755 "$WS/sealed" "$WS/search"
  [ "$RC" = 125 ] || die "own unreachable directories: expected exit 125, got $(last_run)"
  assert_contains "$ERR" "chmod u+rx"
  # the control: readable again, the run goes on and hides both
  expect_output "" run --deny-glob "$WS/**/*.env" -- sh -c 'cat sealed/in.env search/in.env'
  # someone else's directory that we may neither list nor enter (/root, 0700): nothing
  # below is reachable for a command running as us, skipped
  if [ "$(stat -c %u:%a /root 2>/dev/null)" = 0:700 ]; then
    expect_ok run --deny-glob "/root/**/*.env" -- true
  else
    echo "# /root is not root's own 0700 here: the someone-else's-directory control is not run"
  fi
}

t_base_host_glob_above_home() {
  # under --base host a glob that matches the home's parent turns the whole-root bind into
  # one bind per entry, and still runs
  local d
  d=$(scratch_outside_tmp)
  mkdir -p "$d/users/me" "$d/users/other"
  echo O >"$d/users/other/.env"
  crun run --base host --deny-glob "$d/users/*/.env" -- sh -c "$CAT" sh "$d/users/other/.env"
  [ "$RC" = 0 ] || die "expected exit 0, got $(last_run)"
  assert_eq "$OUT" "$d/users/other/.env=" "--base host --deny-glob"
  HOME=$d/users/me crun run --base host --deny-glob "$d/**" -- sh -c 'echo "$HOME"; ls "$1" 2>&1 | head -1' sh "$d/users"
  [ "$RC" = 0 ] || die "a glob above HOME under --base host: expected exit 0, got $(last_run)"
}

run_case starstar_hides_matches_keeps_siblings t_starstar_hides_matches_keeps_siblings
run_case two_globs_and_classes t_two_globs_and_classes
run_case depth_limits t_depth_limits
run_case symlink_match_hides_target t_symlink_match_hides_target
run_case symlinked_dir_not_walked t_symlinked_dir_not_walked
run_case matched_dir_with_rule_below t_matched_dir_with_rule_below
run_case explain_lists_matches t_explain_lists_matches
run_case refused_patterns t_refused_patterns
run_case prefix_through_symlink_to_root t_prefix_through_symlink_to_root
run_case prefix_through_planted_symlink t_prefix_through_planted_symlink
run_case match_limit t_match_limit
run_case settings_globs t_settings_globs
run_case settings_bad_glob t_settings_bad_glob
run_case unreadable_directories t_unreadable_directories
run_case base_host_glob_above_home t_base_host_glob_above_home
finish
