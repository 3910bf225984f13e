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
    field!(
        cordon_result,
        size,
        exit_code,
        status_code,
        signal,
        timed_out,
        started,
        limits,
        limits_hit,
        isolation,
        isolation_why,
        refused,
        n_refusals,
        refusals,
        wall_seconds,
        network_counted,
        network_allowed,
        network_refused,
        network_failed,
        n_network_refusals,
        network_refusals_more,
        network_refusals,
        pid,
        proc_kept
    );
    size!(cordon_cmd);
    field!(cordon_cmd, size, cwd, env, timeout, keep, tty, detach, has_timeout);
    size!(cordon_workspace_change);
    field!(cordon_workspace_change, status, path);
    size!(cordon_workspace_change_list);
    field!(cordon_workspace_change_list, v, n);
    size!(cordon_workspace_integration);
    field!(
        cordon_workspace_integration,
        size,
        added,
        modified,
        deleted,
        committed,
        commit,
        branch,
        recovered,
        conflicts,
        skipped
    );
    for (name, value) in [
        ("CORDON_VERSION_MAJOR", CORDON_VERSION_MAJOR),
        ("CORDON_VERSION_MINOR", CORDON_VERSION_MINOR),
        ("CORDON_VERSION_MICRO", CORDON_VERSION_MICRO),
    ] {
        v.push(format!("={} {}", name, value));
    }
    v
}

fn c_program(lines: &[String]) -> String {
    // CORDON_NO_COMPAT: the names of 0.1 are macros that would hide a stale declaration
    let mut s = String::from(
        "#define CORDON_NO_COMPAT\n#include <stdio.h>\n#include <stddef.h>\n#include <cordon.h>\nint main(void) {\n",
    );
    for l in lines {
        let name = l.split(' ').next().unwrap();
        let expr = match (name.strip_prefix('='), name.split_once('.')) {
            (Some(macro_name), _) => format!("(size_t){}", macro_name),
            (None, Some((t, f))) => format!("offsetof({}, {})", t, f),
            (None, None) => format!("sizeof({})", name),
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

#[test]
fn every_declared_function_is_exported() {
    // taking each address makes the linker resolve it against libcordon.so's exports (a
    // function renamed or removed in the header fails here, at link time)
    let all: &[*const ()] = &[
        cordon_version as *const (),
        cordon_stage_name as *const (),
        cordon_free as *const (),
        cordon_policy_new as *const (),
        cordon_policy_free as *const (),
        cordon_policy_set_protections as *const (),
        cordon_policy_add_tmpfs as *const (),
        cordon_base_from_string as *const (),
        cordon_network_from_string as *const (),
        cordon_isolation_from_string as *const (),
        cordon_policy_set_isolation as *const (),
        cordon_policy_set_base as *const (),
        cordon_policy_add_path as *const (),
        cordon_policy_set_workspace as *const (),
        cordon_policy_set_read_only as *const (),
        cordon_policy_set_network as *const (),
        cordon_policy_add_env as *const (),
        cordon_policy_add_keep_env as *const (),
        cordon_policy_set_clear_env as *const (),
        cordon_policy_set_cwd as *const (),
        cordon_policy_set_timeout as *const (),
        cordon_policy_set_proc as *const (),
        cordon_policy_set_nested as *const (),
        cordon_policy_set_toolchains as *const (),
        cordon_policy_set_warning_handler as *const (),
        cordon_policy_add_protected as *const (),
        cordon_policy_add_hidden as *const (),
        cordon_policy_set_limit_string as *const (),
        cordon_policy_add_deny_glob as *const (),
        cordon_policy_add_allowed_domain as *const (),
        cordon_policy_add_denied_domain as *const (),
        cordon_policy_add_allowed_socket as *const (),
        cordon_policy_add_forwarded_port_string as *const (),
        cordon_policy_add_published_port_string as *const (),
        cordon_policy_set_network_log as *const (),
        cordon_policy_load_settings as *const (),
        cordon_run as *const (),
        cordon_spawn as *const (),
        cordon_spawn_cmd as *const (),
        cordon_result_free as *const (),
        cordon_proc_stdin as *const (),
        cordon_proc_stdout as *const (),
        cordon_proc_stderr as *const (),
        cordon_proc_close_stdin as *const (),
        cordon_proc_exit_fd as *const (),
        cordon_proc_kill as *const (),
        cordon_proc_wait as *const (),
        cordon_proc_free as *const (),
        cordon_session_new as *const (),
        cordon_session_spawn_cmd as *const (),
        cordon_session_free as *const (),
        cordon_session_open as *const (),
        cordon_session_stop as *const (),
        cordon_session_list as *const (),
        cordon_check as *const (),
        cordon_backend_from_string as *const (),
        cordon_backend_name as *const (),
        cordon_workspace_create as *const (),
        cordon_workspace_open as *const (),
        cordon_workspace_free as *const (),
        cordon_workspace_name as *const (),
        cordon_workspace_source as *const (),
        cordon_workspace_backend as *const (),
        cordon_workspace_dir as *const (),
        cordon_workspace_view as *const (),
        cordon_workspace_run as *const (),
        cordon_workspace_changes as *const (),
        cordon_workspace_change_list_free as *const (),
        cordon_workspace_integrate as *const (),
        cordon_workspace_integration_free as *const (),
        cordon_workspace_remove as *const (),
        cordon_workspace_list as *const (),
        cordon_workspace_names_free as *const (),
    ];
    assert!(all.iter().all(|f| !f.is_null()));
}
