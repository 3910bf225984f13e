// SPDX-License-Identifier: Apache-2.0
use crate::error::{check, opt_str, Result};
use crate::policy::{cpath, cstring, Policy};
use crate::process::{Argv, Child, Output, Stdio};
use cordon_sys as sys;
use std::ffi::{CString, OsStr};
use std::os::raw::c_char;
use std::path::PathBuf;
use std::time::Duration;

/// A sandbox built once that many commands start in, each in a few hundred microseconds:
/// the way to run an agent's commands. Dropping a session made by [`Session::new`] ends
/// it and everything in it; one from [`Session::open`] is only closed.
pub struct Session {
    raw: *mut sys::cordon_session,
}

// SAFETY: the handle may move between threads
unsafe impl Send for Session {}
// (not Sync: commands are started from one thread at a time; many may run at once)

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: raw is live and freed once
        unsafe { sys::cordon_session_free(self.raw) }
    }
}

/// What one command chooses for itself, in a session ([`Session::spawn`]) or under a
/// policy ([`Policy::spawn_with`](crate::Policy::spawn_with)), without a policy of its own.
#[derive(Debug, Clone, Default)]
pub struct Command {
    /// the working directory inside (None: the policy's, the session's)
    pub cwd: Option<PathBuf>,
    /// variables set over the policy's (session's) environment
    pub env: Vec<(String, String)>,
    /// None: the policy's (session's) timeout; Some(Duration::ZERO): none
    pub timeout: Option<Duration>,
    /// sessions only: what the command leaves running stays in the session
    pub keep: bool,
    pub stdio: Stdio,
}

/// A cordon_cmd and the strings it points to, alive together.
pub(crate) struct RawCommand {
    _cwd: Option<CString>,
    _env: Vec<CString>,
    _envp: Vec<*mut c_char>,
    cmd: sys::cordon_cmd,
}

impl RawCommand {
    pub(crate) fn as_ptr(&self) -> *const sys::cordon_cmd {
        &self.cmd
    }
}

impl Command {
    pub fn new() -> Command {
        Command::default()
    }
    pub fn cwd<P: Into<PathBuf>>(mut self, dir: P) -> Command {
        self.cwd = Some(dir.into());
        self
    }
    pub fn env<K: Into<String>, V: Into<String>>(mut self, name: K, value: V) -> Command {
        self.env.push((name.into(), value.into()));
        self
    }
    pub fn timeout(mut self, t: Duration) -> Command {
        self.timeout = Some(t);
        self
    }
    pub fn keep(mut self, keep: bool) -> Command {
        self.keep = keep;
        self
    }
    pub fn stdio(mut self, stdio: Stdio) -> Command {
        self.stdio = stdio;
        self
    }

    /// The same command with its stdout and stderr piped (or merged, when asked).
    pub(crate) fn for_output(&self) -> Command {
        let mut c = self.clone();
        if c.stdio.flags() & (sys::CORDON_SPAWN_MERGE_STDERR | sys::CORDON_SPAWN_PTY) == 0 {
            c.stdio = Stdio::piped();
        }
        c
    }

    pub(crate) fn to_raw(&self) -> Result<RawCommand> {
        let cwd = match &self.cwd {
            Some(d) => Some(cpath("chdir", d)?),
            None => None,
        };
        let env: Vec<CString> =
            self.env.iter().map(|(k, v)| cstring("env", format!("{}={}", k, v).as_bytes())).collect::<Result<_>>()?;
        let mut envp: Vec<*mut c_char> = env.iter().map(|c| c.as_ptr() as *mut c_char).collect();
        envp.push(std::ptr::null_mut());
        let mut cmd = sys::cordon_cmd::new();
        cmd.cwd = cwd.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
        if !self.env.is_empty() {
            cmd.env = envp.as_ptr();
        }
        if let Some(t) = self.timeout {
            cmd.has_timeout = true;
            cmd.timeout = t.as_secs_f64();
        }
        cmd.keep = self.keep;
        // the Vec's buffer does not move when the Vec itself is moved into the struct
        Ok(RawCommand { _cwd: cwd, _env: env, _envp: envp, cmd })
    }
}

impl Session {
    /// Build the sandbox for `policy`; returns once it can start commands.
    pub fn new(policy: &Policy) -> Result<Session> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: policy is live; raw is set on success
        check(|err| unsafe { sys::cordon_session_new(policy.raw(), &mut raw, err) })?;
        Ok(Session { raw })
    }

    /// A session published by `cordon session start NAME`.
    pub fn open(name: &str) -> Result<Session> {
        let c = cstring("name", name.as_bytes())?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: c outlives the call
        check(|err| unsafe { sys::cordon_session_open(c.as_ptr(), &mut raw, err) })?;
        Ok(Session { raw })
    }

    /// Start argv in the session.
    pub fn spawn<S: AsRef<OsStr>>(&self, argv: &[S], cmd: &Command) -> Result<Child<'_>> {
        let args = Argv::new(argv)?;
        let raw_cmd = cmd.to_raw()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: argv and every pointer of raw_cmd live until the call returns
        check(|err| unsafe {
            sys::cordon_session_spawn_cmd(self.raw, args.as_ptr(), cmd.stdio.flags(), raw_cmd.as_ptr(), &mut raw, err)
        })?;
        Child::from_raw(raw)
    }

    /// Run argv in the session with its stdout and stderr collected (piped, or merged
    /// when the command's stdio merges them).
    pub fn output<S: AsRef<OsStr>>(&self, argv: &[S], cmd: &Command) -> Result<Output> {
        self.spawn(argv, &cmd.for_output())?.wait_with_output()
    }
}

/// Stop the published session `name`; returns once everything in it is gone.
pub fn stop(name: &str) -> Result<()> {
    let c = cstring("name", name.as_bytes())?;
    // SAFETY: c outlives the call
    check(|err| unsafe { sys::cordon_session_stop(c.as_ptr(), err) }).map(|_| ())
}

/// This user's published sessions, as JSON (`cordon session list --json`).
pub fn list() -> Result<String> {
    let mut json: *mut c_char = std::ptr::null_mut();
    // SAFETY: json is set on success, freed below
    check(|err| unsafe { sys::cordon_session_list(&mut json, err) })?;
    let s = opt_str(json).unwrap_or_default();
    // SAFETY: allocated by libcordon for us
    unsafe { sys::cordon_free(json as *mut _) };
    Ok(s)
}
