// SPDX-License-Identifier: Apache-2.0
// The crate against a built libcordon (tests/rust.sh sets CORDON_LIB_DIR), as root and
// as uid 65534. Each test makes its own workspace under the system's temporary directory.
use cordon::{Command, Network, Policy, Session, Stage, Stdio, Workspace};

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::time::Duration;

struct TempDir(PathBuf);
impl TempDir {
    fn new(tag: &str) -> TempDir {
        let base = std::env::temp_dir();
        for i in 0..1000u32 {
            let p = base.join(format!("cordon-rs-{}-{}-{}", tag, std::process::id(), i));
            if fs::create_dir(&p).is_ok() {
                return TempDir(p);
            }
        }
        panic!("no temporary directory");
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn policy(ws: &TempDir) -> cordon::PolicyBuilder {
    Policy::builder().workspace(&ws.0).cwd(&ws.0)
}

#[test]
fn output_status_and_a_denied_path() {
    let ws = TempDir::new("ws");
    let secret = TempDir::new("secret");
    fs::write(secret.0.join("key"), "hunter2\n").unwrap();
    let p = policy(&ws).deny(&secret.0).build().unwrap();
    let key = format!("{}/key", secret.0.display());
    let script = format!("echo out; echo err >&2; echo made >made; cat {}; exit 3", key);
    let out = p.output(&["sh", "-c", &script]).unwrap();
    assert_eq!(out.status.code, 3);
    assert_eq!(out.status.status, Some(3));
    assert_eq!(out.stdout, b"out\n");
    assert!(out.stderr.starts_with(b"err\n"));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("hunter2"));
    assert_eq!(fs::read_to_string(ws.0.join("made")).unwrap(), "made\n");
    // positive control: shown read-only, the same file reads
    let c = policy(&ws).allow_ro(&secret.0).build().unwrap();
    assert_eq!(c.output(&["cat", &key]).unwrap().stdout, b"hunter2\n");
}

#[test]
fn not_found_and_not_executable_are_statuses() {
    let ws = TempDir::new("ws");
    let p = policy(&ws).build().unwrap();
    assert_eq!(p.output(&["no-such-command-here"]).unwrap().status.code, 127);
    fs::write(ws.0.join("noexec"), "#!/bin/sh\n").unwrap();
    let ne = ws.0.join("noexec");
    assert_eq!(p.output(&[ne.as_os_str()]).unwrap().status.code, 126);
}

#[test]
fn a_bad_policy_is_an_error_at_build_time() {
    let ws = TempDir::new("ws");
    let e = Policy::builder().workspace(ws.0.join("missing")).build().err().expect("a missing workspace was accepted");
    assert_eq!(e.option(), "workspace");
    assert!(e.to_string().starts_with("cordon: "), "{}", e);
    let boxed: Box<dyn std::error::Error> = Box::new(e);
    assert!(boxed.to_string().contains("missing"));
    assert!(Policy::builder().base("nonsense").build().is_err());
    let e = Policy::builder().env("A\0B", "x").build().err().unwrap();
    assert_eq!(e.stage(), Stage::Usage);
    assert!(policy(&ws).build().unwrap().output::<&str>(&[]).is_err());
}

#[test]
fn timeout_signal_kill() {
    let ws = TempDir::new("ws");
    let p = policy(&ws).timeout(Duration::from_millis(500)).build().unwrap();
    let t = p.output(&["sleep", "30"]).unwrap();
    assert!(t.status.timed_out);
    assert_eq!(t.status.code, 124);
    let p = policy(&ws).build().unwrap();
    let s = p.output(&["sh", "-c", "kill -TERM $$"]).unwrap();
    assert_eq!(s.status.signal, Some(15));
    assert_eq!(s.status.status, None);
    let mut c = p.spawn(&["sleep", "30"], Stdio::inherit()).unwrap();
    assert!(c.try_wait().unwrap().is_none());
    c.kill(9).unwrap();
    assert_eq!(c.wait().unwrap().signal, Some(9));
}

#[test]
fn spawn_streams_stdin_and_stdout() {
    let ws = TempDir::new("ws");
    let p = policy(&ws).build().unwrap();
    let mut c = p.spawn(&["sh", "-c", "while read l; do echo \"got $l\"; done"], Stdio::piped().stdin_piped()).unwrap();
    let mut stdin = c.stdin.take().unwrap();
    let mut lines = BufReader::new(c.stdout.take().unwrap());
    stdin.write_all(b"one\n").unwrap();
    let mut line = String::new();
    lines.read_line(&mut line).unwrap(); // answered before stdin is closed: streaming
    assert_eq!(line, "got one\n");
    stdin.write_all(b"two\n").unwrap();
    drop(stdin);
    let mut rest = String::new();
    lines.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "got two\n");
    assert!(c.wait().unwrap().success());
}

#[test]
fn large_binary_output_intact() {
    let ws = TempDir::new("ws");
    let p = policy(&ws).build().unwrap();
    let out = p.output(&["head", "-c", "3000000", "/dev/urandom"]).unwrap();
    assert_eq!(out.stdout.len(), 3_000_000);
}

#[test]
fn session_many_commands_one_sandbox() {
    let ws = TempDir::new("ws");
    let secret = TempDir::new("secret");
    fs::write(secret.0.join("key"), "hunter2\n").unwrap();
    let p = policy(&ws).deny(&secret.0).network(Network::None).build().unwrap();
    let s = Session::new(&p).unwrap();
    let plain = Command::new();
    assert!(s.output(&["sh", "-c", "echo kept >/tmp/state"], &plain).unwrap().status.success());
    assert_eq!(s.output(&["cat", "/tmp/state"], &plain).unwrap().stdout, b"kept\n");
    fs::create_dir(ws.0.join("sub")).unwrap();
    let cmd = Command::new().cwd(ws.0.join("sub")).env("FOO", "bar");
    let b = s.output(&["sh", "-c", "pwd; echo $FOO"], &cmd).unwrap();
    assert_eq!(String::from_utf8_lossy(&b.stdout), format!("{}\nbar\n", ws.0.join("sub").display()));
    let key = format!("{}/key", secret.0.display());
    let c = s.output(&["cat", &key], &plain).unwrap();
    assert!(!c.status.success());
    assert!(!String::from_utf8_lossy(&c.stdout).contains("hunter2"));
    assert_eq!(s.output(&["no-such-command-here"], &plain).unwrap().status.code, 127);
    let t = s.output(&["sleep", "30"], &Command::new().timeout(Duration::from_millis(500))).unwrap();
    assert!(t.status.timed_out);
    let m = s
        .output(&["sh", "-c", "echo 1; echo 2 >&2; echo 3"], &Command::new().stdio(Stdio::inherit().merge_stderr()))
        .unwrap();
    assert_eq!(m.stdout, b"1\n2\n3\n");
    // two commands at once: one still running while another starts and ends
    let mut long = s.spawn(&["sleep", "30"], &plain).unwrap();
    assert!(s.output(&["true"], &plain).unwrap().status.success());
    assert!(long.try_wait().unwrap().is_none());
    long.kill(9).unwrap();
    assert_eq!(long.wait().unwrap().signal, Some(9));
    // a stream read as it comes
    let mut child =
        s.spawn(&["sh", "-c", "for i in 1 2 3; do echo $i; done"], &Command::new().stdio(Stdio::piped())).unwrap();
    let mut got = String::new();
    child.stdout.take().unwrap().read_to_string(&mut got).unwrap();
    assert_eq!(got, "1\n2\n3\n");
    assert!(child.wait().unwrap().success());
}

#[test]
fn workspace_run_changes_integrate() {
    let src = TempDir::new("src");
    let state = TempDir::new("state");
    fs::write(src.0.join("a"), "old\n").unwrap();
    let mut w = Workspace::create(Some(&state.0), "t1", &src.0, "copy").unwrap();
    assert_eq!(w.backend(), "copy");
    let p = Policy::builder().build().unwrap();
    let st = w.run(&p, &["sh", "-c", "echo new >a; echo b >b"]).unwrap();
    assert!(st.success());
    assert_eq!(fs::read_to_string(src.0.join("a")).unwrap(), "old\n"); // the source untouched
    let ch = w.changes().unwrap();
    let summary: Vec<(char, String)> = ch.iter().map(|c| (c.status, c.path.display().to_string())).collect();
    assert_eq!(summary, vec![('M', "a".to_string()), ('A', "b".to_string())]);
    let done = w.integrate(Some("test")).unwrap();
    assert_eq!((done.added, done.modified), (1, 1));
    assert_eq!(fs::read_to_string(src.0.join("a")).unwrap(), "new\n");
    assert_eq!(Workspace::list(Some(&state.0)).unwrap(), vec!["t1".to_string()]);
    drop(w);
    Workspace::remove(Some(&state.0), "t1").unwrap();
    assert!(Workspace::list(Some(&state.0)).unwrap().is_empty());
}

#[test]
fn the_bash_tool_example_runs() {
    // built by cargo test alongside the tests
    let exe = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let _ = exe;
    let bin = std::env::current_exe().unwrap().parent().unwrap().parent().unwrap().join("examples/bash_tool");
    let ws = TempDir::new("ws");
    let out = std::process::Command::new(&bin).args(["echo $((6*7))", "exit 4"]).current_dir(&ws.0).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("$ echo $((6*7))\n42\n"), "{}", text);
    assert!(text.contains("[exit status 4]"), "{}", text);
}

#[test]
fn a_command_of_its_own_under_one_policy() {
    let ws = TempDir::new("ws");
    fs::create_dir(ws.0.join("sub")).unwrap();
    let p = policy(&ws).timeout(Duration::from_millis(300)).build().unwrap();
    let cmd = Command::new().cwd(ws.0.join("sub")).env("FOO", "bar").timeout(Duration::from_secs(60));
    let out = p.output_with(&["sh", "-c", "sleep 1; pwd; echo $FOO"], &cmd).unwrap();
    assert!(!out.status.timed_out, "the command's own timeout did not replace the policy's");
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{}\nbar\n", ws.0.join("sub").display()));
    // positive control: the policy's timeout applies where the command has none
    assert!(p.output(&["sleep", "30"]).unwrap().status.timed_out);
    // Duration::ZERO: no timeout at all
    assert!(!p.output_with(&["sleep", "1"], &Command::new().timeout(Duration::ZERO)).unwrap().status.timed_out);
    // keep is a session's
    assert!(p.spawn_with(&["true"], &Command::new().keep(true)).is_err());
}

#[test]
fn refusals_of_the_creation_control() {
    let ws = TempDir::new("ws");
    let p = policy(&ws).build().unwrap();
    let out = p.output(&["sh", "-c", "mkdir .vscode; mkdir ok"]).unwrap();
    assert_eq!(out.status.refused, 1);
    assert_eq!(out.status.refusals.len(), 1);
    assert!(out.status.refusals[0].starts_with("mkdir .vscode: protected"), "{:?}", out.status.refusals);
    assert!(ws.0.join("ok").is_dir() && !ws.0.join(".vscode").exists());
}

#[test]
fn explain_text_and_json_run_nothing() {
    let ws = TempDir::new("explain");
    let secret = TempDir::new("explain-secret");
    let p = policy(&ws).deny(&secret.0).build().unwrap();
    let text = p.explain(&["touch", "made"], cordon::Explain::default()).unwrap();
    assert!(text.contains(&secret.0.display().to_string()), "{}", text);
    let json = p.explain(&["touch", "made"], cordon::Explain { json: true, verbose: false }).unwrap();
    assert!(json.trim_start().starts_with('{') && json.contains("\"plan\""), "{}", json);
    assert!(json.contains(&secret.0.display().to_string()));
    // no command is fine too; and nothing ran
    p.explain::<&str>(&[], cordon::Explain::default()).unwrap();
    assert!(!ws.0.join("made").exists());
    // verbose lists the refused calls: longer than the count alone
    let verbose = p.explain(&["true"], cordon::Explain { json: false, verbose: true }).unwrap();
    assert!(verbose.len() > text.len(), "verbose {} <= {}", verbose.len(), text.len());
    // a NUL in argv is refused before the library sees it
    assert!(p.explain(&["a\0b"], cordon::Explain::default()).is_err());
}

#[test]
fn check_reports_the_host() {
    let c = cordon::check().unwrap();
    assert!(c.json.contains("\"default_sandbox\""), "{}", c.json);
    assert!(c.json.contains("\"checks\""));
    // the tests here run sandboxes, so the default one works on this host
    assert!(c.default_sandbox, "{}", c.json);
}

#[test]
fn a_terminal_of_its_own() {
    let ws = TempDir::new("pty");
    let p = policy(&ws).build().unwrap();
    // without the flag, no terminal (the positive control for the one below)
    let plain = p.output(&["sh", "-c", "test -t 0 && echo tty || echo notty"]).unwrap();
    assert_eq!(String::from_utf8_lossy(&plain.stdout), "notty\n");
    let mut c = p
        .spawn(&["sh", "-c", "read line; stty size; echo \"got $line\"; test -t 1 && echo tty"], Stdio::pty())
        .unwrap();
    assert!(c.stdout.is_none() && c.stdin.is_none());
    let mut pty = c.pty.take().expect("a terminal's master");
    pty.resize(33, 101).unwrap();
    pty.write_all(b"hello\n").unwrap();
    let mut out = Vec::new();
    pty.read_to_end(&mut out).unwrap(); // ends (EIO) once the command has closed it
    let st = c.wait().unwrap();
    assert_eq!(st.code, 0);
    let text = String::from_utf8_lossy(&out).replace("\r\n", "\n");
    assert!(text.contains("33 101\n"), "{:?}", text);
    assert!(text.contains("got hello\n"), "{:?}", text);
    assert!(text.contains("tty\n"), "{:?}", text);
    // in a session: the same, through output (the terminal read as stdout)
    let s = Session::new(&p).unwrap();
    let o = s.output(&["sh", "-c", "test -t 1 && echo tty"], &Command::new().stdio(Stdio::pty())).unwrap();
    assert_eq!(o.status.code, 0);
    assert_eq!(String::from_utf8_lossy(&o.stdout).replace("\r\n", "\n"), "tty\n");
    // a terminal with a stdout pipe is refused
    assert!(p.spawn(&["true"], Stdio::pty().stdout_piped()).is_err());
}
