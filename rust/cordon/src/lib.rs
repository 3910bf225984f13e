// SPDX-License-Identifier: Apache-2.0
//! Run an agent's commands in a Linux sandbox: the safe interface to libcordon.
//!
//! ```no_run
//! use cordon::{Command, Policy, Session};
//! use std::time::Duration;
//!
//! let policy = Policy::builder().workspace("/repo").timeout(Duration::from_secs(120)).build()?;
//! let session = Session::new(&policy)?;              // built once
//! let out = session.output(&["make", "test"], &Command::new())?;   // each command: ~ms
//! println!("{} {}", out.status.code, String::from_utf8_lossy(&out.stdout));
//! # Ok::<(), cordon::Error>(())
//! ```
//!
//! Everything fails with [`Error`] (an `std::error::Error`: stage, option, errno,
//! message), except a command that ran: its status, 127 for "not found" and 126 for "not
//! executable" included, is an [`ExitStatus`]. `doc/rust.md` in the cordon repository is
//! the guide.

mod error;
mod policy;
mod process;
mod session;
mod workspace;

pub use error::{Error, Result, Stage};
pub use policy::{Explain, Limit, Network, Policy, PolicyBuilder};
pub use process::{Child, ChildStderr, ChildStdin, ChildStdout, ExitStatus, Output, Pty, Stdio};
pub use session::{list as list_sessions, stop as stop_session, Command, Session};
pub use workspace::{Change, Integrated, Workspace};

/// libcordon's version.
pub fn version() -> String {
    // SAFETY: a static string
    error::opt_str(unsafe { cordon_sys::cordon_version() }).unwrap_or_default()
}

/// What [`check`] found: whether the default sandbox works on this host, and the whole
/// report (`cordon check --json`: each check's `ok`, `required`, `detail`, `fix`).
#[derive(Debug, Clone)]
pub struct Check {
    pub default_sandbox: bool,
    pub json: String,
}

/// What this host supports and what the default sandbox needs (`cordon check`): probes
/// run in children, then `true` in the default sandbox. An error only when the check
/// itself failed; a host that cannot sandbox is `default_sandbox: false`.
pub fn check() -> Result<Check> {
    let mut json: *mut std::os::raw::c_char = std::ptr::null_mut();
    // SAFETY: json is set on success, freed below
    let rc = error::check(|err| unsafe { cordon_sys::cordon_check(&mut json, err) })?;
    let s = error::opt_str(json).unwrap_or_default();
    // SAFETY: allocated by libcordon for us
    unsafe { cordon_sys::cordon_free(json as *mut _) };
    Ok(Check { default_sandbox: rc == 1, json: s })
}
