// SPDX-License-Identifier: Apache-2.0
use crate::error::{check, opt_str, Error, Result};
use crate::policy::cstring;
use cordon_sys as sys;
use std::ffi::{CStr, CString, OsStr};
use std::fs::File;
use std::io::{self, Read, Write};
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::os::raw::c_char;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::{AsRawFd, FromRawFd, RawFd};
use std::time::Duration;

/// A NULL-terminated argument vector that lives as long as the call.
pub(crate) struct Argv {
    _owned: Vec<CString>,
    ptrs: Vec<*mut c_char>,
}

impl Argv {
    pub(crate) fn new<S: AsRef<OsStr>>(argv: &[S]) -> Result<Argv> {
        if argv.is_empty() {
            return Err(Error::usage("argv", "the command is empty: give at least its name".into()));
        }
        let owned = argv.iter().map(|a| cstring("argv", a.as_ref().as_bytes())).collect::<Result<Vec<_>>>()?;
        let mut ptrs: Vec<*mut c_char> = owned.iter().map(|c| c.as_ptr() as *mut c_char).collect();
        ptrs.push(std::ptr::null_mut());
        Ok(Argv { _owned: owned, ptrs })
    }
    pub(crate) fn as_ptr(&self) -> *const *mut c_char {
        self.ptrs.as_ptr()
    }
}

/// Which of the command's standard streams are pipes to this process. The default
/// ([`Stdio::inherit`]): stdin /dev/null, stdout and stderr this process's own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stdio {
    flags: u32,
}

impl Stdio {
    /// stdin /dev/null, stdout and stderr inherited.
    pub fn inherit() -> Stdio {
        Stdio { flags: 0 }
    }
    /// stdout and stderr piped (stdin /dev/null).
    pub fn piped() -> Stdio {
        Stdio { flags: sys::CORDON_SPAWN_STDOUT_PIPE | sys::CORDON_SPAWN_STDERR_PIPE }
    }
    pub fn stdin_piped(mut self) -> Stdio {
        self.flags = (self.flags & !sys::CORDON_SPAWN_STDIN_INHERIT) | sys::CORDON_SPAWN_STDIN_PIPE;
        self
    }
    /// stdin is this process's own.
    pub fn stdin_inherit(mut self) -> Stdio {
        self.flags = (self.flags & !sys::CORDON_SPAWN_STDIN_PIPE) | sys::CORDON_SPAWN_STDIN_INHERIT;
        self
    }
    pub fn stdout_piped(mut self) -> Stdio {
        self.flags |= sys::CORDON_SPAWN_STDOUT_PIPE;
        self
    }
    pub fn stderr_piped(mut self) -> Stdio {
        self.flags |= sys::CORDON_SPAWN_STDERR_PIPE;
        self
    }
    /// A terminal of the sandbox's own (`cordon run --tty`): the command's stdin, stdout
    /// and stderr are a pseudo-terminal whose master is [`Child::pty`] (job control, ^C
    /// and ^Z work inside; the caller's own terminal never reaches the sandbox). Add
    /// [`Stdio::stderr_piped`] to keep stderr apart; the other pipes cannot go with it.
    pub fn pty() -> Stdio {
        Stdio { flags: sys::CORDON_SPAWN_PTY }
    }
    /// stderr into the stdout pipe, in the order the command wrote them.
    pub fn merge_stderr(mut self) -> Stdio {
        self.flags = (self.flags & !sys::CORDON_SPAWN_STDERR_PIPE)
            | sys::CORDON_SPAWN_STDOUT_PIPE
            | sys::CORDON_SPAWN_MERGE_STDERR;
        self
    }
    pub(crate) fn flags(&self) -> u32 {
        self.flags
    }
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq)]
pub struct ExitStatus {
    /// what `cordon` would exit with: the command's code, 128+N for signal N, 124 timed
    /// out, 126 not executable, 127 not found
    pub code: i32,
    /// the command's own exit code; None when it did not exit
    pub status: Option<i32>,
    /// the signal that killed it
    pub signal: Option<i32>,
    pub timed_out: bool,
    /// the command was executed (false for 126, 127)
    pub started: bool,
    /// from the start of the sandbox to the end of its last process
    pub wall: Duration,
    /// how many of its calls the creation control refused, and the first of them
    pub refused: u64,
    pub refusals: Vec<String>,
    /// a detached session command: its pid in the session
    pub pid: Option<i32>,
    /// how the limits were applied ("cgroup2", "rlimit"), when any was set
    pub limits: Option<String>,
}

impl ExitStatus {
    pub fn success(&self) -> bool {
        self.code == 0
    }
    /// The status as a shell gives it (see `code`).
    pub fn code(&self) -> i32 {
        self.code
    }

    fn from_raw(r: &sys::cordon_result) -> ExitStatus {
        let mut refusals = Vec::new();
        let mut next: *const c_char = r.refusals;
        for _ in 0..r.n_refusals {
            if next.is_null() {
                break;
            }
            // SAFETY: n_refusals NUL-terminated strings, one after the other
            let s = unsafe { CStr::from_ptr(next) };
            refusals.push(s.to_string_lossy().into_owned());
            next = unsafe { next.add(s.to_bytes().len() + 1) };
        }
        ExitStatus {
            code: r.exit_code,
            status: if r.status_code >= 0 { Some(r.status_code) } else { None },
            signal: if r.signal > 0 { Some(r.signal) } else { None },
            timed_out: r.timed_out,
            started: r.started,
            wall: Duration::from_secs_f64(if r.wall_seconds > 0.0 { r.wall_seconds } else { 0.0 }),
            #[allow(clippy::unnecessary_cast)] // c_ulong is u32 on 32-bit targets
            refused: r.refused as u64,
            refusals,
            pid: if r.pid > 0 { Some(r.pid) } else { None },
            limits: opt_str(r.limits),
        }
    }
}

/// A run's result, or its setup failure as an error -- except a command that was not
/// found or not executable: that is a status (127, 126), as a shell gives it.
/// The result's lists are the library's: freed here, once read.
pub(crate) fn status_or_error(rc: i32, res: &mut sys::cordon_result, err: &sys::cordon_error) -> Result<ExitStatus> {
    let notfound = res.exit_code == sys::CORDON_EXIT_NOTFOUND || res.exit_code == sys::CORDON_EXIT_NOEXEC;
    let ran = rc >= 0 && res.started;
    let out = if ran || (notfound && !res.started) { Ok(ExitStatus::from_raw(res)) } else { Err(Error::from_raw(err)) };
    // SAFETY: res was filled by libcordon; its lists are freed once
    unsafe { sys::cordon_result_free(res) };
    out
}

/// What [`Child::wait_with_output`] collects.
#[derive(Debug, Clone)]
pub struct Output {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

macro_rules! pipe_type {
    ($name:ident, $doc:expr) => {
        #[doc = $doc]
        #[derive(Debug)]
        pub struct $name {
            file: File,
        }
        impl AsRawFd for $name {
            fn as_raw_fd(&self) -> RawFd {
                self.file.as_raw_fd()
            }
        }
    };
}
pipe_type!(ChildStdin, "The command's stdin (closing it is its EOF).");
pipe_type!(ChildStdout, "The command's stdout (with stderr, under Stdio::merge_stderr).");
pipe_type!(ChildStderr, "The command's stderr.");

/// The master of a command's terminal ([`Stdio::pty`]): read the command's output from
/// it, write its input (keystrokes: "\x03" is ^C) to it. Reading ends (`Ok(0)`) once
/// every process of the sandbox has closed the terminal (the kernel's EIO on a master).
#[derive(Debug)]
pub struct Pty {
    file: File,
}
impl AsRawFd for Pty {
    fn as_raw_fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }
}
impl Read for Pty {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.file.read(buf) {
            Err(e) if e.raw_os_error() == Some(EIO) => Ok(0),
            r => r,
        }
    }
}
impl Write for Pty {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

const EIO: i32 = 5;
#[cfg(any(
    target_arch = "powerpc",
    target_arch = "powerpc64",
    target_arch = "mips",
    target_arch = "mips64",
    target_arch = "sparc64"
))]
const TIOCSWINSZ: std::os::raw::c_ulong = 0x8008_7467;
#[cfg(not(any(
    target_arch = "powerpc",
    target_arch = "powerpc64",
    target_arch = "mips",
    target_arch = "mips64",
    target_arch = "sparc64"
)))]
const TIOCSWINSZ: std::os::raw::c_ulong = 0x5414;
#[repr(C)]
struct Winsize {
    rows: u16,
    cols: u16,
    xpixel: u16,
    ypixel: u16,
}
extern "C" {
    fn ioctl(fd: std::os::raw::c_int, request: std::os::raw::c_ulong, ...) -> std::os::raw::c_int;
}

impl Pty {
    /// Set the terminal's window size (the command gets SIGWINCH).
    pub fn resize(&self, rows: u16, cols: u16) -> Result<()> {
        let ws = Winsize { rows, cols, xpixel: 0, ypixel: 0 };
        // SAFETY: the descriptor is ours and open; ws outlives the call
        if unsafe { ioctl(self.file.as_raw_fd(), TIOCSWINSZ, &ws as *const Winsize) } < 0 {
            return Err(Error::os("setting the terminal's window size", io::Error::last_os_error()));
        }
        Ok(())
    }
}

impl Write for ChildStdin {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
impl Read for ChildStdout {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.file.read(buf)
    }
}
impl Read for ChildStderr {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.file.read(buf)
    }
}

/// A descriptor of the library's, as a File of our own (close-on-exec).
fn dup_fd(fd: RawFd) -> Result<Option<File>> {
    if fd < 0 {
        return Ok(None);
    }
    // SAFETY: fd is open and owned by the cordon_proc; ManuallyDrop keeps it open
    let borrowed = ManuallyDrop::new(unsafe { File::from_raw_fd(fd) });
    borrowed.try_clone().map(Some).map_err(|e| Error::os("duplicating a pipe of the command", e))
}

/// A command started by [`Policy::spawn`](crate::Policy::spawn) or
/// [`Session::spawn`](crate::Session::spawn). Dropping it kills what still runs.
pub struct Child<'a> {
    raw: *mut sys::cordon_proc,
    pub stdin: Option<ChildStdin>,
    pub stdout: Option<ChildStdout>,
    pub stderr: Option<ChildStderr>,
    /// the terminal's master, with [`Stdio::pty`]
    pub pty: Option<Pty>,
    _owner: PhantomData<&'a ()>,
}

// SAFETY: a cordon_proc may be used from another thread than the one that made it; it
// is not Sync (one waiter at a time), which &mut self enforces
unsafe impl Send for Child<'_> {}

impl<'a> Child<'a> {
    pub(crate) fn from_raw(raw: *mut sys::cordon_proc) -> Result<Child<'a>> {
        let mut c = Child { raw, stdin: None, stdout: None, stderr: None, pty: None, _owner: PhantomData };
        // SAFETY: raw is a live cordon_proc; the descriptors stay its own
        unsafe {
            // with a terminal, stdin and stdout are the terminal (a session's also gives its
            // master as both, as in 0.1): the master only, once
            let pty = sys::cordon_proc_pty(raw);
            c.pty = dup_fd(pty)?.map(|file| Pty { file });
            let own = |fd: RawFd| if pty >= 0 { -1 } else { fd };
            c.stdout = dup_fd(own(sys::cordon_proc_stdout(raw)))?.map(|file| ChildStdout { file });
            c.stderr = dup_fd(sys::cordon_proc_stderr(raw))?.map(|file| ChildStderr { file });
            if let Some(file) = dup_fd(own(sys::cordon_proc_stdin(raw)))? {
                // ours is now the only writer: its close is the command's EOF
                close_stdin(raw)?;
                c.stdin = Some(ChildStdin { file });
            }
        }
        Ok(c)
    }

    /// Readable (poll) once the whole sandbox, or the session command, has ended.
    pub fn exit_fd(&self) -> RawFd {
        // SAFETY: raw is live
        unsafe { sys::cordon_proc_exit_fd(self.raw) }
    }

    /// SIGKILL ends the command and everything it started; SIGINT, SIGTERM, SIGHUP...
    /// are delivered to the command.
    pub fn kill(&mut self, signal: i32) -> Result<()> {
        proc_kill(self.raw, signal)
    }

    fn wait_ms(&mut self, ms: i32) -> Result<Option<ExitStatus>> {
        let mut res = sys::cordon_result::new();
        let mut err = sys::cordon_error::new();
        // SAFETY: raw is live; &mut self: one waiter
        let rc = unsafe { sys::cordon_proc_wait(self.raw, ms, &mut res, &mut err) };
        if rc == 1 {
            return Ok(None);
        }
        status_or_error(rc, &mut res, &err).map(Some)
    }

    /// Wait for the command and all it left running (stdin is closed first).
    pub fn wait(&mut self) -> Result<ExitStatus> {
        drop(self.stdin.take());
        self.wait_ms(-1).map(|s| s.expect("cordon_proc_wait(-1) returned before the end"))
    }

    /// The status if it has ended, else None.
    pub fn try_wait(&mut self) -> Result<Option<ExitStatus>> {
        self.wait_ms(0)
    }

    /// Wait at most `t`.
    pub fn wait_timeout(&mut self, t: Duration) -> Result<Option<ExitStatus>> {
        let ms = t.as_millis().min(i32::MAX as u128) as i32;
        self.wait_ms(ms)
    }

    /// Read stdout (or the terminal, with [`Stdio::pty`]) and stderr to their ends (at
    /// once, so neither fills), then wait.
    pub fn wait_with_output(mut self) -> Result<Output> {
        drop(self.stdin.take());
        let mut out = Vec::new();
        let mut err = Vec::new();
        let so: Option<Box<dyn Read + Send>> = match (self.stdout.take(), self.pty.take()) {
            (Some(o), _) => Some(Box::new(o)),
            (None, Some(p)) => Some(Box::new(p)),
            (None, None) => None,
        };
        let se = self.stderr.take();
        let read = std::thread::scope(|s| -> io::Result<()> {
            let t = se.map(|mut e| {
                let buf = &mut err;
                s.spawn(move || e.read_to_end(buf).map(|_| ()))
            });
            if let Some(mut o) = so {
                o.read_to_end(&mut out)?;
            }
            match t {
                Some(t) => t.join().unwrap_or_else(|_| Err(io::Error::new(io::ErrorKind::Other, "reader panicked"))),
                None => Ok(()),
            }
        });
        read.map_err(|e| Error::os("reading the command's output", e))?;
        let status = self.wait()?;
        Ok(Output { status, stdout: out, stderr: err })
    }
}

impl Drop for Child<'_> {
    fn drop(&mut self) {
        // SAFETY: raw is live and freed once; it kills what still runs
        unsafe { sys::cordon_proc_free(self.raw) }
    }
}

fn close_stdin(raw: *mut sys::cordon_proc) -> Result<()> {
    // SAFETY: raw is live
    check(|err| unsafe { sys::cordon_proc_close_stdin(raw, err) }).map(|_| ())
}

fn proc_kill(raw: *mut sys::cordon_proc, signal: i32) -> Result<()> {
    // SAFETY: raw is live; the call is thread-safe
    check(|err| unsafe { sys::cordon_proc_kill(raw, signal, err) }).map(|_| ())
}
