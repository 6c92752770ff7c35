//! `ulpgate bench`: how fast each backend scores frames. Two modes, both
//! generic over every backend [`crate::backend::open`] returns:
//!
//! - [`gate`]: a whole gate run as separate processes (cold start to exit),
//!   the same run in-process, and each (feature, backend, fixture) side
//!   alone, warm, in frames per second;
//! - [`clip`]: per feature and backend, throughput on one clip with the
//!   upload included (frames read from the files each frame) and excluded
//!   (frames resident, `compute` alone with the slots in flight, the same
//!   number of workers), against
//!   the host-to-device bandwidth measured through the `Gpu` trait.
//!
//! Timings are measurements, never assertions: no test checks a number.

pub mod clip;
pub mod gate;
mod meter;
mod read_ahead;

use serde::Serialize;
use std::time::Duration;

/// Minimum, median and maximum of a set of timings, in seconds.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Stats {
    pub runs: usize,
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

impl Stats {
    pub fn of(samples: &[Duration]) -> Option<Stats> {
        let mut s: Vec<f64> = samples.iter().map(Duration::as_secs_f64).collect();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        let median = match n {
            0 => return None,
            _ if n % 2 == 1 => s[n / 2],
            _ => (s[n / 2 - 1] + s[n / 2]) / 2.0,
        };
        Some(Stats { runs: n, min: s[0], median, max: s[n - 1] })
    }
}

/// The machine the numbers come from.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub cpus: usize,
    pub os: String,
    pub arch: String,
    pub cpu_model: Option<String>,
}

impl Machine {
    pub fn here() -> Machine {
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
            s.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split(':').nth(1)).map(|m| m.trim().into())
        });
        Machine {
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            os: std::env::consts::OS.into(),
            arch: std::env::consts::ARCH.into(),
            cpu_model,
        }
    }
}

/// Frames per second and milliseconds per frame of `frames` in `seconds`.
pub fn rate(frames: usize, seconds: f64) -> (f64, f64) {
    if seconds <= 0.0 || frames == 0 {
        return (0.0, 0.0);
    }
    (frames as f64 / seconds, 1e3 * seconds / frames as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_take_the_middle() {
        let ms = |v: &[u64]| v.iter().map(|&m| Duration::from_millis(m)).collect::<Vec<_>>();
        let s = Stats::of(&ms(&[30, 10, 20])).unwrap();
        assert_eq!((s.min, s.median, s.max), (0.01, 0.02, 0.03));
        assert_eq!(Stats::of(&ms(&[10, 20])).unwrap().median, 0.015);
        assert!(Stats::of(&[]).is_none());
    }

    #[test]
    fn rates_are_per_frame() {
        assert_eq!(rate(48, 0.5), (96.0, 1e3 * 0.5 / 48.0));
        assert_eq!(rate(0, 1.0), (0.0, 0.0));
    }
}
