//! Times a gate: whole runs as separate processes (process start to exit,
//! cold: a fresh process opens every backend and builds every kernel), the
//! same run in-process, and each side alone, warm.

use super::{Machine, Stats, rate};
use crate::backend::{self, Backend, DeviceInfo, DeviceKind, OpenOptions, SideFrames, SideRequest};
use crate::fixture::{DEFAULT_HOLD_BYTES, FixtureError, open_pair};
use crate::gate::{self, Plan, RunOptions};
use crate::report::model::Status;
use anyhow::{Context, Result, anyhow};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

pub struct Options {
    /// `ulpgate run` arguments that reproduce the benchmarked run.
    pub run_args: Vec<String>,
    /// Whole runs as separate processes.
    pub process_runs: usize,
    /// Timed repetitions of each side alone (the median is reported).
    pub repeat: usize,
    pub open: OpenOptions,
    /// `run --fixture-memory` in bytes (None: `run`'s default).
    pub hold_fixtures_up_to: Option<u64>,
}

#[derive(Debug, Serialize)]
pub struct ProcessRuns {
    /// The command each run executed.
    pub command: Vec<String>,
    /// Process start to exit, seconds.
    pub wall: Option<Stats>,
    /// Each run's exit status (0 = every cell OK).
    pub exit_codes: Vec<Option<i32>>,
}

#[derive(Debug, Serialize)]
pub struct BackendOpen {
    pub backend: String,
    /// Opening it first thing in this process (loader, driver, device), seconds.
    pub seconds: f64,
    pub device: Option<DeviceInfo>,
    pub error: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct InProcess {
    /// `gate::execute` wall with the backends' libraries already loaded by
    /// this process: opening backends, building kernels, reading fixtures,
    /// every side in parallel, diffs.
    pub gate_seconds: f64,
    pub status: String,
    pub cells: usize,
    pub ok: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct SideTiming {
    pub feature: String,
    pub fixture: String,
    pub backend: String,
    pub arch_id: String,
    pub frames: usize,
    /// Median of the repetitions, seconds (the side alone, warm).
    pub seconds: f64,
    pub fps: f64,
    pub ms_per_frame: f64,
    /// The cpu side's time over this side's, same feature and fixture.
    pub speedup_vs_cpu: Option<f64>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FeatureTotal {
    pub feature: String,
    pub backend: String,
    pub frames: usize,
    pub seconds: f64,
    pub fps: f64,
    pub ms_per_frame: f64,
    pub speedup_vs_cpu: Option<f64>,
}

#[derive(Debug, Serialize)]
pub struct GateBench {
    pub schema: &'static str,
    pub mode: &'static str,
    pub machine: Machine,
    pub gates: Vec<PathBuf>,
    pub process: ProcessRuns,
    pub open: Vec<BackendOpen>,
    pub in_process: InProcess,
    pub sides: Vec<SideTiming>,
    pub totals: Vec<FeatureTotal>,
}

/// Runs the whole gate `runs` times as child processes of this binary.
fn process_runs(run_args: &[String], runs: usize) -> Result<ProcessRuns> {
    let exe = std::env::current_exe().context("cannot find this executable")?;
    let mut times = Vec::new();
    let mut exit_codes = Vec::new();
    for _ in 0..runs {
        let t0 = Instant::now();
        let status = Command::new(&exe)
            .args(run_args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .with_context(|| format!("cannot run {}", exe.display()))?;
        times.push(t0.elapsed());
        exit_codes.push(status.code());
    }
    let mut command = vec![exe.display().to_string()];
    command.extend(run_args.iter().cloned());
    Ok(ProcessRuns { command, wall: Stats::of(&times), exit_codes })
}

type SideKey = (usize, String, String, String);

pub fn run(plan: &Plan, gates: Vec<PathBuf>, options: &Options) -> Result<GateBench> {
    let process = process_runs(&options.run_args, options.process_runs)?;

    // Open each backend once, first, so the time is this process's cold
    // open (loader, driver, device); then the whole run in-process; then
    // every side alone.
    let mut opened: BTreeMap<(usize, String), Result<Arc<dyn Backend>, String>> = BTreeMap::new();
    let mut open = Vec::new();
    for cell in &plan.cells {
        for name in [&cell.a, &cell.b] {
            let key = (cell.gate, name.clone());
            if opened.contains_key(&key) {
                continue;
            }
            let decl = &plan.gates[cell.gate].backends[name];
            let t0 = Instant::now();
            let result = backend::open(decl, &options.open);
            open.push(BackendOpen {
                backend: name.clone(),
                seconds: t0.elapsed().as_secs_f64(),
                device: result.as_ref().ok().map(|b| b.device().clone()),
                error: result.as_ref().err().cloned(),
            });
            opened.insert(key, result);
        }
    }

    let t0 = Instant::now();
    let outcome = gate::execute(
        plan,
        &RunOptions {
            open: options.open.clone(),
            progress: false,
            hold_fixtures_up_to: options.hold_fixtures_up_to,
            ..RunOptions::default()
        },
    )
    .map_err(anyhow::Error::msg)?;
    let gate_seconds = t0.elapsed().as_secs_f64();
    let count = |s: Status| outcome.cells.iter().filter(|c| c.status == s).count();
    let status = match (count(Status::Error), count(Status::Fail)) {
        (0, 0) => "OK",
        (0, _) => "FAIL",
        _ => "ERROR",
    };
    let in_process =
        InProcess { gate_seconds, status: status.into(), cells: outcome.cells.len(), ok: count(Status::Ok) };

    // Fixture by fixture, each opened as `run` opens it (held in memory up
    // to the same size) and let go before the next (the
    // sides' table is keyed, so the order does not show).
    let mut cells: Vec<_> = plan.cells.iter().collect();
    cells.sort_by(|a, b| (a.gate, &a.fixture).cmp(&(b.gate, &b.fixture)));
    type Read = Result<SideFrames, FixtureError>;
    let mut current: Option<((usize, String), Read)> = None;
    let mut sides: BTreeMap<SideKey, SideTiming> = BTreeMap::new();
    let hold = options.hold_fixtures_up_to.unwrap_or(DEFAULT_HOLD_BYTES);
    for cell in cells {
        for name in [&cell.a, &cell.b] {
            let key = (cell.gate, cell.feature.name.clone(), cell.fixture.clone(), name.clone());
            if sides.contains_key(&key) {
                continue;
            }
            let Ok(backend) = &opened[&(cell.gate, name.clone())] else { continue };
            if backend.device().kind == DeviceKind::Recorded || backend.supports(&cell.feature).is_err() {
                continue;
            }
            let gate = &plan.gates[cell.gate];
            let fixture = gate
                .fixtures
                .iter()
                .find(|f| f.name == cell.fixture)
                .ok_or_else(|| anyhow!("fixture {} is not in gate {}", cell.fixture, gate.name))?;
            let at = (cell.gate, cell.fixture.clone());
            if current.as_ref().is_none_or(|(held, _)| *held != at) {
                drop(current.take()); // the last fixture's frames go before the next is read
                current = Some((at, open_pair(&fixture.reference, &fixture.distorted, None, hold)));
            }
            let loaded = current.as_ref().map(|(_, loaded)| loaded.clone()).expect("just read");
            let frames = || loaded.clone();
            let request = SideRequest { feature: &cell.feature, fixture, frames: &frames, on_frame: &|| {} };
            let mut times = Vec::new();
            let mut error = None;
            let mut n_frames = 0;
            // One untimed run builds the kernels; then the repetitions.
            for i in 0..=options.repeat.max(1) {
                let t0 = Instant::now();
                match backend.compute(&request) {
                    Ok(out) => {
                        n_frames = out.frames;
                        if i > 0 {
                            times.push(t0.elapsed());
                        }
                    }
                    Err(e) => {
                        error = Some(e);
                        break;
                    }
                }
            }
            let seconds = Stats::of(&times).map_or(0.0, |s| s.median);
            let (fps, ms_per_frame) = rate(n_frames, seconds);
            sides.insert(
                key,
                SideTiming {
                    feature: cell.feature.name.clone(),
                    fixture: cell.fixture.clone(),
                    backend: name.clone(),
                    arch_id: backend.device().arch_id.clone(),
                    frames: n_frames,
                    seconds,
                    fps,
                    ms_per_frame,
                    speedup_vs_cpu: None,
                    error,
                },
            );
        }
    }
    let mut sides: Vec<SideTiming> = sides.into_values().collect();
    let cpu_seconds: HashMap<(String, String), f64> = sides
        .iter()
        .filter(|s| s.arch_id.starts_with("cpu:") && s.error.is_none())
        .map(|s| ((s.feature.clone(), s.fixture.clone()), s.seconds))
        .collect();
    for s in &mut sides {
        s.speedup_vs_cpu = cpu_seconds
            .get(&(s.feature.clone(), s.fixture.clone()))
            .filter(|_| s.error.is_none() && s.seconds > 0.0)
            .map(|cpu| cpu / s.seconds);
    }
    let totals = totals(&sides);
    Ok(GateBench {
        schema: "ulpgate-bench/1",
        mode: "gate",
        machine: Machine::here(),
        gates,
        process,
        open,
        in_process,
        sides,
        totals,
    })
}

/// Per (feature, backend): every fixture's frames and seconds added up.
fn totals(sides: &[SideTiming]) -> Vec<FeatureTotal> {
    let mut sums: BTreeMap<(String, String), (usize, f64, bool)> = BTreeMap::new();
    for s in sides.iter().filter(|s| s.error.is_none()) {
        let e = sums.entry((s.feature.clone(), s.backend.clone())).or_insert((0, 0.0, false));
        e.0 += s.frames;
        e.1 += s.seconds;
        e.2 |= s.arch_id.starts_with("cpu:");
    }
    let cpu: HashMap<String, f64> =
        sums.iter().filter(|(_, v)| v.2).map(|((feature, _), v)| (feature.clone(), v.1)).collect();
    sums.into_iter()
        .map(|((feature, backend), (frames, seconds, _))| {
            let (fps, ms_per_frame) = rate(frames, seconds);
            let speedup_vs_cpu = cpu.get(&feature).filter(|_| seconds > 0.0).map(|c| c / seconds);
            FeatureTotal { feature, backend, frames, seconds, fps, ms_per_frame, speedup_vs_cpu }
        })
        .collect()
}
