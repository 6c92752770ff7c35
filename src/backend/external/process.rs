//! Runs a command with a deadline, keeping the tail of what it prints.
//!
//! The command runs in its own process group, so a timeout kills whatever
//! it started too (a shell script's children), and nothing it left behind
//! keeps its pipes open after it exits.

use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// Bytes of each stream kept (its end).
const KEEP: usize = 16 * 1024;

/// A command that ran to its end.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

#[derive(Debug)]
pub enum RunError {
    /// It could not be started (not found, not executable, ...).
    Spawn(std::io::Error),
    /// It ran past its deadline and was killed.
    Timeout { stderr: String },
    /// Waiting for it failed.
    Wait(std::io::Error),
}

/// Runs `argv` with no standard input, killing it after `timeout`.
pub fn run(argv: &[String], timeout: Duration) -> Result<Finished, RunError> {
    let (program, args) = argv.split_first().ok_or_else(|| RunError::Spawn(std::io::Error::other("empty argv")))?;
    let mut command = Command::new(program);
    command.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().map_err(RunError::Spawn)?;
    let stdout = collect(child.stdout.take());
    let stderr = collect(child.stderr.take());
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(2);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => break None,
            Ok(None) => {
                thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(e) => {
                kill_group(&mut child);
                return Err(RunError::Wait(e));
            }
        }
    };
    // Whatever the command left running in its group goes with it.
    kill_group(&mut child);
    let (stdout, stderr) = (finish(stdout), finish(stderr));
    match status {
        Some(status) => Ok(Finished { status, stdout, stderr }),
        None => Err(RunError::Timeout { stderr }),
    }
}

type Collector = Option<mpsc::Receiver<Vec<u8>>>;

/// Reads a stream to its end on a thread, keeping its last [`KEEP`] bytes.
fn collect(stream: Option<impl Read + Send + 'static>) -> Collector {
    let mut stream = stream?;
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buf = [0u8; 8192];
        while let Ok(n) = stream.read(&mut buf) {
            if n == 0 {
                break;
            }
            kept.extend_from_slice(&buf[..n]);
            if kept.len() > 2 * KEEP {
                kept.drain(..kept.len() - KEEP);
            }
        }
        let start = kept.len().saturating_sub(KEEP);
        let _ = tx.send(kept.split_off(start));
    });
    Some(rx)
}

/// What a collector kept; empty if its stream is still held open by a
/// process outside the group after a grace period.
fn finish(collector: Collector) -> String {
    collector
        .and_then(|rx| rx.recv_timeout(Duration::from_secs(2)).ok())
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default()
}

fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    {
        if let Ok(pid) = i32::try_from(child.id()) {
            // SAFETY: kill(2) with a negative pid signals the process group
            // the child leads (it was started with process_group(0)); it
            // touches no memory.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The last `lines` lines of a command's output, made safe for a one-line
/// note: progress bars (`\r`) keep their final state, control characters
/// and escape sequences go, and lines are joined with ` ⏎ `.
pub fn tail(text: &str, lines: usize, max_chars: usize) -> String {
    let cleaned: Vec<String> = text
        .lines()
        .map(|l| l.rsplit('\r').find(|s| !s.trim().is_empty()).unwrap_or(""))
        .map(strip_controls)
        .map(|l| l.trim_end().to_string())
        .filter(|l| !l.trim().is_empty())
        .collect();
    let start = cleaned.len().saturating_sub(lines);
    let joined = cleaned[start..].join(" ⏎ ");
    let count = joined.chars().count();
    if count > max_chars {
        let skip = count - max_chars;
        format!("…{}", joined.chars().skip(skip).collect::<String>())
    } else {
        joined
    }
}

/// Removes ANSI escape sequences and other control characters.
fn strip_controls(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ params final-byte; other escapes: ESC + one char.
            if chars.next_if_eq(&'[').is_some() {
                while chars.next().is_some_and(|c| !('@'..='~').contains(&c)) {}
            } else {
                chars.next();
            }
        } else if c == '\t' {
            out.push(' ');
        } else if !c.is_control() {
            out.push(c);
        }
    }
    out
}

/// How a command ended, in words: `exited with status 3`, `was killed by
/// signal 11 (SIGSEGV)`.
pub fn describe_status(status: &ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            let name = match sig {
                libc::SIGSEGV => " (SIGSEGV)",
                libc::SIGABRT => " (SIGABRT)",
                libc::SIGKILL => " (SIGKILL)",
                libc::SIGTERM => " (SIGTERM)",
                libc::SIGBUS => " (SIGBUS)",
                libc::SIGFPE => " (SIGFPE)",
                libc::SIGILL => " (SIGILL)",
                _ => "",
            };
            return format!("was killed by signal {sig}{name}");
        }
    }
    format!("ended abnormally ({status})")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), script.into()]
    }

    #[test]
    fn keeps_status_and_output() {
        let f = run(&sh("echo out; echo err >&2; exit 3"), Duration::from_secs(10)).unwrap();
        assert_eq!(f.status.code(), Some(3));
        assert_eq!((f.stdout.as_str(), f.stderr.as_str()), ("out\n", "err\n"));
        assert_eq!(describe_status(&f.status), "exited with status 3");
    }

    #[test]
    fn a_timeout_kills_the_whole_group() {
        let t0 = Instant::now();
        // The background sleep holds stderr open: only killing the group
        // lets the run end promptly.
        let r = run(&sh("echo started >&2; sleep 30 & sleep 30"), Duration::from_millis(300));
        assert!(matches!(&r, Err(RunError::Timeout { stderr }) if stderr == "started\n"), "{r:?}");
        assert!(t0.elapsed() < Duration::from_secs(5), "took {:?}", t0.elapsed());
    }

    #[test]
    fn signals_are_named() {
        let f = run(&sh("kill -SEGV $$"), Duration::from_secs(10)).unwrap();
        assert_eq!(describe_status(&f.status), "was killed by signal 11 (SIGSEGV)");
    }

    #[test]
    fn missing_programs_do_not_start() {
        let r = run(&["/nonexistent/vmaf".to_string()], Duration::from_secs(1));
        assert!(matches!(r, Err(RunError::Spawn(_))));
    }

    #[test]
    fn tails_are_one_clean_line() {
        let text = "a\nprogress 1%\rprogress 100%\n\u{1b}[31mred\u{1b}[0m\tx\n\nlast\n";
        assert_eq!(tail(text, 3, 100), "progress 100% ⏎ red x ⏎ last");
        assert_eq!(tail("abcdef", 5, 3), "…def");
    }
}
