// SPDX-License-Identifier: Apache-2.0
use crate::error::{check, Error, Result};
use crate::process::{self, Child, ExitStatus, Output, Stdio};
use crate::session::Command;
use cordon_sys as sys;
use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

pub(crate) fn cstring(what: &str, s: &[u8]) -> Result<CString> {
    CString::new(s).map_err(|_| Error::usage(what, format!("{}: a NUL byte in {:?}", what, String::from_utf8_lossy(s))))
}

pub(crate) fn cpath(what: &str, p: &Path) -> Result<CString> {
    cstring(what, p.as_os_str().as_bytes())
}

/// What a sandbox shows and allows. Build one with [`Policy::builder`]; every setting is
/// checked as it is given (a missing workspace, a bad domain...), and `build` returns the
/// first error.
pub struct Policy {
    raw: *mut sys::cordon_policy,
}

// SAFETY: a policy is plain data owned by this handle; libcordon keeps no reference to
// the thread that made it ("independent policies may be used from different threads")
unsafe impl Send for Policy {}
// SAFETY: every call that takes `&Policy` passes a `const cordon_policy *`, which
// libcordon only reads
unsafe impl Sync for Policy {}

impl Drop for Policy {
    fn drop(&mut self) {
        // SAFETY: raw came from cordon_policy_new and is freed once
        unsafe { sys::cordon_policy_free(self.raw) }
    }
}

/// The network a sandbox gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network {
    /// its own namespace with loopback only (the default)
    None,
    /// the host's
    Host,
    /// cordon's filtering proxy (allowed domains only)
    Proxy,
}

/// A resource limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// processes and threads at once
    Pids,
    /// memory ("512M", "2G", bytes)
    Memory,
    /// CPU seconds
    Cpu,
}

/// Builds a [`Policy`]; see [`Policy::builder`].
pub struct PolicyBuilder {
    policy: Policy,
    error: Option<Error>,
}

impl PolicyBuilder {
    fn apply<F: FnOnce(*mut sys::cordon_policy, *mut sys::cordon_error) -> i32>(mut self, f: F) -> Self {
        if self.error.is_none() {
            let raw = self.policy.raw;
            if let Err(e) = check(|err| f(raw, err)) {
                self.error = Some(e);
            }
        }
        self
    }

    fn with_c<F: FnOnce(*mut sys::cordon_policy, *const std::os::raw::c_char, *mut sys::cordon_error) -> i32>(
        mut self,
        what: &str,
        s: &[u8],
        f: F,
    ) -> Self {
        match cstring(what, s) {
            Ok(c) => self.apply(|p, err| f(p, c.as_ptr(), err)),
            Err(e) => {
                self.error.get_or_insert(e);
                self
            }
        }
    }

    /// The writable workspace (default: the current directory). A workspace that is not
    /// a directory is refused here, not at the first run.
    pub fn workspace<P: AsRef<Path>>(mut self, dir: P) -> Self {
        let dir = dir.as_ref();
        if let Err(e) = std::fs::metadata(dir).and_then(|m| {
            if m.is_dir() {
                Ok(())
            } else {
                Err(std::io::Error::new(std::io::ErrorKind::Other, "not a directory"))
            }
        }) {
            let msg = format!("workspace '{}': {} (an existing directory, or no_workspace())", dir.display(), e);
            self.error.get_or_insert(Error { errno: e.raw_os_error().unwrap_or(0), ..Error::usage("workspace", msg) });
            return self;
        }
        self.with_c("workspace", dir.as_os_str().as_bytes(), |p, s, e| unsafe {
            sys::cordon_policy_set_workspace(p, s, e)
        })
    }
    /// No workspace: the current directory is not shown.
    pub fn no_workspace(self) -> Self {
        self.apply(|p, e| unsafe { sys::cordon_policy_set_workspace(p, std::ptr::null(), e) })
    }
    fn path(self, what: &str, path: &Path, access: sys::cordon_access) -> Self {
        let source = CString::new("rust").unwrap();
        self.with_c(what, path.as_os_str().as_bytes(), |p, s, e| unsafe {
            sys::cordon_policy_add_path(p, s, access, source.as_ptr(), e)
        })
    }
    /// PATH visible and writable.
    pub fn allow<P: AsRef<Path>>(self, path: P) -> Self {
        self.path("allow", path.as_ref(), sys::CORDON_ACCESS_WRITE)
    }
    /// PATH visible, read-only.
    pub fn allow_ro<P: AsRef<Path>>(self, path: P) -> Self {
        self.path("allowRo", path.as_ref(), sys::CORDON_ACCESS_READ)
    }
    /// PATH hidden.
    pub fn deny<P: AsRef<Path>>(self, path: P) -> Self {
        self.path("deny", path.as_ref(), sys::CORDON_ACCESS_NONE)
    }
    /// PATH hidden wherever the view shows it.
    pub fn hide<P: AsRef<Path>>(self, path: P) -> Self {
        self.with_c("hide", path.as_ref().as_os_str().as_bytes(), |p, s, e| unsafe {
            sys::cordon_policy_add_hidden(p, s, e)
        })
    }
    /// Every match of an absolute glob hidden.
    pub fn deny_glob(self, glob: &str) -> Self {
        let source = CString::new("rust").unwrap();
        self.with_c("denyGlob", glob.as_bytes(), |p, s, e| unsafe {
            sys::cordon_policy_add_deny_glob(p, s, source.as_ptr(), e)
        })
    }
    /// Also keep NAME read-only at the top of every writable place.
    pub fn protect(self, name: &str) -> Self {
        self.with_c("protect", name.as_bytes(), |p, s, e| unsafe { sys::cordon_policy_add_protected(p, s, e) })
    }
    /// Every allowed path and the workspace read-only.
    pub fn read_only(self, ro: bool) -> Self {
        self.apply(|p, e| unsafe { sys::cordon_policy_set_read_only(p, ro, e) })
    }
    /// Rules from a JSON settings file.
    pub fn settings<P: AsRef<Path>>(self, file: P) -> Self {
        self.with_c("settings", file.as_ref().as_os_str().as_bytes(), |p, s, e| unsafe {
            sys::cordon_policy_load_settings(p, s, e)
        })
    }
    /// "system" (default), "host" or "empty".
    pub fn base(self, base: &str) -> Self {
        self.with_c("base", base.as_bytes(), |p, s, e| unsafe {
            let mut b: sys::cordon_base = 0;
            if sys::cordon_base_from_string(s, &mut b, e) < 0 {
                return -1;
            }
            sys::cordon_policy_set_base(p, b, e)
        })
    }
    /// "namespaces", "landlock" or "auto".
    pub fn isolation(self, isolation: &str) -> Self {
        self.with_c("isolation", isolation.as_bytes(), |p, s, e| unsafe {
            let mut i: sys::cordon_isolation = 0;
            if sys::cordon_isolation_from_string(s, &mut i, e) < 0 {
                return -1;
            }
            sys::cordon_policy_set_isolation(p, i, e)
        })
    }
    pub fn network(self, net: Network) -> Self {
        let name: &[u8] = match net {
            Network::None => b"none",
            Network::Host => b"host",
            Network::Proxy => b"proxy",
        };
        self.with_c("network", name, |p, s, e| unsafe {
            let mut n: sys::cordon_network = 0;
            if sys::cordon_network_from_string(s, &mut n, e) < 0 {
                return -1;
            }
            sys::cordon_policy_set_network(p, n, e)
        })
    }
    /// Through cordon's filtering proxy (implies [`Network::Proxy`]).
    pub fn allow_domain(self, domain: &str) -> Self {
        self.with_c("allowDomain", domain.as_bytes(), |p, s, e| unsafe {
            sys::cordon_policy_add_allowed_domain(p, s, e)
        })
    }
    pub fn deny_domain(self, domain: &str) -> Self {
        self.with_c("denyDomain", domain.as_bytes(), |p, s, e| unsafe { sys::cordon_policy_add_denied_domain(p, s, e) })
    }
    /// A host Unix socket the command may connect to.
    pub fn allow_socket<P: AsRef<Path>>(self, path: P) -> Self {
        self.with_c("allowSocket", path.as_ref().as_os_str().as_bytes(), |p, s, e| unsafe {
            sys::cordon_policy_add_allowed_socket(p, s, e)
        })
    }
    /// "5432": the host's 127.0.0.1:5432 reachable inside.
    pub fn forward_port(self, spec: &str) -> Self {
        self.with_c("forwardPort", spec.as_bytes(), |p, s, e| unsafe {
            sys::cordon_policy_add_forwarded_port_string(p, s, e)
        })
    }
    /// "3000" or "127.0.0.1:8000:3000": a port of the command's reachable from the host.
    pub fn publish_port(self, spec: &str) -> Self {
        self.with_c("publishPort", spec.as_bytes(), |p, s, e| unsafe {
            sys::cordon_policy_add_published_port_string(p, s, e)
        })
    }
    pub fn network_log<P: AsRef<Path>>(self, file: P) -> Self {
        self.with_c("networkLog", file.as_ref().as_os_str().as_bytes(), |p, s, e| unsafe {
            sys::cordon_policy_set_network_log(p, s, e)
        })
    }
    /// A variable in the command's environment.
    pub fn env<K: AsRef<OsStr>, V: AsRef<OsStr>>(self, name: K, value: V) -> Self {
        let mut kv = name.as_ref().as_bytes().to_vec();
        kv.push(b'=');
        kv.extend_from_slice(value.as_ref().as_bytes());
        self.with_c("env", &kv, |p, s, e| unsafe { sys::cordon_policy_add_env(p, s, e) })
    }
    /// Pass NAME through from this process's environment.
    pub fn keep_env(self, name: &str) -> Self {
        self.with_c("keepEnv", name.as_bytes(), |p, s, e| unsafe { sys::cordon_policy_add_keep_env(p, s, e) })
    }
    pub fn clear_env(self, clear: bool) -> Self {
        self.apply(|p, e| unsafe { sys::cordon_policy_set_clear_env(p, clear, e) })
    }
    /// The working directory inside (default: the current directory).
    pub fn cwd<P: AsRef<Path>>(self, dir: P) -> Self {
        self.with_c("chdir", dir.as_ref().as_os_str().as_bytes(), |p, s, e| unsafe {
            sys::cordon_policy_set_cwd(p, s, e)
        })
    }
    /// Kill the whole sandbox after this long (exit status 124); zero: no timeout.
    pub fn timeout(self, t: Duration) -> Self {
        self.apply(|p, e| unsafe { sys::cordon_policy_set_timeout(p, t.as_secs_f64(), e) })
    }
    /// false: no /proc.
    pub fn proc(self, mount_proc: bool) -> Self {
        self.apply(|p, e| unsafe { sys::cordon_policy_set_proc(p, mount_proc, e) })
    }
    /// false (`--no-nested`): no sandbox inside the sandbox. Default: true.
    pub fn nested(self, nested: bool) -> Self {
        self.apply(|p, e| unsafe { sys::cordon_policy_set_nested(p, nested, e) })
    }
    /// true (`--toolchains`): show the usual per-user tool directories of the home
    /// (~/.cargo, ~/.pyenv, ~/.nvm, ...) read-only, those that exist.
    pub fn toolchains(self, toolchains: bool) -> Self {
        self.apply(|p, e| unsafe { sys::cordon_policy_set_toolchains(p, toolchains, e) })
    }
    /// A limit, in cordon's syntax ("100", "512M", "30").
    pub fn limit(self, which: Limit, value: &str) -> Self {
        let w: sys::cordon_limit = match which {
            Limit::Pids => 0,
            Limit::Memory => 1,
            Limit::Cpu => 2,
        };
        self.with_c("limit", value.as_bytes(), |p, s, e| unsafe { sys::cordon_policy_set_limit_string(p, w, s, e) })
    }

    /// The policy, or the first setting that was refused.
    pub fn build(self) -> Result<Policy> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.policy),
        }
    }
}

/// How [`Policy::explain`] says it: text (the default) or JSON (`cordon explain --json`),
/// and with every call the seccomp filter refuses listed (`--verbose`) or counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Explain {
    pub json: bool,
    pub verbose: bool,
}

impl Policy {
    pub fn builder() -> PolicyBuilder {
        // SAFETY: plain constructor; NULL only when out of memory
        let raw = unsafe { sys::cordon_policy_new() };
        assert!(!raw.is_null(), "cordon_policy_new: out of memory");
        PolicyBuilder { policy: Policy { raw }, error: None }
    }

    pub(crate) fn raw(&self) -> *const sys::cordon_policy {
        self.raw
    }

    /// Run argv to completion with this process's stdin, stdout and stderr.
    pub fn run<S: AsRef<OsStr>>(&self, argv: &[S]) -> Result<ExitStatus> {
        let args = process::Argv::new(argv)?;
        let mut res = sys::cordon_result::new();
        let mut err = sys::cordon_error::new();
        // SAFETY: argv is NULL-terminated and outlives the call; res and err are ours
        let rc = unsafe { sys::cordon_run(self.raw, args.as_ptr(), &mut res, &mut err) };
        process::status_or_error(rc, &mut res, &err)
    }

    /// Start argv and return at once, with pipes as asked (as std::process::Command::spawn).
    pub fn spawn<S: AsRef<OsStr>>(&self, argv: &[S], stdio: Stdio) -> Result<Child<'static>> {
        self.spawn_with(argv, &Command::new().stdio(stdio))
    }

    /// The same with a command's own working directory, environment, timeout and stdio,
    /// without a policy of its own (`keep` is a session's, refused here).
    pub fn spawn_with<S: AsRef<OsStr>>(&self, argv: &[S], cmd: &Command) -> Result<Child<'static>> {
        let args = process::Argv::new(argv)?;
        let raw_cmd = cmd.to_raw()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: argv and every pointer of raw_cmd live until the call returns
        check(|err| unsafe {
            sys::cordon_spawn_cmd(self.raw, args.as_ptr(), cmd.stdio.flags(), raw_cmd.as_ptr(), &mut raw, err)
        })?;
        Child::from_raw(raw)
    }

    /// What `cordon explain` prints for argv under this policy (argv may be empty): the
    /// resolved rules and the ordered mount plan, as text or as one JSON object
    /// ([`Explain`]). Runs nothing and changes nothing.
    pub fn explain<S: AsRef<OsStr>>(&self, argv: &[S], how: Explain) -> Result<String> {
        let args = if argv.is_empty() { None } else { Some(process::Argv::new(argv)?) };
        let flags = if how.json { sys::CORDON_EXPLAIN_JSON } else { 0 }
            | if how.verbose { sys::CORDON_EXPLAIN_VERBOSE } else { 0 };
        let mut text: *mut std::os::raw::c_char = std::ptr::null_mut();
        // SAFETY: argv (or NULL) outlives the call; text is set on success, freed below
        check(|err| unsafe {
            sys::cordon_explain(self.raw, args.as_ref().map_or(std::ptr::null(), |a| a.as_ptr()), flags, &mut text, err)
        })?;
        let s = crate::error::opt_str(text).unwrap_or_default();
        // SAFETY: allocated by libcordon for us
        unsafe { sys::cordon_free(text as *mut _) };
        Ok(s)
    }

    /// Run argv with its stdout and stderr collected (stdin: /dev/null).
    pub fn output<S: AsRef<OsStr>>(&self, argv: &[S]) -> Result<Output> {
        self.spawn(argv, Stdio::piped())?.wait_with_output()
    }

    /// The same with a command's own settings (its stdio: pipes, unless it merges stderr).
    pub fn output_with<S: AsRef<OsStr>>(&self, argv: &[S], cmd: &Command) -> Result<Output> {
        self.spawn_with(argv, &cmd.for_output())?.wait_with_output()
    }
}
