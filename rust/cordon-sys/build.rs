// SPDX-License-Identifier: Apache-2.0
// Where libcordon is: $CORDON_LIB_DIR (a meson build directory, say), else what
// pkg-config says (PKG_CONFIG_PATH=BUILD/meson-uninstalled finds a build's own), else the
// linker's default path (an installed libcordon-dev). No C is compiled here.
use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=CORDON_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let mut dirs: Vec<String> = Vec::new();
    let mut rpath = false;
    if let Ok(dir) = env::var("CORDON_LIB_DIR") {
        if !dir.is_empty() {
            dirs.push(dir);
            rpath = true;
        }
    }
    if dirs.is_empty() {
        if let Ok(out) = Command::new("pkg-config").args(["--libs-only-L", "cordon"]).output() {
            if out.status.success() {
                for word in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                    if let Some(d) = word.strip_prefix("-L") {
                        dirs.push(d.to_string());
                    }
                }
            }
        }
    }
    for d in &dirs {
        println!("cargo:rustc-link-search=native={}", d);
        // a rebuilt library (a new symbol version node) relinks what uses it
        println!("cargo:rerun-if-changed={}/libcordon.so", d);
    }
    // A build tree is nowhere the loader looks: its directory as the run path of this
    // crate's tests, and (DEP_CORDON_RPATH) of the crates that use it
    if rpath {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dirs[0]);
        println!("cargo:rpath={}", dirs[0]);
    }
    println!("cargo:rustc-link-lib=dylib=cordon");
}
