#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installed like a real tool (issue 9, item 11): `meson install` puts the binary, the
# library, cordon.pc, the man page and the shell completions in their places (and, where
# AppArmor restricts user namespaces, the profile that allows cordon's); the debian/
# directory builds a package with `dpkg-buildpackage -us -uc` that installs (into a
# scratch root here) and runs, `cordon check` included.  Both build from the sources, so
# they run in the root pass of an ordinary build only.
. "$(dirname "$0")/lib.sh"
require_cordon

BUILD_DIR=$(dirname "$CORDON")

need_root_build() {
  [ "$MY_UID" -eq 0 ] || skip_case "root pass only: it installs from the build tree (owned by root), once"
  [ -f "$BUILD_DIR/meson-private/coredata.dat" ] || skip_case "$CORDON is not in a meson build directory"
  if meson configure "$BUILD_DIR" 2>/dev/null | grep -Eq '^[[:space:]]*b_sanitize[[:space:]]+(address|undefined)'; then
    skip_case "a sanitizer build: the installation is tested with the ordinary one"
  fi
}

t_meson_install() {
  need_root_build
  local d=$CT/dest
  meson install -C "$BUILD_DIR" --destdir "$d" --no-rebuild >"$CT/install.log" 2>&1 ||
    die "meson install failed: $(tail -5 "$CT/install.log")"
  local f missing=""
  for f in bin/cordon 'lib/*/libcordon.so.0' 'lib/*/libcordon.so' 'lib/*/libcordon.a' 'lib/*/pkgconfig/cordon.pc' \
    include/cordon.h share/man/man1/cordon.1 share/bash-completion/completions/cordon share/zsh/site-functions/_cordon; do
    # shellcheck disable=SC2086
    compgen -G "$d/usr/local/"$f >/dev/null || missing+=" $f"
  done
  [ -z "$missing" ] || die "not installed:$missing ($(find "$d" -type f | head -20 | tr '\n' ' '))"
  # the Python package, for the system's python3, knowing where the library went
  if python3 -c 'import sys; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; then
    local pkg
    pkg=$(find "$d/usr/local/lib" -path '*/cordon/_installed.py' | head -1)
    [ -n "$pkg" ] || die "the Python package is not installed: $(find "$d/usr/local/lib" -name '*.py' | head -5 | tr '\n' ' ')"
    for f in __init__.py _native.py aio.py py.typed; do
      [ -e "$(dirname "$pkg")/$f" ] || die "the Python package has no $f"
    done
    grep -q "LIBDIR = \"/usr/local/lib" "$pkg" || die "the package does not know the library's directory: $(cat "$pkg")"
    # it loads the library meson installed (here under the destination directory)
    local v
    v=$(cd "$CT" && PYTHONPATH=$(dirname "$(dirname "$pkg")") CORDON_LIBRARY=$(compgen -G "$d/usr/local/lib/*/libcordon.so.0") \
      python3 -c 'import cordon; print(cordon.version())') || die "the installed Python package does not load: $v"
    assert_eq "$v" "$("$d/usr/local/bin/cordon" --version 2>/dev/null | grep -o '[0-9][0-9.]*' | head -1)" "the Python package's library version"
  fi
  # the installed binary runs, and its man page is a man page
  "$d/usr/local/bin/cordon" run -- true || die "the installed cordon does not run"
  # bubblewrap's command line: cordon as a file named bwrap (not a symbolic link, which
  # Codex resolves: doc/codex.md) in a directory of its own for an agent's PATH, never a
  # bwrap in bin (doc/bwrap.md)
  local b=$d/usr/local/libexec/cordon/bwrap/bwrap
  [ -f "$b" ] && [ ! -L "$b" ] || die "$b is not a file of its own"
  "$b" --version | grep -q "^bubblewrap .*(cordon " || die "the installed bwrap does not speak as cordon's bwrap"
  assert_eq "$(ls "$d/usr/local/libexec/cordon/bwrap")" bwrap "the bwrap's directory"
  assert_absent "$d/usr/local/bin/bwrap" "meson install put a bwrap in bin"
  man -l "$d/usr/local/share/man/man1/cordon.1" 2>/dev/null | grep -q -- "--tty" || die "the installed man page"
  # the bash completion completes run options from the binary itself
  local got
  got=$(PATH=$d/usr/local/bin:$PATH bash -c '. "$1"; COMP_WORDS=(cordon run --all); COMP_CWORD=2; _cordon; echo "${COMPREPLY[*]}"' \
    sh "$d/usr/local/share/bash-completion/completions/cordon")
  assert_contains "$got" "--allow" "bash completion of --all"
  assert_contains "$got" "--allow-ro" "bash completion of --all"
  got=$(PATH=$d/usr/local/bin:$PATH bash -c '. "$1"; COMP_WORDS=(cordon run --base ""); COMP_CWORD=3; _cordon; echo "${COMPREPLY[*]}"' \
    sh "$d/usr/local/share/bash-completion/completions/cordon")
  assert_eq "$got" "system host empty" "bash completion of --base"
  # every subcommand, and theirs
  got=$(PATH=$d/usr/local/bin:$PATH bash -c '. "$1"; COMP_WORDS=(cordon ""); COMP_CWORD=1; _cordon; echo "${COMPREPLY[*]}"' \
    sh "$d/usr/local/share/bash-completion/completions/cordon")
  for w in run explain check workspace session bwrap help; do assert_contains " $got " " $w " "bash completion of the subcommands"; done
  got=$(PATH=$d/usr/local/bin:$PATH bash -c '. "$1"; COMP_WORDS=(cordon workspace ""); COMP_CWORD=2; _cordon; echo "${COMPREPLY[*]}"' \
    sh "$d/usr/local/share/bash-completion/completions/cordon")
  assert_eq "$got" "create run diff integrate list status restore remove" "bash completion of workspace"
  got=$(PATH=$d/usr/local/bin:$PATH bash -c '. "$1"; COMP_WORDS=(cordon session ""); COMP_CWORD=2; _cordon; echo "${COMPREPLY[*]}"' \
    sh "$d/usr/local/share/bash-completion/completions/cordon")
  assert_eq "$got" "start exec list stop" "bash completion of session"
  got=$(PATH=$d/usr/local/bin:$PATH bash -c '. "$1"; COMP_WORDS=(cordon session exec s --ke); COMP_CWORD=4; _cordon; echo "${COMPREPLY[*]}"' \
    sh "$d/usr/local/share/bash-completion/completions/cordon")
  assert_eq "$got" "--keep" "bash completion of session exec's options"
  if command -v zsh >/dev/null; then
    zsh -n "$d/usr/local/share/zsh/site-functions/_cordon" || die "the zsh completion does not parse"
  fi
  # the AppArmor profile, where AppArmor restricts user namespaces (forced on here, in a
  # configuration of its own: the plan names it and its path is the binary's)
  local conf=$CT/apparmor-build
  meson setup "$conf" "$REPO_ROOT" -Dapparmor=enabled -Dtests=false --prefix /opt/cordon >"$CT/setup.log" 2>&1 ||
    die "meson setup -Dapparmor=enabled: $(tail -5 "$CT/setup.log")"
  meson introspect "$conf" --installed | grep -q '"/etc/apparmor.d/cordon"' || die "no AppArmor profile in the install plan"
  grep -q 'profile cordon /opt/cordon/bin/cordon flags=(unconfined)' "$conf/data/apparmor/cordon" ||
    die "the AppArmor profile: $(cat "$conf/data/apparmor/cordon")"
  grep -qx '  userns,' "$conf/data/apparmor/cordon" || die "the AppArmor profile allows no user namespaces"
}

t_debian_package() {
  need_root_build
  command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null ||
    skip_case "dpkg-buildpackage or debhelper missing (bootstrap.sh installs dpkg-dev and debhelper)"
  local src=$CT/pkg/cordon-0.1.0
  mkdir -p "$src"
  # the sources as a fresh checkout would have them
  (cd "$REPO_ROOT" && git ls-files -co --exclude-standard | grep -v '^build' | tar -cf - -T -) | tar -xf - -C "$src"
  (cd "$src" && nice dpkg-buildpackage -us -uc) >"$CT/pkg.log" 2>&1 || die "dpkg-buildpackage -us -uc failed: $(tail -20 "$CT/pkg.log")"
  local deb p
  deb=$(ls "$CT"/pkg/cordon_*_*.deb 2>/dev/null | head -1)
  [ -n "$deb" ] || die "no package built: $(ls "$CT/pkg")"
  # the split: the command, the shared library, the development files, the Python package
  for p in libcordon0 libcordon-dev python3-cordon; do
    compgen -G "$CT/pkg/${p}_*_*.deb" >/dev/null || die "no $p package built: $(ls "$CT/pkg")"
  done
  dpkg -c "$deb" | grep -q 'libcordon\.so' && die "the cordon package carries the library: $(dpkg -c "$deb" | grep libcordon)"
  dpkg -c "$CT"/pkg/libcordon0_*.deb | grep -q 'libcordon\.so\.0' || die "libcordon0 has no libcordon.so.0"
  dpkg -c "$CT"/pkg/libcordon-dev_*.deb | grep -q 'include/cordon\.h' || die "libcordon-dev has no cordon.h"
  dpkg -c "$CT"/pkg/python3-cordon_*.deb | grep -q 'dist-packages/cordon/__init__\.py' ||
    die "python3-cordon has no cordon package: $(dpkg -c "$CT"/pkg/python3-cordon_*.deb | head)"
  ls "$CT"/pkg/cordon_*.dsc >/dev/null || die "no source package (.dsc)"
  # installed into a scratch root (its own dpkg database; the host's libc and jansson)
  local root=$CT/root
  mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
  : >"$root/var/lib/dpkg/status"
  dpkg --instdir="$root" --admindir="$root/var/lib/dpkg" --force-depends --force-not-root --force-script-chrootless \
    --log=/dev/null -i "$deb" "$CT"/pkg/libcordon0_*.deb "$CT"/pkg/libcordon-dev_*.deb >"$CT/dpkg.log" 2>&1 ||
    die "dpkg -i into a scratch root: $(tail -5 "$CT/dpkg.log")"
  # unpacked only: its postinst byte-compiles with the root's py3compile, which a scratch
  # root does not have
  dpkg --instdir="$root" --admindir="$root/var/lib/dpkg" --force-depends --force-not-root --force-script-chrootless \
    --log=/dev/null --unpack "$CT"/pkg/python3-cordon_*.deb >"$CT/dpkg.log" 2>&1 ||
    die "dpkg --unpack python3-cordon into a scratch root: $(tail -5 "$CT/dpkg.log")"
  dpkg --admindir="$root/var/lib/dpkg" -s cordon | grep -q '^Status: install ok installed' || die "the package is not installed"
  local c=$root/usr/bin/cordon
  [ -x "$c" ] || die "no /usr/bin/cordon in the package: $(dpkg -c "$deb" | head -30)"
  (cd "$WS" && "$c" check >"$CT/check.out" 2>&1) || die "cordon check after installing the package: $(tail -5 "$CT/check.out")"
  (cd "$WS" && "$c" run -- sh -c 'echo "hello from the package"') >"$CT/run.out" 2>&1
  assert_contains "$(cat "$CT/run.out")" "hello from the package" "the installed cordon runs a command"
  [ -f "$root/usr/share/man/man1/cordon.1.gz" ] || die "no man page in the package"
  [ -f "$root/usr/share/bash-completion/completions/cordon" ] || die "no bash completion in the package"
  # a harness built against the installed library, as `cc prog.c $(pkg-config ...)`
  cat >"$CT/harness.c" <<'C'
#include <cordon.h>
#include <stdio.h>
int main(void)
{
    cordon_error err = CORDON_ERROR_INIT;
    cordon_policy *p = cordon_policy_new();
    cordon_result r = CORDON_RESULT_INIT;
    char *argv[] = {"sh", "-c", "exit 7", NULL};
    if (cordon_policy_set_no_workspace(p, 1, &err) < 0 || cordon_policy_set_cwd(p, "/", &err) < 0 ||
        cordon_run(p, argv, &r, &err) < 0) {
        fprintf(stderr, "harness: %s\n", err.message);
        return 1;
    }
    printf("exit %d, cordon %s\n", r.exit_code, cordon_version());
    cordon_policy_free(p);
    return 0;
}
C
  local flags
  flags=$(PKG_CONFIG_PATH=$root/usr/lib/$(gcc -print-multiarch)/pkgconfig pkg-config --define-variable=prefix="$root/usr" \
    --cflags --libs cordon) || die "pkg-config does not find the installed cordon.pc"
  # shellcheck disable=SC2086
  cc -o "$CT/harness" "$CT/harness.c" $flags || die "the harness does not build against the installed library ($flags)"
  LD_LIBRARY_PATH=$root/usr/lib/$(gcc -print-multiarch) "$CT/harness" >"$CT/h.out" 2>&1 || die "the harness: $(cat "$CT/h.out")"
  assert_contains "$(cat "$CT/h.out")" "exit 7, cordon " "the harness through the installed libcordon.so"
  # the Python package of python3-cordon, on the library of libcordon0
  local py lib0
  lib0=$(compgen -G "$root/usr/lib/*/libcordon.so.0")
  cat >"$CT/py.py" <<'PY'
import cordon
r = cordon.run(["sh", "-c", "exit 5"], capture=True)
print("exit", r.exit_code, cordon.version())
PY
  py=$(cd "$WS" && PYTHONPATH=$root/usr/lib/python3/dist-packages CORDON_LIBRARY=$lib0 /usr/bin/python3 "$CT/py.py" 2>&1) ||
    die "python3-cordon: $py"
  assert_contains "$py" "exit 5 " "python3-cordon runs a command"
}

run_case meson_install t_meson_install
run_case debian_package t_debian_package
finish
