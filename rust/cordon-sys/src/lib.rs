// SPDX-License-Identifier: Apache-2.0
//! Raw declarations of libcordon 0.2, written by hand from `include/cordon.h` (no bindgen).
//! The structs mirror the header's layouts field for field; `tests/layout.rs` compiles a
//! C program against the header and compares every size and offset with these. Use the
//! `cordon` crate for a safe interface.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_double, c_int, c_uint, c_ulong, c_ulonglong, c_void};

/// The header these declarations follow (`CORDON_VERSION_*`).
pub const CORDON_VERSION_MAJOR: u32 = 0;
pub const CORDON_VERSION_MINOR: u32 = 2;
pub const CORDON_VERSION_MICRO: u32 = 0;

pub const CORDON_EXIT_TIMEOUT: c_int = 124;
pub const CORDON_EXIT_SETUP: c_int = 125;
pub const CORDON_EXIT_NOEXEC: c_int = 126;
pub const CORDON_EXIT_NOTFOUND: c_int = 127;

pub type cordon_stage = c_uint;
pub const CORDON_STAGE_NONE: cordon_stage = 0;
pub const CORDON_STAGE_USAGE: cordon_stage = 1;
pub const CORDON_STAGE_SETTINGS: cordon_stage = 2;
pub const CORDON_STAGE_RESOLVE: cordon_stage = 3;
pub const CORDON_STAGE_PLAN: cordon_stage = 4;
pub const CORDON_STAGE_NAMESPACES: cordon_stage = 5;
pub const CORDON_STAGE_ROOT: cordon_stage = 6;
pub const CORDON_STAGE_CONFINE: cordon_stage = 7;
pub const CORDON_STAGE_EXEC: cordon_stage = 8;
pub const CORDON_STAGE_SUPERVISE: cordon_stage = 9;
pub const CORDON_STAGE_LIMITS: cordon_stage = 10;
pub const CORDON_STAGE_WORKSPACE: cordon_stage = 11;

#[repr(C)]
#[derive(Copy, Clone)]
pub struct cordon_error {
    pub size: c_uint,
    pub stage: cordon_stage,
    pub errnum: c_int,
    pub truncated: bool,
    pub option: [c_char; 32],
    pub message: [c_char; 1024],
}

impl cordon_error {
    /// `CORDON_ERROR_INIT`
    pub fn new() -> cordon_error {
        cordon_error {
            size: std::mem::size_of::<cordon_error>() as c_uint,
            stage: CORDON_STAGE_NONE,
            errnum: 0,
            truncated: false,
            option: [0; 32],
            message: [0; 1024],
        }
    }
}

impl Default for cordon_error {
    fn default() -> Self {
        cordon_error::new()
    }
}

pub type cordon_access = c_uint;
pub const CORDON_ACCESS_NONE: cordon_access = 0;
pub const CORDON_ACCESS_READ: cordon_access = 1;
pub const CORDON_ACCESS_WRITE: cordon_access = 2;

pub type cordon_base = c_uint;
pub type cordon_network = c_uint;
pub type cordon_isolation = c_uint;
pub type cordon_limit = c_uint;
pub type cordon_backend = c_uint;
pub const CORDON_BACKEND_AUTO: cordon_backend = 0;

#[repr(C)]
pub struct cordon_policy {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct cordon_proc {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct cordon_session {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct cordon_workspace {
    _opaque: [u8; 0],
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct cordon_result {
    pub size: c_uint,
    pub exit_code: c_int,
    pub status_code: c_int,
    pub signal: c_int,
    pub timed_out: bool,
    pub started: bool,
    pub limits: *const c_char,
    pub limits_hit: c_uint,
    pub isolation: cordon_isolation,
    pub isolation_why: *const c_char,
    pub refused: c_ulong,
    pub n_refusals: c_uint,
    pub refusals: *mut c_char,
    pub wall_seconds: c_double,
    pub network_counted: bool,
    pub network_allowed: c_uint,
    pub network_refused: c_uint,
    pub network_failed: c_uint,
    pub n_network_refusals: c_uint,
    pub network_refusals_more: c_uint,
    pub network_refusals: *mut c_char,
    pub pid: c_int,
    /// In a container that masks parts of /proc: a static sentence saying what the sandbox has
    /// instead of a /proc of its own; NULL when it had its own.
    pub proc_kept: *const c_char,
}

impl Default for cordon_result {
    fn default() -> Self {
        cordon_result::new()
    }
}

impl cordon_result {
    /// `CORDON_RESULT_INIT`
    pub fn new() -> cordon_result {
        // SAFETY: every field is an integer, a bool or a raw pointer, for all of which
        // zero is a valid value
        let mut r: cordon_result = unsafe { std::mem::zeroed() };
        r.size = std::mem::size_of::<cordon_result>() as c_uint;
        r
    }
}

pub const CORDON_SPAWN_STDIN_PIPE: c_uint = 0x1;
pub const CORDON_SPAWN_STDOUT_PIPE: c_uint = 0x2;
pub const CORDON_SPAWN_STDERR_PIPE: c_uint = 0x4;
pub const CORDON_SPAWN_MERGE_STDERR: c_uint = 0x8;
pub const CORDON_SPAWN_STDIN_INHERIT: c_uint = 0x10;
pub const CORDON_SPAWN_PTY: c_uint = 0x20;
pub const CORDON_EXPLAIN_VERBOSE: c_uint = 0x1;
pub const CORDON_EXPLAIN_JSON: c_uint = 0x2;

/// `cordon_cmd`: what one command chooses for itself (cordon_spawn_cmd,
/// cordon_session_spawn_cmd). Every field zero: as the policy or the session says.
#[repr(C)]
#[derive(Copy, Clone)]
pub struct cordon_cmd {
    pub size: c_uint,
    pub cwd: *const c_char,
    pub env: *const *mut c_char,
    /// with has_timeout: seconds, 0 for none
    pub timeout: c_double,
    pub keep: bool,
    pub tty: bool,
    pub detach: bool,
    pub has_timeout: bool,
}

impl cordon_cmd {
    /// `CORDON_CMD_INIT`
    pub fn new() -> cordon_cmd {
        cordon_cmd {
            size: std::mem::size_of::<cordon_cmd>() as c_uint,
            cwd: std::ptr::null(),
            env: std::ptr::null(),
            timeout: 0.0,
            keep: false,
            tty: false,
            detach: false,
            has_timeout: false,
        }
    }
}

impl Default for cordon_cmd {
    fn default() -> Self {
        cordon_cmd::new()
    }
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct cordon_workspace_change {
    pub status: c_char,
    pub path: *mut c_char,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct cordon_workspace_change_list {
    pub v: *mut cordon_workspace_change,
    pub n: usize,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub struct cordon_workspace_integration {
    pub size: c_uint,
    pub added: usize,
    pub modified: usize,
    pub deleted: usize,
    pub committed: bool,
    pub commit: [c_char; 65],
    pub branch: [c_char; 256],
    pub recovered: bool,
    pub conflicts: cordon_workspace_change_list,
    pub skipped: cordon_workspace_change_list,
}

impl Default for cordon_workspace_integration {
    fn default() -> Self {
        cordon_workspace_integration::new()
    }
}

impl cordon_workspace_integration {
    /// `CORDON_WORKSPACE_INTEGRATION_INIT`
    pub fn new() -> cordon_workspace_integration {
        // SAFETY: integers, bools, arrays of them and null pointers: all-zero is valid
        let mut r: cordon_workspace_integration = unsafe { std::mem::zeroed() };
        r.size = std::mem::size_of::<cordon_workspace_integration>() as c_uint;
        r
    }
}

pub const CORDON_WORKSPACE_INTEGRATE_FORCE: c_uint = 0x1;

pub type cordon_warning_fn = Option<unsafe extern "C" fn(message: *const c_char, ctx: *mut c_void)>;

extern "C" {
    pub fn cordon_version() -> *const c_char;
    pub fn cordon_stage_name(stage: cordon_stage) -> *const c_char;
    pub fn cordon_free(p: *mut c_void);

    pub fn cordon_policy_new() -> *mut cordon_policy;
    pub fn cordon_policy_free(p: *mut cordon_policy);
    pub fn cordon_policy_set_protections(p: *mut cordon_policy, on: bool, err: *mut cordon_error) -> c_int;
    pub fn cordon_policy_add_tmpfs(
        p: *mut cordon_policy,
        path: *const c_char,
        mode: c_uint,
        size: c_ulonglong,
        err: *mut cordon_error,
    ) -> c_int;
    pub fn cordon_base_from_string(s: *const c_char, out: *mut cordon_base, err: *mut cordon_error) -> c_int;
    pub fn cordon_network_from_string(s: *const c_char, out: *mut cordon_network, err: *mut cordon_error) -> c_int;
    pub fn cordon_isolation_from_string(s: *const c_char, out: *mut cordon_isolation, err: *mut cordon_error) -> c_int;
    pub fn cordon_policy_set_isolation(p: *mut cordon_policy, i: cordon_isolation, err: *mut cordon_error) -> c_int;
    pub fn cordon_policy_set_base(p: *mut cordon_policy, base: cordon_base, err: *mut cordon_error) -> c_int;
    pub fn cordon_policy_add_path(
        p: *mut cordon_policy,
        path: *const c_char,
        access: cordon_access,
        source: *const c_char,
        err: *mut cordon_error,
    ) -> c_int;
    pub fn cordon_policy_set_workspace(p: *mut cordon_policy, dir: *const c_char, err: *mut cordon_error) -> c_int;
    pub fn cordon_policy_set_read_only(p: *mut cordon_policy, ro: bool, err: *mut cordon_error) -> c_int;
    pub fn cordon_policy_set_network(p: *mut cordon_policy, net: cordon_network, err: *mut cordon_error) -> c_int;
    pub fn cordon_policy_add_env(p: *mut cordon_policy, name_eq_value: *const c_char, err: *mut cordon_error) -> c_int;
    pub fn cordon_policy_add_keep_env(p: *mut cordon_policy, name: *const c_char, err: *mut cordon_error) -> c_int;
    pub fn cordon_policy_set_clear_env(p: *mut cordon_policy, clear: bool, err: *mut cordon_error) -> c_int;
    pub fn cordon_policy_set_cwd(p: *mut cordon_policy, dir: *const c_char, err: *mut cordon_error) -> c_int;
    pub fn cordon_policy_set_timeout(p: *mut cordon_policy, seconds: c_double, err: *mut cordon_error) -> c_int;
    pub fn cordon_policy_set_proc(p: *mut cordon_policy, mount_proc: bool, err: *mut cordon_error) -> c_int;
    pub fn cordon_policy_set_nested(p: *mut cordon_policy, nested: bool, err: *mut cordon_error) -> c_int;
    pub fn cordon_policy_set_toolchains(p: *mut cordon_policy, toolchains: bool, err: *mut cordon_error) -> c_int;
    pub fn cordon_policy_set_warning_handler(
        p: *mut cordon_policy,
        f: cordon_warning_fn,
        ctx: *mut c_void,
        err: *mut cordon_error,
    ) -> c_int;
    pub fn cordon_policy_add_protected(p: *mut cordon_policy, name: *const c_char, err: *mut cordon_error) -> c_int;
    pub fn cordon_policy_add_hidden(p: *mut cordon_policy, path: *const c_char, err: *mut cordon_error) -> c_int;
    pub fn cordon_policy_set_limit_string(
        p: *mut cordon_policy,
        which: cordon_limit,
        s: *const c_char,
        err: *mut cordon_error,
    ) -> c_int;
    pub fn cordon_policy_add_deny_glob(
        p: *mut cordon_policy,
        glob: *const c_char,
        source: *const c_char,
        err: *mut cordon_error,
    ) -> c_int;
    pub fn cordon_policy_add_allowed_domain(
        p: *mut cordon_policy,
        domain: *const c_char,
        err: *mut cordon_error,
    ) -> c_int;
    pub fn cordon_policy_add_denied_domain(
        p: *mut cordon_policy,
        domain: *const c_char,
        err: *mut cordon_error,
    ) -> c_int;
    pub fn cordon_policy_add_allowed_socket(
        p: *mut cordon_policy,
        path: *const c_char,
        err: *mut cordon_error,
    ) -> c_int;
    pub fn cordon_policy_add_forwarded_port_string(
        p: *mut cordon_policy,
        spec: *const c_char,
        err: *mut cordon_error,
    ) -> c_int;
    pub fn cordon_policy_add_published_port_string(
        p: *mut cordon_policy,
        spec: *const c_char,
        err: *mut cordon_error,
    ) -> c_int;
    pub fn cordon_policy_set_network_log(p: *mut cordon_policy, file: *const c_char, err: *mut cordon_error) -> c_int;
    pub fn cordon_policy_load_settings(p: *mut cordon_policy, file: *const c_char, err: *mut cordon_error) -> c_int;

    pub fn cordon_run(
        p: *const cordon_policy,
        argv: *const *mut c_char,
        result: *mut cordon_result,
        err: *mut cordon_error,
    ) -> c_int;
    pub fn cordon_spawn(
        p: *const cordon_policy,
        argv: *const *mut c_char,
        flags: c_uint,
        out: *mut *mut cordon_proc,
        err: *mut cordon_error,
    ) -> c_int;
    pub fn cordon_spawn_cmd(
        p: *const cordon_policy,
        argv: *const *mut c_char,
        flags: c_uint,
        cmd: *const cordon_cmd,
        out: *mut *mut cordon_proc,
        err: *mut cordon_error,
    ) -> c_int;
    pub fn cordon_result_free(res: *mut cordon_result);
    pub fn cordon_proc_stdin(c: *const cordon_proc) -> c_int;
    pub fn cordon_proc_stdout(c: *const cordon_proc) -> c_int;
    pub fn cordon_proc_stderr(c: *const cordon_proc) -> c_int;
    pub fn cordon_proc_close_stdin(c: *mut cordon_proc, err: *mut cordon_error) -> c_int;
    pub fn cordon_proc_exit_fd(c: *const cordon_proc) -> c_int;
    pub fn cordon_proc_pty(c: *const cordon_proc) -> c_int;
    pub fn cordon_proc_kill(c: *mut cordon_proc, sig: c_int, err: *mut cordon_error) -> c_int;
    pub fn cordon_proc_wait(
        c: *mut cordon_proc,
        timeout_ms: c_int,
        res: *mut cordon_result,
        err: *mut cordon_error,
    ) -> c_int;
    pub fn cordon_proc_free(c: *mut cordon_proc);

    pub fn cordon_session_new(p: *const cordon_policy, out: *mut *mut cordon_session, err: *mut cordon_error) -> c_int;
    pub fn cordon_session_spawn_cmd(
        s: *mut cordon_session,
        argv: *const *mut c_char,
        flags: c_uint,
        cmd: *const cordon_cmd,
        out: *mut *mut cordon_proc,
        err: *mut cordon_error,
    ) -> c_int;
    pub fn cordon_session_free(s: *mut cordon_session);
    pub fn cordon_session_open(name: *const c_char, out: *mut *mut cordon_session, err: *mut cordon_error) -> c_int;
    pub fn cordon_session_stop(name: *const c_char, err: *mut cordon_error) -> c_int;
    pub fn cordon_session_list(json: *mut *mut c_char, err: *mut cordon_error) -> c_int;
    pub fn cordon_check(json: *mut *mut c_char, err: *mut cordon_error) -> c_int;
    pub fn cordon_explain(
        p: *const cordon_policy,
        argv: *const *mut c_char,
        flags: c_uint,
        text: *mut *mut c_char,
        err: *mut cordon_error,
    ) -> c_int;

    pub fn cordon_backend_from_string(s: *const c_char, out: *mut cordon_backend, err: *mut cordon_error) -> c_int;
    pub fn cordon_backend_name(b: cordon_backend) -> *const c_char;
    pub fn cordon_workspace_create(
        root: *const c_char,
        name: *const c_char,
        source: *const c_char,
        backend: cordon_backend,
        out: *mut *mut cordon_workspace,
        err: *mut cordon_error,
    ) -> c_int;
    pub fn cordon_workspace_open(
        root: *const c_char,
        name: *const c_char,
        out: *mut *mut cordon_workspace,
        err: *mut cordon_error,
    ) -> c_int;
    pub fn cordon_workspace_free(ws: *mut cordon_workspace);
    pub fn cordon_workspace_name(ws: *const cordon_workspace) -> *const c_char;
    pub fn cordon_workspace_source(ws: *const cordon_workspace) -> *const c_char;
    pub fn cordon_workspace_backend(ws: *const cordon_workspace) -> cordon_backend;
    pub fn cordon_workspace_dir(ws: *const cordon_workspace) -> *const c_char;
    pub fn cordon_workspace_view(ws: *const cordon_workspace) -> *const c_char;
    pub fn cordon_workspace_run(
        ws: *mut cordon_workspace,
        p: *const cordon_policy,
        argv: *const *mut c_char,
        result: *mut cordon_result,
        err: *mut cordon_error,
    ) -> c_int;
    pub fn cordon_workspace_changes(
        ws: *mut cordon_workspace,
        out: *mut cordon_workspace_change_list,
        err: *mut cordon_error,
    ) -> c_int;
    pub fn cordon_workspace_change_list_free(c: *mut cordon_workspace_change_list);
    pub fn cordon_workspace_integrate(
        ws: *mut cordon_workspace,
        message: *const c_char,
        flags: c_uint,
        res: *mut cordon_workspace_integration,
        err: *mut cordon_error,
    ) -> c_int;
    pub fn cordon_workspace_integration_free(res: *mut cordon_workspace_integration);
    pub fn cordon_workspace_remove(root: *const c_char, name: *const c_char, err: *mut cordon_error) -> c_int;
    pub fn cordon_workspace_list(
        root: *const c_char,
        names: *mut *mut *mut c_char,
        n: *mut usize,
        err: *mut cordon_error,
    ) -> c_int;
    pub fn cordon_workspace_names_free(names: *mut *mut c_char, n: usize);
}
