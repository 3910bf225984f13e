// SPDX-License-Identifier: Apache-2.0
// The hand-written layouts against the header's: a C program built with the system's cc
// prints sizeof and offsetof of every field the crate mirrors; each must match Rust's.
// The header: $CORDON_INCLUDE_DIR, else the repository's include/ (the crate lives in it).
use cordon_sys::*;
use std::mem::{size_of, MaybeUninit};
use std::path::PathBuf;
use std::process::Command;

macro_rules! off {
    ($t:ty, $f:ident) => {{
        let u = MaybeUninit::<$t>::uninit();
        let base = u.as_ptr();
        // SAFETY: only the address of the field is taken, nothing is read
        let field = unsafe { std::ptr::addr_of!((*base).$f) };
        field as usize - base as usize
    }};
}

fn rust_layouts() -> Vec<String> {
    let mut v = Vec::new();
    macro_rules! size {
        ($t:ident) => {
            v.push(format!("{} {}", stringify!($t), size_of::<$t>()))
        };
    }
    macro_rules! field {
        ($t:ident, $($f:ident),*) => {
            $( v.push(format!("{}.{} {}", stringify!($t), stringify!($f), off!($t, $f))); )*
        };
    }
    size!(cordon_error);
    field!(cordon_error, size, stage, errnum, truncated, option, message);
    size!(cordon_result);
    field!(cordon_result, size, exit_code, status_code, signal, timed_out, started, limits, limits_hit,
        isolation, isolation_why, refused, n_refusals, refusals, wall_seconds, network_counted,
        network_allowed, network_refused, network_failed, n_network_refusals, network_refusals_more,
        network_refusals, pid);
    size!(cordon_session_cmd);
    field!(cordon_session_cmd, size, cwd, env, timeout, keep, tty, detach);
    size!(cordon_ws_change);
    field!(cordon_ws_change, status, path);
    size!(cordon_ws_changes);
    field!(cordon_ws_changes, v, n);
    size!(cordon_ws_integrated);
    field!(cordon_ws_integrated, added, modified, deleted, committed, commit, branch, recovered, conflicts, skipped);
    v
}

fn c_program(lines: &[String]) -> String {
    let mut s = String::from("#include <stdio.h>\n#include <stddef.h>\n#include <cordon.h>\nint main(void) {\n");
    for l in lines {
        let name = l.split(' ').next().unwrap();
        let expr = match name.split_once('.') {
            Some((t, f)) => format!("offsetof({}, {})", t, f),
            None => format!("sizeof({})", name),
        };
        s += &format!("    printf(\"{} %zu\\n\", {});\n", name, expr);
    }
    s + "    return 0;\n}\n"
}

#[test]
fn layouts_match_the_header() {
    let include = std::env::var("CORDON_INCLUDE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../include"));
    assert!(include.join("cordon.h").exists(), "no cordon.h in {}", include.display());
    let ours = rust_layouts();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let src = dir.join("layout.c");
    let exe = dir.join("layout");
    std::fs::write(&src, c_program(&ours)).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let st = Command::new(&cc).arg("-I").arg(&include).arg(&src).arg("-o").arg(&exe).status().unwrap();
    assert!(st.success(), "{} could not compile the layout program", cc);
    let out = Command::new(&exe).output().unwrap();
    let theirs: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(String::from).collect();
    assert_eq!(ours.len(), theirs.len());
    for (a, b) in ours.iter().zip(theirs.iter()) {
        assert_eq!(a, b, "the Rust layout (left) differs from cordon.h's (right)");
    }
}

#[test]
fn links_and_reports_a_version() {
    // SAFETY: cordon_version returns a static string
    let v = unsafe { std::ffi::CStr::from_ptr(cordon_version()) };
    assert!(!v.to_bytes().is_empty());
}
