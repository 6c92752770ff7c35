//! Runs a plan: opens each backend once, reads each fixture once, computes
//! each (backend, feature, fixture) side once in parallel, then diffs the
//! sides of every cell.

use super::diff::{abs_diff_series, diff_metric};
use super::plan::{CellPlan, Plan};
use crate::backend::{self, Backend, DeviceInfo, DeviceKind, OpenOptions, SideOutput, SideRequest};
use crate::config::calibration::Tolerance;
use crate::config::{ResolvedBackend, ResolvedFixture, ResolvedGate};
use crate::fixture::{FixtureError, FrameSource, LoadedFixture};
use crate::report::model::{Cell, Series, SideTiming, Status, Timing};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub open: OpenOptions,
    /// Draw a progress bar on stderr.
    pub progress: bool,
}

/// What a run produced, before it becomes a report.
pub struct Outcome {
    pub cells: Vec<Cell>,
    pub timing: Timing,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct SideKey {
    gate: usize,
    backend: String,
    feature: String,
    fixture: String,
}

type Opened = Result<Arc<dyn Backend>, String>;
type FixtureSlot = OnceLock<Result<Arc<LoadedFixture>, FixtureError>>;

pub fn execute(plan: &Plan, options: &RunOptions) -> Outcome {
    let started = Instant::now();
    let fixtures: HashMap<(usize, String), FixtureSlot> =
        plan.cells.iter().map(|c| ((c.gate, c.fixture.clone()), OnceLock::new())).collect();
    // Read the fixtures while the backends open: a GPU backend's loader and
    // driver take tens of milliseconds to start, reading is I/O and copies.
    let backends = std::thread::scope(|scope| {
        scope.spawn(|| {
            for ((gate, name), slot) in &fixtures {
                slot.get_or_init(|| load_fixture(find_fixture(&plan.gates[*gate], name)));
            }
        });
        open_backends(plan, &options.open)
    });

    // The sides every runnable cell needs, each computed once.
    let mut needed = BTreeSet::new();
    for cell in &plan.cells {
        if readiness(plan, &backends, cell).is_ok() {
            for name in [&cell.a, &cell.b] {
                needed.insert(SideKey {
                    gate: cell.gate,
                    backend: name.clone(),
                    feature: cell.feature.name.clone(),
                    fixture: cell.fixture.clone(),
                });
            }
        }
    }
    let needed: Vec<SideKey> = needed.into_iter().collect();

    let bar = progress_bar(options.progress, &needed, plan, &backends);
    let sides: HashMap<SideKey, (Result<SideOutput, String>, f64)> = needed
        .par_iter()
        .map(|key| {
            let gate = &plan.gates[key.gate];
            let fixture = find_fixture(gate, &key.fixture);
            let feature = gate.features.iter().find(|f| f.name == key.feature).expect("planned feature");
            let backend = backends[&(key.gate, key.backend.clone())].as_ref().expect("ready backend");
            let slot = &fixtures[&(key.gate, key.fixture.clone())];
            let load = || slot.get_or_init(|| load_fixture(fixture)).clone();
            let on_frame = || bar.inc(1);
            let t0 = Instant::now();
            let request = SideRequest { feature, fixture, frames: &load, on_frame: &on_frame };
            let result = backend.compute(&request);
            (key.clone(), (result, t0.elapsed().as_secs_f64()))
        })
        .collect();
    bar.finish_and_clear();

    let cells = plan.cells.iter().map(|cell| assemble(plan, &backends, &sides, cell)).collect();
    let mut timing_sides: Vec<SideTiming> = sides
        .iter()
        .map(|(k, (r, secs))| SideTiming {
            backend: k.backend.clone(),
            feature: k.feature.clone(),
            fixture: k.fixture.clone(),
            frames: r.as_ref().map_or(0, |o| o.frames),
            seconds: *secs,
        })
        .collect();
    timing_sides.sort_by(|a, b| (&a.backend, &a.feature, &a.fixture).cmp(&(&b.backend, &b.feature, &b.fixture)));
    Outcome {
        cells,
        timing: Timing { wall_seconds: started.elapsed().as_secs_f64(), sides: timing_sides },
        warnings: Vec::new(),
    }
}

/// Opens every backend the plan uses, once per distinct declaration.
fn open_backends(plan: &Plan, options: &OpenOptions) -> HashMap<(usize, String), Opened> {
    let mut by_decl: HashMap<String, Opened> = HashMap::new();
    let mut out = HashMap::new();
    for cell in &plan.cells {
        for name in [&cell.a, &cell.b] {
            let key = (cell.gate, name.clone());
            if out.contains_key(&key) {
                continue;
            }
            let decl = &plan.gates[cell.gate].backends[name];
            let identity =
                format!("{name}|{:?}|{:?}|{:?}", decl.kind, decl.device, decl.command.as_ref().map(|c| &c.argv));
            let opened = by_decl.entry(identity).or_insert_with(|| backend::open(decl, options)).clone();
            out.insert(key, opened);
        }
    }
    out
}

fn decl<'a>(plan: &'a Plan, cell: &CellPlan, name: &str) -> &'a ResolvedBackend {
    &plan.gates[cell.gate].backends[name]
}

/// `Ok` when both sides can be computed; otherwise the cell's status and note.
fn readiness(
    plan: &Plan,
    backends: &HashMap<(usize, String), Opened>,
    cell: &CellPlan,
) -> Result<(), (Status, String)> {
    let mut problems = Vec::new();
    let mut required = false;
    for name in [&cell.a, &cell.b] {
        let reason = match &backends[&(cell.gate, name.clone())] {
            Err(reason) => Some(format!("{name} unavailable: {reason}")),
            Ok(b) => b.supports(&cell.feature).err().map(|r| format!("{name}: {r}")),
        };
        if let Some(r) = reason {
            required |= decl(plan, cell, name).required;
            let kind = if decl(plan, cell, name).required { "required" } else { "optional" };
            problems.push(format!("{r} ({kind})"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err((if required { Status::Error } else { Status::Skip }, problems.join("; ")))
    }
}

fn find_fixture<'a>(gate: &'a ResolvedGate, name: &str) -> &'a ResolvedFixture {
    gate.fixtures.iter().find(|f| f.name == name).expect("planned fixture")
}

fn load_fixture(fixture: &ResolvedFixture) -> Result<Arc<LoadedFixture>, FixtureError> {
    let loaded = LoadedFixture::load(&fixture.reference, &fixture.distorted, None)?;
    if let Some(expected) = fixture.expected_frames
        && expected != loaded.frames()
    {
        return Err(FixtureError::UnexpectedFrameCount { expected, actual: loaded.frames() });
    }
    Ok(Arc::new(loaded))
}

/// A progress bar over frames to score; hidden when not wanted.
fn progress_bar(
    visible: bool,
    sides: &[SideKey],
    plan: &Plan,
    backends: &HashMap<(usize, String), Opened>,
) -> ProgressBar {
    if !visible {
        return ProgressBar::hidden();
    }
    let total: u64 = sides
        .iter()
        .filter(|k| {
            backends[&(k.gate, k.backend.clone())].as_ref().is_ok_and(|b| b.device().kind != DeviceKind::Recorded)
        })
        .map(|k| estimate_frames(find_fixture(&plan.gates[k.gate], &k.fixture)) as u64)
        .sum();
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed}] {bar:32} {pos}/{len} frames scored ({per_sec})")
            .expect("static template"),
    );
    bar
}

/// Frames a fixture holds, from its declaration or file size (no reading).
fn estimate_frames(fixture: &ResolvedFixture) -> usize {
    match &fixture.reference {
        FrameSource::Synthetic { spec, .. } => spec.frames as usize,
        FrameSource::Raw { path, geometry } => {
            std::fs::metadata(path).map_or(0, |m| (m.len() / geometry.frame_bytes() as u64) as usize)
        }
        FrameSource::Y4m { .. } => fixture.expected_frames.unwrap_or(0),
    }
}

/// The tolerance of a cell: the pair's own, else the feature's default as
/// the calibration table adjusts it for each GPU side's arch_id (the looser
/// of two GPU sides decides).
pub fn decide_tolerance(gate: &ResolvedGate, cell: &CellPlan, devices: [Option<&DeviceInfo>; 2]) -> Tolerance {
    if let Some(t) = &cell.pair_tolerance {
        return Tolerance { abs: t.abs, source: format!("pair:{}-vs-{}", cell.a, cell.b) };
    }
    let default = Tolerance { abs: cell.feature.tolerance, source: "default".into() };
    let Some((_, table)) = &gate.calibration else {
        return default;
    };
    devices
        .into_iter()
        .flatten()
        .filter(|d| d.kind == DeviceKind::Gpu)
        .map(|d| table.lookup(&d.arch_id, &cell.feature.name, cell.feature.tolerance))
        .fold(None, |best: Option<Tolerance>, t| match best {
            Some(b) if b.abs >= t.abs => Some(b),
            _ => Some(t),
        })
        .unwrap_or(default)
}

/// A GPU side must have run on the device its backend was opened on, and
/// must have dispatched kernels there (ADR-0176 errata: never CPU twice).
fn check_provenance(backend: &dyn Backend, out: &SideOutput) -> Result<(), String> {
    if !backend.kind().is_gpu() {
        return Ok(());
    }
    let expected = backend.device();
    if out.device.kind != DeviceKind::Gpu {
        return Err(format!("reported a {:?} device, not a GPU", out.device.kind));
    }
    if out.device.arch_id != expected.arch_id || out.device.name != expected.name {
        return Err(format!(
            "ran on {} ({}), not on the selected {} ({})",
            out.device.name, out.device.arch_id, expected.name, expected.arch_id
        ));
    }
    match out.dispatches {
        Some(n) if n > 0 => Ok(()),
        _ => Err(format!("no kernel completed on {}: the side did not run on its GPU", expected.name)),
    }
}

fn assemble(
    plan: &Plan,
    backends: &HashMap<(usize, String), Opened>,
    sides: &HashMap<SideKey, (Result<SideOutput, String>, f64)>,
    cell: &CellPlan,
) -> Cell {
    let gate = &plan.gates[cell.gate];
    let mut out = Cell {
        id: cell.id(&plan.gates),
        gate: gate.name.clone(),
        feature: cell.feature.name.clone(),
        backend_a: cell.a.clone(),
        backend_b: cell.b.clone(),
        fixture: cell.fixture.clone(),
        status: Status::Error,
        note: String::new(),
        tolerance_abs: cell.feature.tolerance,
        tolerance_source: "default".into(),
        adr: cell.pair_tolerance.as_ref().map_or_else(|| cell.feature.adr.clone(), |t| t.adr.clone()),
        precision: cell.feature.precision,
        n_frames: None,
        metrics: cell.feature.metrics.clone(),
        per_metric_max_abs_diff: BTreeMap::new(),
        per_metric_mismatches: BTreeMap::new(),
        per_metric: BTreeMap::new(),
        device_a: None,
        device_b: None,
        worst_series: None,
    };
    let backend_of = |name: &String| backends[&(cell.gate, name.clone())].as_ref().ok();
    out.device_a = backend_of(&cell.a).map(|b| b.device().clone());
    out.device_b = backend_of(&cell.b).map(|b| b.device().clone());
    let tolerance = decide_tolerance(gate, cell, [out.device_a.as_ref(), out.device_b.as_ref()]);
    (out.tolerance_abs, out.tolerance_source) = (tolerance.abs, tolerance.source);

    if let Err((status, note)) = readiness(plan, backends, cell) {
        (out.status, out.note) = (status, note);
        return out;
    }
    let side = |name: &String| {
        let key = SideKey {
            gate: cell.gate,
            backend: name.clone(),
            feature: cell.feature.name.clone(),
            fixture: cell.fixture.clone(),
        };
        &sides[&key].0
    };
    let (a, b) = match (side(&cell.a), side(&cell.b)) {
        (Ok(a), Ok(b)) => (a, b),
        (ra, rb) => {
            let errors: Vec<String> = [(&cell.a, ra), (&cell.b, rb)]
                .into_iter()
                .filter_map(|(n, r)| r.as_ref().err().map(|e| format!("{n}: {e}")))
                .collect();
            out.note = errors.join("; ");
            return out;
        }
    };
    out.device_a = Some(a.device.clone());
    out.device_b = Some(b.device.clone());
    let mut problems = Vec::new();
    for (name, output) in [(&cell.a, a), (&cell.b, b)] {
        if let Err(e) = check_provenance(backend_of(name).expect("ready").as_ref(), output) {
            problems.push(format!("{name}: {e}"));
        }
    }
    if a.frames != b.frames {
        problems.push(format!("frame-count mismatch: {} has {} frames, {} has {}", cell.a, a.frames, cell.b, b.frames));
    }
    for (name, output) in [(&cell.a, a), (&cell.b, b)] {
        let missing: Vec<&str> =
            cell.feature.metrics.iter().filter(|m| output.scores.get(m).is_none()).map(String::as_str).collect();
        if !missing.is_empty() {
            problems.push(format!("{name} produced no {}", missing.join(", ")));
        }
    }
    if !problems.is_empty() {
        out.note = problems.join("; ");
        return out;
    }
    out.n_frames = Some(a.frames);
    let padded = |s: &[f64]| -> Vec<f64> {
        let mut v = s.to_vec();
        v.resize(a.frames, f64::NAN);
        v
    };
    let mut worst: Option<(usize, f64, &str)> = None;
    let mut notes = Vec::new();
    for metric in &cell.feature.metrics {
        let (va, vb) = (padded(a.scores.get(metric).expect("checked")), padded(b.scores.get(metric).expect("checked")));
        let d = diff_metric(&va, &vb, tolerance.abs);
        if d.mismatches > 0 {
            let rank = (d.mismatches, d.max_abs_diff.unwrap_or(f64::INFINITY));
            if worst.is_none_or(|(m, x, _)| (rank.0, rank.1) > (m, x)) {
                worst = Some((rank.0, rank.1, metric));
            }
            notes.push(mismatch_note(metric, &d, a.frames, tolerance.abs));
        }
        out.per_metric_max_abs_diff.insert(metric.clone(), d.max_abs_diff);
        out.per_metric_mismatches.insert(metric.clone(), d.mismatches);
        out.per_metric.insert(metric.clone(), d);
    }
    if let Some((_, _, metric)) = worst {
        out.status = Status::Fail;
        out.note = notes.join("; ");
        let (va, vb) = (padded(a.scores.get(metric).expect("checked")), padded(b.scores.get(metric).expect("checked")));
        out.worst_series = Some(Series { metric: metric.to_string(), abs_diff: abs_diff_series(&va, &vb) });
    } else {
        out.status = Status::Ok;
    }
    out
}

fn mismatch_note(metric: &str, d: &crate::report::model::MetricDiff, frames: usize, tol: f64) -> String {
    let mut s = format!("{metric}: {} of {frames} frames mismatch", d.mismatches);
    if let (Some(m), Some(f)) = (d.max_abs_diff, d.worst_frame)
        && m > tol
    {
        s.push_str(&format!(" (worst |Δ| {m:.3e} at frame {f}, tolerance {tol:.0e})"));
    }
    if let Some(f) = d.first_non_finite_frame {
        s.push_str(&format!(" ({} non-finite, first at frame {f})", d.non_finite));
    }
    s
}
