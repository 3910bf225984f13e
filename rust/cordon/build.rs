// SPDX-License-Identifier: Apache-2.0
// The run path cordon-sys chose for a libcordon in a build tree ($CORDON_LIB_DIR), for
// this crate's tests and examples too.
fn main() {
    if let Ok(dir) = std::env::var("DEP_CORDON_RPATH") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
    }
}
