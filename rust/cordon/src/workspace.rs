// SPDX-License-Identifier: Apache-2.0
use crate::error::{check, cstr_lossy, opt_str, Result};
use crate::policy::{cpath, cstring, Policy};
use crate::process::{status_or_error, Argv, ExitStatus};
use cordon_sys as sys;
use std::ffi::{CStr, CString, OsStr};
use std::os::raw::c_char;
use std::path::{Path, PathBuf};

/// A copy-on-write workspace: a writable view of a source directory whose changes stay
/// apart until [`Workspace::integrate`].
pub struct Workspace {
    raw: *mut sys::cordon_workspace,
}

// SAFETY: a workspace handle may move between threads (calls take its lock)
unsafe impl Send for Workspace {}

impl Drop for Workspace {
    fn drop(&mut self) {
        // SAFETY: raw is live and freed once
        unsafe { sys::cordon_workspace_free(self.raw) }
    }
}

/// One change of a workspace against its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// 'A' added, 'M' modified, 'D' deleted (integration: 'C' conflict, 'U' unsaved)
    pub status: char,
    /// relative to the source
    pub path: PathBuf,
}

/// What an integration did.
#[derive(Debug, Clone, Default)]
pub struct Integrated {
    pub added: usize,
    pub modified: usize,
    pub deleted: usize,
    /// a git source: the commit made, and its branch
    pub commit: Option<String>,
    pub branch: Option<String>,
    pub conflicts: Vec<Change>,
    pub skipped: Vec<Change>,
}

fn root_c(root: Option<&Path>) -> Result<Option<CString>> {
    root.map(|r| cpath("root", r)).transpose()
}

fn ptr_or_null(c: &Option<CString>) -> *const c_char {
    c.as_ref().map_or(std::ptr::null(), |s| s.as_ptr())
}

fn changes_of(c: &sys::cordon_workspace_change_list) -> Vec<Change> {
    let mut v = Vec::new();
    for i in 0..c.n {
        // SAFETY: v holds n entries with NUL-terminated paths
        let ch = unsafe { &*c.v.add(i) };
        let path = unsafe { CStr::from_ptr(ch.path) };
        v.push(Change {
            status: ch.status as u8 as char,
            path: PathBuf::from(<OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(path.to_bytes())),
        });
    }
    v
}

impl Workspace {
    /// Create workspace NAME of SOURCE under ROOT (None: $XDG_STATE_HOME/cordon/workspaces)
    /// with the backend ("auto", "kernel", "fuse", "copy", "worktree", "none").
    pub fn create<P: AsRef<Path>>(root: Option<&Path>, name: &str, source: P, backend: &str) -> Result<Workspace> {
        let root = root_c(root)?;
        let name = cstring("name", name.as_bytes())?;
        let source = cpath("source", source.as_ref())?;
        let b = cstring("backend", backend.as_bytes())?;
        let mut be: sys::cordon_backend = sys::CORDON_BACKEND_AUTO;
        // SAFETY: b outlives the call
        check(|err| unsafe { sys::cordon_backend_from_string(b.as_ptr(), &mut be, err) })?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: the strings outlive the call; raw is set on success
        check(|err| unsafe {
            sys::cordon_workspace_create(ptr_or_null(&root), name.as_ptr(), source.as_ptr(), be, &mut raw, err)
        })?;
        Ok(Workspace { raw })
    }

    pub fn open(root: Option<&Path>, name: &str) -> Result<Workspace> {
        let root = root_c(root)?;
        let name = cstring("name", name.as_bytes())?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: as above
        check(|err| unsafe { sys::cordon_workspace_open(ptr_or_null(&root), name.as_ptr(), &mut raw, err) })?;
        Ok(Workspace { raw })
    }

    pub fn name(&self) -> String {
        // SAFETY: raw is live; the string lives as long as it
        opt_str(unsafe { sys::cordon_workspace_name(self.raw) }).unwrap_or_default()
    }
    pub fn source(&self) -> PathBuf {
        PathBuf::from(opt_str(unsafe { sys::cordon_workspace_source(self.raw) }).unwrap_or_default())
    }
    /// Where the view is on the host; None for the kernel backend (inside runs only).
    pub fn view(&self) -> Option<PathBuf> {
        opt_str(unsafe { sys::cordon_workspace_view(self.raw) }).map(PathBuf::from)
    }
    pub fn backend(&self) -> String {
        opt_str(unsafe { sys::cordon_backend_name(sys::cordon_workspace_backend(self.raw)) }).unwrap_or_default()
    }

    /// Run argv in the workspace under `policy` (the workspace is shown at the source's
    /// path), with this process's stdin, stdout and stderr.
    pub fn run<S: AsRef<OsStr>>(&mut self, policy: &Policy, argv: &[S]) -> Result<ExitStatus> {
        let args = Argv::new(argv)?;
        let mut res = sys::cordon_result::new();
        let mut err = sys::cordon_error::new();
        // SAFETY: all pointers live for the call
        let rc = unsafe { sys::cordon_workspace_run(self.raw, policy.raw(), args.as_ptr(), &mut res, &mut err) };
        status_or_error(rc, &mut res, &err)
    }

    /// The changes against the source as it is now, sorted by path.
    pub fn changes(&mut self) -> Result<Vec<Change>> {
        let mut c = sys::cordon_workspace_change_list { v: std::ptr::null_mut(), n: 0 };
        // SAFETY: c is filled on success and freed below
        check(|err| unsafe { sys::cordon_workspace_changes(self.raw, &mut c, err) })?;
        let v = changes_of(&c);
        unsafe { sys::cordon_workspace_change_list_free(&mut c) };
        Ok(v)
    }

    /// Write the changes into the source (one commit for a git source). Conflicts are an
    /// error whose `Integrated` is not returned; see `changes` first.
    pub fn integrate(&mut self, message: Option<&str>) -> Result<Integrated> {
        let msg = message.map(|m| cstring("message", m.as_bytes())).transpose()?;
        let mut res = sys::cordon_workspace_integration::new();
        let r = check(|err| unsafe { sys::cordon_workspace_integrate(self.raw, ptr_or_null(&msg), 0, &mut res, err) });
        let out = Integrated {
            added: res.added,
            modified: res.modified,
            deleted: res.deleted,
            commit: if res.committed { Some(cstr_lossy(&res.commit)) } else { None },
            branch: if res.committed { Some(cstr_lossy(&res.branch)) } else { None },
            conflicts: changes_of(&res.conflicts),
            skipped: changes_of(&res.skipped),
        };
        unsafe { sys::cordon_workspace_integration_free(&mut res) };
        match r {
            Ok(1) => Err(crate::Error::usage(
                "integrate",
                format!("the integration has conflicts, nothing was changed: {:?}", out.conflicts),
            )),
            Ok(_) => Ok(out),
            Err(e) => Err(e),
        }
    }

    /// Unmount and delete workspace NAME (a worktree's branch is kept).
    pub fn remove(root: Option<&Path>, name: &str) -> Result<()> {
        let root = root_c(root)?;
        let name = cstring("name", name.as_bytes())?;
        check(|err| unsafe { sys::cordon_workspace_remove(ptr_or_null(&root), name.as_ptr(), err) }).map(|_| ())
    }

    /// The names of the workspaces under ROOT, sorted.
    pub fn list(root: Option<&Path>) -> Result<Vec<String>> {
        let root = root_c(root)?;
        let mut names: *mut *mut c_char = std::ptr::null_mut();
        let mut n = 0usize;
        check(|err| unsafe { sys::cordon_workspace_list(ptr_or_null(&root), &mut names, &mut n, err) })?;
        let v = (0..n).map(|i| opt_str(unsafe { *names.add(i) }).unwrap_or_default()).collect();
        unsafe { sys::cordon_workspace_names_free(names, n) };
        Ok(v)
    }
}
