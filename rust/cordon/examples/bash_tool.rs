// SPDX-License-Identifier: Apache-2.0
// An agent's bash tool on cordon: one session for the whole conversation, each tool call
// a command in it, with a timeout, its output merged and cut to what a model can read.
//   cargo run --example bash_tool -- 'ls; echo $((6*7))' 'cat nope'
use cordon::{Command, Policy, Session, Stdio};
use std::time::Duration;

const LIMIT: usize = 30_000; // bytes of output a model is shown

fn bash_tool(session: &Session, command: &str) -> Result<String, cordon::Error> {
    let cmd = Command::new().timeout(Duration::from_secs(120)).stdio(Stdio::inherit().merge_stderr());
    let out = session.output(&["bash", "-c", command], &cmd)?;
    let mut text = String::from_utf8_lossy(&out.stdout[..out.stdout.len().min(LIMIT)]).into_owned();
    if out.stdout.len() > LIMIT {
        text += &format!("\n[... {} more bytes]", out.stdout.len() - LIMIT);
    }
    match (out.status.timed_out, out.status.signal, out.status.code) {
        (true, _, _) => text += "\n[timed out after 120 s]",
        (_, Some(sig), _) => text += &format!("\n[killed by signal {}]", sig),
        (_, _, 0) => {}
        (_, _, code) => text += &format!("\n[exit status {}]", code),
    }
    Ok(text)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let policy = Policy::builder().workspace(std::env::current_dir()?).build()?;
    let session = Session::new(&policy)?;
    for command in std::env::args().skip(1) {
        println!("$ {}\n{}", command, bash_tool(&session, &command)?);
    }
    Ok(())
}
