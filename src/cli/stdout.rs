//! Standard output that its reader may close early (`ulpgate validate |
//! head -1`): a closed pipe stops the printing, never the command, so the
//! exit code and the report files are what they would have been. Rust's
//! `println!` panics there (exit 101). Any other failure to write (a full
//! disk behind a redirect) is kept and ends the command with exit 2
//! ([`failure`]).

use std::io::{ErrorKind, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED: AtomicBool = AtomicBool::new(false);
static FAILURE: Mutex<Option<std::io::Error>> = Mutex::new(None);

/// Writes to standard output unless it was found closed.
pub fn write(args: std::fmt::Arguments) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != ErrorKind::BrokenPipe {
            FAILURE.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
        }
    }
}

/// The first failure to write standard output other than its reader
/// closing it.
pub fn failure() -> Option<std::io::Error> {
    FAILURE.lock().unwrap_or_else(|p| p.into_inner()).take()
}

/// `println!` through [`write`].
macro_rules! outln {
    () => { $crate::cli::stdout::write(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cli::stdout::write(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` through [`write`].
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::stdout::write(format_args!($($arg)*)) };
}

pub(crate) use {out, outln};
