// SPDX-License-Identifier: Apache-2.0
use cordon_sys as sys;
use std::ffi::CStr;
use std::fmt;
use std::os::raw::c_char;

/// Where a failure happened (the `stage` of `--status-json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    None,
    Usage,
    Settings,
    Resolve,
    Plan,
    Namespaces,
    Root,
    Confine,
    Exec,
    Supervise,
    Limits,
    Workspace,
    /// a stage this crate does not know yet (a newer libcordon)
    Other(u32),
}

impl Stage {
    pub(crate) fn from_raw(s: sys::cordon_stage) -> Stage {
        match s {
            sys::CORDON_STAGE_NONE => Stage::None,
            sys::CORDON_STAGE_USAGE => Stage::Usage,
            sys::CORDON_STAGE_SETTINGS => Stage::Settings,
            sys::CORDON_STAGE_RESOLVE => Stage::Resolve,
            sys::CORDON_STAGE_PLAN => Stage::Plan,
            sys::CORDON_STAGE_NAMESPACES => Stage::Namespaces,
            sys::CORDON_STAGE_ROOT => Stage::Root,
            sys::CORDON_STAGE_CONFINE => Stage::Confine,
            sys::CORDON_STAGE_EXEC => Stage::Exec,
            sys::CORDON_STAGE_SUPERVISE => Stage::Supervise,
            sys::CORDON_STAGE_LIMITS => Stage::Limits,
            sys::CORDON_STAGE_WORKSPACE => Stage::Workspace,
            n => Stage::Other(n),
        }
    }
}

/// A failure of libcordon: the stage, the setting it is about (by its camelCase option
/// name, "workspace", "timeout"...), the cause's errno, and a message that says what went
/// wrong and, where known, how to fix it.
#[derive(Debug, Clone)]
pub struct Error {
    pub(crate) stage: Stage,
    pub(crate) option: String,
    pub(crate) errno: i32,
    pub(crate) message: String,
}

pub(crate) fn cstr_lossy(buf: &[c_char]) -> String {
    let bytes: Vec<u8> = buf.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

pub(crate) fn opt_str(p: *const c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        // SAFETY: libcordon returns NUL-terminated strings that live as long as their owner
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }
}

impl Error {
    pub(crate) fn from_raw(e: &sys::cordon_error) -> Error {
        let mut message = cstr_lossy(&e.message);
        if message.is_empty() {
            message = "libcordon failed without saying why".into();
        }
        Error { stage: Stage::from_raw(e.stage), option: cstr_lossy(&e.option), errno: e.errnum, message }
    }

    /// An error of this crate's own making (bad input caught before libcordon is called).
    pub(crate) fn usage(option: &str, message: String) -> Error {
        Error { stage: Stage::Usage, option: option.into(), errno: 0, message }
    }

    pub(crate) fn os(what: &str, e: std::io::Error) -> Error {
        Error {
            stage: Stage::Supervise,
            option: String::new(),
            errno: e.raw_os_error().unwrap_or(0),
            message: format!("{}: {}", what, e),
        }
    }

    pub fn stage(&self) -> Stage {
        self.stage
    }
    /// The setting the error is about ("workspace", "chdir", "limitMemory"...), or "".
    pub fn option(&self) -> &str {
        &self.option
    }
    /// errno of the cause, or 0.
    pub fn errno(&self) -> i32 {
        self.errno
    }
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cordon: {}", self.message)?;
        if self.errno != 0 && !self.message.contains(&std::io::Error::from_raw_os_error(self.errno).to_string()) {
            write!(f, ": {}", std::io::Error::from_raw_os_error(self.errno))?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

impl From<Error> for std::io::Error {
    fn from(e: Error) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::Other, e)
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// Call a libcordon function that fills a `cordon_error` and returns < 0 on failure.
pub(crate) fn check<F: FnOnce(*mut sys::cordon_error) -> i32>(f: F) -> Result<i32> {
    let mut err = sys::cordon_error::new();
    let rc = f(&mut err);
    if rc < 0 {
        Err(Error::from_raw(&err))
    } else {
        Ok(rc)
    }
}
