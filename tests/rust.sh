#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/rust.sh CRATES LIBDIR: the Rust crates' tests (CRATES = rust/: cordon-sys, cordon)
# against LIBDIR's libcordon.so, with Debian's cargo and rustc, offline, built in the
# current directory (the harness's fresh one, so root and uid 65534 each build their own);
# `cargo test`'s lines as TAP. A TAP skip where cargo is missing (bootstrap.sh installs
# it) or the library is a sanitizer build.
set -u
crates=$1 lib=$2
skip() {
  echo "1..0 # SKIP $*"
  exit 0
}
# CI has Debian's toolchain only: never a newer one first on PATH (rustup's)
export PATH=/usr/bin:/bin
command -v cargo >/dev/null 2>&1 || skip "cargo not found (bootstrap.sh installs Debian's cargo)"
[ -e "$lib/libcordon.so" ] || skip "$lib/libcordon.so not found (built by default: default_library=both)"
[ -r "$crates/cordon/src/lib.rs" ] || skip "$crates cannot be read by uid $(id -u)"
if ldd "$lib/libcordon.so" 2>/dev/null | grep -q libasan; then
  skip "$lib/libcordon.so is a sanitizer build: a test program would need the ASan runtime first (the default build's run covers the crates)"
fi
work=$PWD/rust-test
mkdir -p "$work" || skip "cannot make $work"
# a copy: cargo writes Cargo.lock beside the manifest, and uid 65534 cannot write the checkout
cp -R "$crates" "$work/rust"
export CARGO_HOME=$work/cargo-home CARGO_TARGET_DIR=$work/target CORDON_LIB_DIR=$lib
export CORDON_INCLUDE_DIR=$crates/../include CARGO_TERM_COLOR=never RUST_BACKTRACE=1
log=$work/log
(cd "$work/rust" && cargo test --offline --jobs 2 -- --test-threads 2) >"$log" 2>&1
rc=$?
n=0
while IFS= read -r line; do
  case $line in
    "test "*" ... ok") n=$((n + 1)); t=${line#test }; echo "ok $n - ${t% ... ok}" ;;
    "test "*" ... ignored") n=$((n + 1)); t=${line#test }; echo "ok $n - ${t% ... ignored} # SKIP ignored" ;;
    "test "*" ... FAILED") n=$((n + 1)); t=${line#test }; echo "not ok $n - ${t% ... FAILED}" ;;
  esac
done <"$log"
if [ "$rc" -ne 0 ]; then
  n=$((n + 1))
  echo "not ok $n - cargo test exited $rc"
  sed 's/^/# /' "$log" | tail -n 80
fi
echo "1..$n"
