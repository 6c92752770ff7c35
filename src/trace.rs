//! `ULPGATE_TRACE=1`: when each phase of a run ends, and how long timed
//! steps take, on stderr — for diagnosing start-up on GPU machines. Off, it
//! costs one cached environment lookup.

use std::sync::OnceLock;
use std::time::Instant;

fn start() -> Instant {
    static START: OnceLock<Instant> = OnceLock::new();
    *START.get_or_init(Instant::now)
}

/// Whether tracing is on; also fixes the time that marks count from.
pub fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        start();
        std::env::var_os("ULPGATE_TRACE").is_some_and(|v| !v.is_empty())
    })
}

/// Prints the time since the process began tracing, and `what`.
pub fn mark(what: &str) {
    if enabled() {
        eprintln!("ulpgate trace: +{:.1} ms: {what}", start().elapsed().as_secs_f64() * 1e3);
    }
}

/// Runs `f`, printing how long it took.
pub fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    if !enabled() {
        return f();
    }
    let t0 = Instant::now();
    let out = f();
    eprintln!(
        "ulpgate trace: +{:.1} ms: {what}: {:.1} ms",
        start().elapsed().as_secs_f64() * 1e3,
        t0.elapsed().as_secs_f64() * 1e3
    );
    out
}
