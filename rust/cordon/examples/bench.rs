// SPDX-License-Identifier: Apache-2.0
// The cost the crate adds over libcordon, in one process (bench/bindings.sh runs it):
//   session   a command (`true`, stdout and stderr piped and read to their end) in one
//             session: cordon_session_spawn_cmd + cordon_proc_wait through cordon-sys
//             (the C library's own calls) against Session::output; rounds alternate
//   output    `head -c SIZE /dev/zero` read in 64 KiB blocks through Policy::spawn's
//             stdout against std::process::Command's plain pipe; MiB/s, medians
// Prints one line per figure: "NAME VALUE".
//   bench [--rounds N] [--size BYTES] [--output-rounds N]
use cordon::{Command, Policy, Session, Stdio};
use cordon_sys as sys;
use std::ffi::CString;
use std::fs::File;
use std::io::Read;
use std::mem::ManuallyDrop;
use std::os::raw::c_char;
use std::os::unix::io::FromRawFd;
use std::os::unix::process::CommandExt;
use std::time::Instant;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn drain(fd: i32) {
    if fd < 0 {
        return;
    }
    // SAFETY: fd belongs to the cordon_proc, which outlives this borrow
    let mut f = ManuallyDrop::new(unsafe { File::from_raw_fd(fd) });
    let mut buf = [0u8; 65536];
    while f.read(&mut buf).map(|n| n > 0).unwrap_or(false) {}
}

// One session command through the C library's calls, as a C harness makes them.
fn raw_command(s: *mut sys::cordon_session, argv: &[*mut c_char]) -> f64 {
    let t = Instant::now();
    let cmd = sys::cordon_cmd::new();
    let mut err = sys::cordon_error::new();
    let mut p = std::ptr::null_mut();
    let flags = sys::CORDON_SPAWN_STDOUT_PIPE | sys::CORDON_SPAWN_STDERR_PIPE;
    // SAFETY: argv is NULL-terminated; s is a live session
    unsafe {
        assert!(sys::cordon_session_spawn_cmd(s, argv.as_ptr(), flags, &cmd, &mut p, &mut err) == 0);
        drain(sys::cordon_proc_stdout(p));
        drain(sys::cordon_proc_stderr(p));
        let mut res = sys::cordon_result::new();
        assert!(sys::cordon_proc_wait(p, -1, &mut res, &mut err) == 0 && res.exit_code == 0);
        sys::cordon_proc_free(p);
    }
    t.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let mut rounds = 200usize;
    let mut output_rounds = 5usize;
    let mut size: u64 = 1 << 30;
    let args: Vec<String> = std::env::args().collect();
    let mut i = 1;
    while i + 1 < args.len() {
        match args[i].as_str() {
            "--rounds" => rounds = args[i + 1].parse().expect("--rounds N"),
            "--output-rounds" => output_rounds = args[i + 1].parse().expect("--output-rounds N"),
            "--size" => size = args[i + 1].parse().expect("--size BYTES"),
            a => panic!("unknown option {}", a),
        }
        i += 2;
    }
    let policy = Policy::builder().build().expect("policy");

    // session commands: the C calls against the crate's, alternating
    let session = Session::new(&policy).expect("session");
    let raw_session = {
        // the crate's session handle is opaque; a second session for the raw calls keeps
        // the two apart (each command runs in a session of the same policy)
        let mut err = sys::cordon_error::new();
        let mut s = std::ptr::null_mut();
        // SAFETY: a fresh policy of the C library's own
        unsafe {
            let p = sys::cordon_policy_new();
            assert!(sys::cordon_session_new(p, &mut s, &mut err) == 0);
            sys::cordon_policy_free(p);
        }
        s
    };
    let t = CString::new("true").unwrap();
    let argv = [t.as_ptr() as *mut c_char, std::ptr::null_mut()];
    let (mut c_ms, mut rs_ms) = (Vec::new(), Vec::new());
    let cmd = Command::new();
    for _ in 0..10 {
        raw_command(raw_session, &argv);
        session.output(&["true"], &cmd).unwrap();
    }
    for r in 0..rounds {
        let mut one = |first: bool| {
            if first {
                c_ms.push(raw_command(raw_session, &argv));
            } else {
                let t0 = Instant::now();
                let o = session.output(&["true"], &cmd).unwrap();
                assert!(o.status.success());
                rs_ms.push(t0.elapsed().as_secs_f64() * 1e3);
            }
        };
        one(r % 2 == 0);
        one(r % 2 == 1);
    }
    // SAFETY: made above, freed once
    unsafe { sys::cordon_session_free(raw_session) };
    drop(session);
    println!("session_c_ms {:.3}", median(&mut c_ms));
    println!("session_rust_ms {:.3}", median(&mut rs_ms));

    // output throughput: through the crate against a plain pipe
    let sz = size.to_string();
    let read_all = |mut r: Box<dyn Read>| -> u64 {
        let mut buf = vec![0u8; 65536];
        let mut n = 0u64;
        loop {
            match r.read(&mut buf) {
                Ok(0) => return n,
                Ok(k) => n += k as u64,
                Err(e) => panic!("read: {}", e),
            }
        }
    };
    // the plain pipe, the same with `head` in a session of its own (setsid, as the
    // sandbox's command is: a scheduling group of its own where autogroups are on), and
    // through the crate; the three in turn, the order rotating
    let plain_pipe = |setsid: bool| -> u64 {
        let mut cmd = std::process::Command::new("head");
        cmd.args(["-c", &sz, "/dev/zero"]).stdout(std::process::Stdio::piped());
        if setsid {
            // SAFETY: setsid is async-signal-safe; nothing else runs between fork and exec
            unsafe {
                cmd.pre_exec(|| if setsid_() < 0 { Err(std::io::Error::last_os_error()) } else { Ok(()) });
            }
        }
        let mut c = cmd.spawn().unwrap();
        let n = read_all(Box::new(c.stdout.take().unwrap()));
        c.wait().unwrap();
        n
    };
    let (mut plain, mut plain_setsid, mut through) = (Vec::new(), Vec::new(), Vec::new());
    let mib = size as f64 / (1u64 << 20) as f64;
    for r in 0..output_rounds * 3 {
        let t0 = Instant::now();
        let kind = (r + r / 3) % 3;
        let n = match kind {
            0 | 1 => plain_pipe(kind == 1),
            _ => {
                let mut c = policy.spawn(&["head", "-c", &sz, "/dev/zero"], Stdio::piped()).unwrap();
                let n = read_all(Box::new(c.stdout.take().unwrap()));
                c.wait().unwrap();
                n
            }
        };
        assert_eq!(n, size);
        [&mut plain, &mut plain_setsid, &mut through][kind].push(mib / t0.elapsed().as_secs_f64());
    }
    println!("output_plain_mibs {:.0}", median(&mut plain));
    println!("output_plain_setsid_mibs {:.0}", median(&mut plain_setsid));
    println!("output_rust_mibs {:.0}", median(&mut through));
}

extern "C" {
    #[link_name = "setsid"]
    fn setsid_() -> i32;
}
