//! `ULPGATE_KERNEL_TIMES=1`: the device time of every kernel, summed over
//! its dispatches, printed on stderr when the command ends — for finding
//! which kernel owns a feature's time on a given driver. The Vulkan backend
//! writes a timestamp after the work before each dispatch and after the
//! dispatch itself, so a kernel's time is from the end of what came before
//! it to its own end (exact for dispatches a barrier orders; independent
//! neighbours may share time); its copies the same way, as `(upload)` and
//! `(download)`. On lavapipe "device time" is the wall time
//! its threads spent. Off, it costs one cached environment lookup.

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

/// Whether kernel timing is on.
pub fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("ULPGATE_KERNEL_TIMES").is_some_and(|v| !v.is_empty() && v != "0"))
}

/// Dispatches and nanoseconds per (backend, kernel).
type Times = BTreeMap<(&'static str, &'static str), (u64, f64)>;

fn times() -> &'static Mutex<Times> {
    static TIMES: OnceLock<Mutex<Times>> = OnceLock::new();
    TIMES.get_or_init(|| Mutex::new(Times::new()))
}

/// Adds one dispatch of `kernel` on `backend` that took `ns` nanoseconds.
pub fn record(backend: &'static str, kernel: &'static str, ns: f64) {
    if let Ok(mut t) = times().lock() {
        let entry = t.entry((backend, kernel)).or_insert((0, 0.0));
        entry.0 += 1;
        entry.1 += ns;
    }
}

/// The table of what was recorded, most time first; `None` when nothing was.
pub fn table() -> Option<Table> {
    let t = times().lock().ok()?;
    if t.is_empty() {
        return None;
    }
    let total: f64 = t.values().map(|v| v.1).sum();
    let mut rows: Vec<_> = t.iter().collect();
    rows.sort_by(|a, b| b.1.1.total_cmp(&a.1.1));
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header(["Backend", "Kernel", "Dispatches", "ms", "µs each", "Share"]);
    for ((backend, kernel), (count, ns)) in rows {
        table.add_row([
            backend.to_string(),
            kernel.to_string(),
            count.to_string(),
            format!("{:.3}", ns / 1e6),
            format!("{:.1}", ns / 1e3 / *count as f64),
            format!("{:.1}%", 100.0 * ns / total.max(f64::MIN_POSITIVE)),
        ]);
    }
    Some(table)
}

/// Prints [`table`] on stderr when timing is on.
pub fn print() {
    if enabled()
        && let Some(table) = table()
    {
        eprintln!("ulpgate kernel times (device time per kernel, all dispatches):\n{table}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_are_summed_and_sorted_by_time() {
        record("test", "fast", 1_000.0);
        record("test", "slow", 5_000.0);
        record("test", "slow", 7_000.0);
        let text = table().expect("recorded").to_string();
        let (slow, fast) = (text.find("slow").unwrap(), text.find("fast").unwrap());
        assert!(slow < fast, "{text}");
        assert!(text.contains("0.012"), "{text}");
    }
}
