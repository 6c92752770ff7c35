//! Runs a plan: opens each backend once, reads each fixture once, computes
//! each (backend, feature, fixture) side once in parallel ([`compute`], which
//! `calibrate collect` shares), then diffs the sides of every cell. A
//! fixture's frames are held from its first side to its last, not for the
//! whole run; a fixture larger than the run's `--fixture-memory` is not
//! held at all, each side reading its frames from the files.

use super::diff::{abs_diff_series, diff_metric};
use super::plan::{CellPlan, Plan};
use crate::backend::{self, Backend, DeviceInfo, DeviceKind, OpenOptions, SideFrames, SideOutput, SideRequest};
use crate::calibration::offsets::Offsets;
use crate::config::calibration::Tolerance;
use crate::config::{ResolvedBackend, ResolvedFixture, ResolvedGate};
use crate::fixture::{Fingerprint, FixtureError};
use crate::report::model::{ArchOverride, Calibrated, Cell, Series, SideTiming, Status, Timing};
use crate::scores::Scores;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub open: OpenOptions,
    /// Draw a progress bar on stderr.
    pub progress: bool,
    /// Score at most this many frames of each fixture (`calibrate collect
    /// --frames`); a fixture's declared `frames` is then checked against
    /// the smaller of the two.
    pub max_frames: Option<usize>,
    /// `--arch-id BACKEND=ID`: the arch_id the calibration lookup (and the
    /// offset tier) uses for that GPU backend instead of the detected one.
    pub arch_ids: BTreeMap<String, String>,
    /// `--gpu-calibrated`: fitted offsets added to GPU sides before diffing.
    pub offsets: Option<Arc<Offsets>>,
    /// `run --vulkan-device`: a selector that names no device fails the
    /// run (a usage error, exit 2) before any side is computed, where
    /// otherwise the vulkan backend would only be unavailable. Checked
    /// while the fixtures are read, not before (tens of milliseconds).
    pub check_vulkan_device: bool,
    /// Keep each fixture's [`Fingerprint`] (its frames' SHA-256) for
    /// [`Computed::fingerprint`] (`calibrate collect`'s manifest): taken
    /// when the last job that reads the fixture ends, just before its
    /// frames are let go as in any run.
    pub fingerprint_fixtures: bool,
    /// `--fixture-memory`: the largest fixture, in bytes of frames (both
    /// files), held in memory and shared by its sides; larger ones are
    /// read frame by frame by each side ([`crate::fixture::open_pair`]).
    /// `None`: [`crate::fixture::DEFAULT_HOLD_BYTES`].
    pub hold_fixtures_up_to: Option<u64>,
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
type ReadFixture = Result<SideFrames, FixtureError>;

/// One fixture's frames: read once (ahead while the backends open, else by
/// the first side that needs them; a side that needs them while they are
/// being read waits), shared by every side, and let go when the last job
/// that reads them ends, so that a run holds the fixtures in flight rather
/// than every fixture of its gates. (A fixture above the run's size is
/// only opened here; each side reads its frames from the files.) A side reads under the slot's lock on
/// one of rayon's workers, so reading must not wait on rayon's pool (a
/// worker waiting there can take up a job that waits on this lock): the
/// fixture readers are sequential (`fixture::synthetic` included).
#[derive(Default)]
struct FixtureSlot {
    read: Mutex<Option<ReadFixture>>,
    /// Jobs that read this fixture and have not ended.
    users: AtomicUsize,
    /// What is kept of the frames after they go, where the run asks (or
    /// the error reading them again for it gave).
    fingerprint: std::sync::OnceLock<Result<Fingerprint, FixtureError>>,
}

impl FixtureSlot {
    /// The fixture as read, reading it with `read` if no one has.
    fn get(&self, read: impl FnOnce() -> ReadFixture) -> ReadFixture {
        self.lock().get_or_insert_with(read).clone()
    }

    /// Reads the fixture if no one has; an error stays for its sides.
    fn read_ahead(&self, read: impl FnOnce() -> ReadFixture) {
        self.lock().get_or_insert_with(read);
    }

    /// The fixture as read, if it was (and not let go since).
    fn peek(&self) -> Option<ReadFixture> {
        self.lock().clone()
    }

    /// A job that read the fixture ended; after the last the frames go,
    /// fingerprinted first where `fingerprint` says (a reading error
    /// stays: it is what the run reports). A side's own `Arc` keeps them
    /// until that side is done with them.
    fn job_ended(&self, fingerprint: bool) {
        if self.users.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.let_go(fingerprint);
        }
    }

    fn let_go(&self, fingerprint: bool) {
        let mut read = self.lock();
        if let Some(Ok(fixture)) = &*read {
            if fingerprint {
                // Hashing is sequential: nothing here waits on rayon's pool.
                self.fingerprint.get_or_init(|| Fingerprint::of(fixture.as_ref()));
            }
            *read = None;
        }
    }

    /// The fingerprint taken when the frames went, else the reading error.
    fn fingerprint(&self) -> Option<Result<Fingerprint, FixtureError>> {
        match (self.fingerprint.get(), self.peek()) {
            (Some(print), _) => Some(print.clone()),
            (None, Some(Err(e))) => Some(Err(e)),
            (None, _) => None,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<ReadFixture>> {
        self.read.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Every side a plan's runnable cells need, computed once each, with the
/// backends and fixtures they came from.
pub struct Computed {
    backends: HashMap<(usize, String), Opened>,
    fixtures: BTreeMap<(usize, String), FixtureSlot>,
    sides: HashMap<SideKey, ComputedSide>,
}

/// A side as computed: its output, the seconds its pass took, and the
/// features computed in the same pass (none: alone).
struct ComputedSide {
    result: Result<SideOutput, String>,
    seconds: f64,
    joint: Vec<String>,
}

impl Computed {
    /// The backend `name` of gate `gate` as opened (`Err`: why it could not be).
    pub fn backend(&self, gate: usize, name: &str) -> &Opened {
        &self.backends[&(gate, name.to_string())]
    }

    /// A computed side; `None` when no runnable cell needed it.
    pub fn side(&self, cell: &CellPlan, backend: &str) -> Option<&Result<SideOutput, String>> {
        let key = SideKey {
            gate: cell.gate,
            backend: backend.to_string(),
            feature: cell.feature.name.clone(),
            fixture: cell.fixture.clone(),
        };
        self.sides.get(&key).map(|side| &side.result)
    }

    /// A fixture's [`Fingerprint`], or the error reading it gave (`None`:
    /// no side read it, or the run did not ask: see
    /// [`RunOptions::fingerprint_fixtures`]).
    pub fn fingerprint(&self, gate: usize, name: &str) -> Option<Result<Fingerprint, FixtureError>> {
        self.fixtures.get(&(gate, name.to_string())).and_then(FixtureSlot::fingerprint)
    }

    /// `Ok` when both sides of `cell` could be computed; otherwise the
    /// status and note the cell gets.
    pub fn readiness(&self, plan: &Plan, cell: &CellPlan) -> Result<(), (Status, String)> {
        readiness(plan, &self.backends, cell)
    }
}

/// Opens the plan's backends and computes every side its runnable cells
/// need, in parallel, reading each fixture once. `Err` only for a
/// `--vulkan-device` that names nothing ([`RunOptions::check_vulkan_device`]).
pub fn compute(plan: &Plan, options: &RunOptions) -> Result<Computed, String> {
    // In (gate, name) order: the order the jobs take them in (`jobs`).
    let fixtures: BTreeMap<(usize, String), FixtureSlot> =
        plan.cells.iter().map(|c| ((c.gate, c.fixture.clone()), FixtureSlot::default())).collect();
    let read = |gate: usize, name: &str| {
        crate::trace::timed(&format!("fixture {name} read"), || {
            load_fixture(find_fixture(&plan.gates[gate], name), options)
        })
    };
    // Read the first fixtures while the backends open: a GPU backend's
    // loader and driver take tens of milliseconds to start, reading is I/O
    // and copies. Only until they are open, so that the frames in memory
    // stay those of the fixtures in flight; the sides read the rest.
    let opened = AtomicBool::new(false);
    let backends = std::thread::scope(|scope| {
        scope.spawn(|| {
            for ((gate, name), slot) in &fixtures {
                if opened.load(Ordering::Acquire) {
                    break;
                }
                slot.read_ahead(|| read(*gate, name));
            }
        });
        let backends = open_all_backends(plan, options);
        opened.store(true, Ordering::Release);
        backends
    })?;
    crate::trace::mark("backends open");

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
    let jobs = jobs(&needed);
    for job in &jobs {
        fixtures[&(job[0].gate, job[0].fixture.clone())].users.fetch_add(1, Ordering::Relaxed);
    }
    // Read ahead for cells that turned out not runnable.
    fixtures.values().filter(|slot| slot.users.load(Ordering::Relaxed) == 0).for_each(|slot| slot.let_go(false));

    let bar = progress_bar(options.progress, &needed, plan, &backends, options.max_frames);
    let sides: HashMap<SideKey, ComputedSide> = jobs
        .par_iter()
        .flat_map_iter(|job| {
            let gate = &plan.gates[job[0].gate];
            let fixture = find_fixture(gate, &job[0].fixture);
            let backend = backends[&(job[0].gate, job[0].backend.clone())].as_ref().expect("ready backend");
            let slot = &fixtures[&(job[0].gate, job[0].fixture.clone())];
            let load = || slot.get(|| read(job[0].gate, &job[0].fixture));
            let progress = JobProgress::new(&bar);
            let on_frame = || progress.frame();
            let requests: Vec<SideRequest> = job
                .iter()
                .map(|key| {
                    let feature = gate.features.iter().find(|f| f.name == key.feature).expect("planned feature");
                    SideRequest { feature, fixture, frames: &load, on_frame: &on_frame }
                })
                .collect();
            let computed = compute_job(backend.as_ref(), job, &requests, &|| progress.rewind());
            slot.job_ended(options.fingerprint_fixtures);
            computed
        })
        .collect();
    bar.finish_and_clear();
    crate::trace::mark("every side computed");
    Ok(Computed { backends, fixtures, sides })
}

/// The backends a plan names, opened; `Err` for a `--vulkan-device` that
/// names nothing where the options say to check it.
fn open_all_backends(plan: &Plan, options: &RunOptions) -> Result<HashMap<(usize, String), Opened>, String> {
    // The check's instance waits in `_spare` for the vulkan backend that
    // opens next: one loader start, not two.
    let _spare = match (&options.open.vulkan_device, options.check_vulkan_device) {
        (Some(selector), true) => Some(
            crate::backend::vulkan::check_selector(selector).map_err(|e| format!("--vulkan-device {selector}: {e}"))?,
        ),
        _ => None,
    };
    Ok(crate::trace::timed("backends opened", || open_backends(plan, &options.open)))
}

/// The needed sides as units of work: sides of one backend and fixture
/// whose features have a joint pass ([`crate::features::JointImpl`]) make
/// one job, in the pass's order; every other side is a job of its own.
/// Jobs come in (gate, fixture) order, each fixture's together, so that
/// the workers go through the fixtures a few at a time and each fixture's
/// frames can go once its jobs are done ([`FixtureSlot`]).
fn jobs(needed: &[SideKey]) -> Vec<Vec<SideKey>> {
    let mut taken = vec![false; needed.len()];
    let mut out = Vec::new();
    for (i, key) in needed.iter().enumerate() {
        if taken[i] {
            continue;
        }
        let same_pass = |k: &SideKey| (k.gate, &k.backend, &k.fixture) == (key.gate, &key.backend, &key.fixture);
        let joint = crate::features::joint_implementations().find_map(|joint| {
            let members: Option<Vec<usize>> =
                joint.features.iter().map(|f| needed.iter().position(|k| same_pass(k) && k.feature == *f)).collect();
            members.filter(|m| m.contains(&i) && m.iter().all(|&j| !taken[j]))
        });
        let members = joint.unwrap_or_else(|| vec![i]);
        for &j in &members {
            taken[j] = true;
        }
        out.push(members.into_iter().map(|j| needed[j].clone()).collect());
    }
    out.sort_by(|a: &Vec<SideKey>, b| (a[0].gate, &a[0].fixture).cmp(&(b[0].gate, &b[0].fixture)));
    out
}

/// A job's frames on the progress bar. A joint pass that fails after
/// scoring some frames takes them back (`rewind`) before each side scores
/// alone, so the bar counts every frame once and never passes its length.
struct JobProgress<'a> {
    bar: &'a ProgressBar,
    counted: AtomicU64,
}

impl<'a> JobProgress<'a> {
    fn new(bar: &'a ProgressBar) -> Self {
        JobProgress { bar, counted: AtomicU64::new(0) }
    }

    fn frame(&self) {
        self.counted.fetch_add(1, Ordering::Relaxed);
        self.bar.inc(1);
    }

    fn rewind(&self) {
        self.bar.dec(self.counted.swap(0, Ordering::Relaxed));
    }
}

/// Computes one job's sides: a joint pass where the backend has one for
/// them and it succeeds, else each side alone (in parallel); `rewind` takes
/// back the frames a failed joint pass reported.
fn compute_job(
    backend: &dyn Backend,
    job: &[SideKey],
    requests: &[SideRequest<'_>],
    rewind: &dyn Fn(),
) -> Vec<(SideKey, ComputedSide)> {
    let t0 = Instant::now();
    let joint = if requests.len() > 1 { backend.compute_joint(requests) } else { None };
    if let Some(Err(e)) = &joint {
        rewind();
        // Each side's own pass gives it its outcome (this error included,
        // where it is a side's); the trace says why the pass ran twice.
        if crate::trace::enabled() {
            let names: Vec<&str> = job.iter().map(|k| k.feature.as_str()).collect();
            crate::trace::mark(&format!("joint pass {} failed, each side alone: {e}", names.join(" + ")));
        }
    }
    if let Some(Ok(outputs)) = joint {
        let seconds = t0.elapsed().as_secs_f64();
        let features: Vec<String> = job.iter().map(|k| k.feature.clone()).collect();
        return job
            .iter()
            .zip(outputs)
            .map(|(key, output)| {
                let joint: Vec<String> = features.iter().filter(|f| **f != key.feature).cloned().collect();
                trace_side(key, &joint);
                (key.clone(), ComputedSide { result: Ok(output), seconds, joint })
            })
            .collect();
    }
    job.par_iter()
        .zip(requests)
        .map(|(key, request)| {
            let t0 = Instant::now();
            let result = backend.compute(request);
            trace_side(key, &[]);
            (key.clone(), ComputedSide { result, seconds: t0.elapsed().as_secs_f64(), joint: Vec::new() })
        })
        .collect()
}

fn trace_side(key: &SideKey, joint: &[String]) {
    if crate::trace::enabled() {
        let with = if joint.is_empty() { String::new() } else { format!(" (one pass with {})", joint.join(", ")) };
        crate::trace::mark(&format!("side {}/{}/{} computed{with}", key.backend, key.feature, key.fixture));
    }
}

/// Computes the sides ([`compute`]) and assembles every cell.
pub fn execute(plan: &Plan, options: &RunOptions) -> Result<Outcome, String> {
    let started = Instant::now();
    let computed = compute(plan, options)?;
    let lookup = ArchLookup::new(&computed.backends, &options.arch_ids);
    let cells = plan.cells.iter().map(|cell| assemble(plan, &computed, &lookup, options, cell)).collect();
    let mut timing_sides: Vec<SideTiming> = computed
        .sides
        .iter()
        .map(|(k, side)| SideTiming {
            backend: k.backend.clone(),
            feature: k.feature.clone(),
            fixture: k.fixture.clone(),
            frames: side.result.as_ref().map_or(0, |o| o.frames),
            seconds: side.seconds,
            joint: side.joint.clone(),
        })
        .collect();
    timing_sides.sort_by(|a, b| (&a.backend, &a.feature, &a.fixture).cmp(&(&b.backend, &b.feature, &b.fixture)));
    Ok(Outcome {
        cells,
        timing: Timing { wall_seconds: started.elapsed().as_secs_f64(), sides: timing_sides },
        warnings: lookup.warnings,
    })
}

/// The arch_id each GPU backend's calibration lookup uses: the one its
/// device reports, or `--arch-id`'s. An override that differs from the
/// detected id is used (the operator asked for it) but never silently: a
/// warning goes into the report and every affected cell records both ids.
struct ArchLookup {
    /// (gate, backend) → (detected, used) for overridden GPU backends.
    overridden: HashMap<(usize, String), (String, String)>,
    warnings: Vec<String>,
}

impl ArchLookup {
    fn new(backends: &HashMap<(usize, String), Opened>, arch_ids: &BTreeMap<String, String>) -> Self {
        let mut overridden = HashMap::new();
        let mut warnings: Vec<String> = Vec::new();
        let mut keys: Vec<&(usize, String)> = backends.keys().collect();
        keys.sort();
        for key in keys {
            let Some(id) = arch_ids.get(&key.1) else { continue };
            let warning = match &backends[key] {
                Ok(b) if b.device().kind == DeviceKind::Gpu => {
                    let detected = b.device().arch_id.clone();
                    overridden.insert(key.clone(), (detected.clone(), id.clone()));
                    (detected != *id).then(|| {
                        format!(
                            "--arch-id {}={id} contradicts the detected device {} ({detected}): cells of {} look up \
                             calibration for {id}, not for the device that computed them",
                            key.1,
                            b.device().name,
                            key.1
                        )
                    })
                }
                Ok(b) => Some(format!(
                    "--arch-id {}={id}: {} is not a GPU backend; the override was not used",
                    key.1,
                    b.kind().as_str()
                )),
                Err(reason) => Some(format!(
                    "--arch-id {}={id}: {} is unavailable ({reason}); the override was not used",
                    key.1, key.1
                )),
            };
            if let Some(w) = warning
                && !warnings.contains(&w)
            {
                warnings.push(w);
            }
        }
        ArchLookup { overridden, warnings }
    }

    /// The arch_id to look `device` (a side of a cell of `gate`) up by.
    fn id(&self, gate: usize, device: &DeviceInfo) -> String {
        match self.overridden.get(&(gate, device.backend.clone())) {
            Some((_, used)) => used.clone(),
            None => device.arch_id.clone(),
        }
    }

    fn overrides(&self, gate: usize, names: [&String; 2]) -> Vec<ArchOverride> {
        let mut out: Vec<ArchOverride> = Vec::new();
        for name in names {
            if let Some((detected, used)) = self.overridden.get(&(gate, name.clone()))
                && !out.iter().any(|o| o.backend == *name)
            {
                out.push(ArchOverride { backend: name.clone(), detected: detected.clone(), used: used.clone() });
            }
        }
        out
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
    if !problems.is_empty() {
        return Err((if required { Status::Error } else { Status::Skip }, problems.join("; ")));
    }
    // libvmaf itself refuses this input (cambi below its minimum size): no
    // backend has a score to compare, whatever is required.
    let fixture = find_fixture(&plan.gates[cell.gate], &cell.fixture);
    if let Some(imp) = crate::features::find(&cell.feature.name)
        && let Some(geometry) = fixture.reference.geometry()
        && let Some(why) = imp.refusal(&geometry, &cell.feature.options)
    {
        return Err((Status::Skip, why));
    }
    Ok(())
}

fn find_fixture<'a>(gate: &'a ResolvedGate, name: &str) -> &'a ResolvedFixture {
    gate.fixtures.iter().find(|f| f.name == name).expect("planned fixture")
}

/// A fixture's frames as its sides read them: held in memory up to the
/// run's size, else read from the files as each side scores them
/// ([`crate::fixture::open_pair`]).
fn load_fixture(fixture: &ResolvedFixture, options: &RunOptions) -> ReadFixture {
    let max_frames = options.max_frames;
    let hold = options.hold_fixtures_up_to.unwrap_or(crate::fixture::DEFAULT_HOLD_BYTES);
    let loaded = crate::fixture::open_pair(&fixture.reference, &fixture.distorted, max_frames, hold)?;
    if let Some(declared) = fixture.expected_frames
        && let expected = max_frames.map_or(declared, |m| declared.min(m))
        && expected != loaded.frames()
    {
        return Err(FixtureError::UnexpectedFrameCount { expected, actual: loaded.frames() });
    }
    Ok(loaded)
}

/// A progress bar over frames to score; hidden when not wanted.
fn progress_bar(
    visible: bool,
    sides: &[SideKey],
    plan: &Plan,
    backends: &HashMap<(usize, String), Opened>,
    max_frames: Option<usize>,
) -> ProgressBar {
    if !visible {
        return ProgressBar::hidden();
    }
    let total: u64 = sides
        .iter()
        .filter(|k| {
            backends[&(k.gate, k.backend.clone())].as_ref().is_ok_and(|b| b.device().kind != DeviceKind::Recorded)
        })
        .map(|k| {
            estimate_frames(find_fixture(&plan.gates[k.gate], &k.fixture)).min(max_frames.unwrap_or(usize::MAX)) as u64
        })
        .sum();
    frames_bar(total)
}

/// The progress bar of frames scored, on standard error (`run`,
/// `calibrate collect`, `score`): `total` frames expected.
pub fn frames_bar(total: u64) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed}] {bar:32} {pos}/{len} frames scored ({per_sec:0}, ~{eta} left)",
        )
        .expect("static template"),
    );
    bar
}

/// Frames a fixture holds, from its declaration or its reference's size or
/// frame headers (no reading of frames).
fn estimate_frames(fixture: &ResolvedFixture) -> usize {
    fixture.expected_frames.or_else(|| fixture.reference.frame_count()).unwrap_or(0)
}

/// The tolerance of a cell: the pair's own, else the feature's default as
/// the calibration table adjusts it for the arch_id of each GPU side
/// (`gpu_arch_ids`: detected, or `--arch-id`'s; the looser of two GPU sides
/// decides).
pub fn decide_tolerance(gate: &ResolvedGate, cell: &CellPlan, gpu_arch_ids: &[String]) -> Tolerance {
    if let Some(t) = &cell.pair_tolerance {
        return Tolerance { abs: t.abs, source: format!("pair:{}-vs-{}", cell.a, cell.b) };
    }
    let default = Tolerance { abs: cell.feature.tolerance, source: "default".into() };
    let Some((_, table)) = &gate.calibration else {
        return default;
    };
    gpu_arch_ids
        .iter()
        .map(|id| table.lookup(id, &cell.feature.name, cell.feature.tolerance))
        .fold(None, |best: Option<Tolerance>, t| match best {
            Some(b) if b.abs >= t.abs => Some(b),
            _ => Some(t),
        })
        .unwrap_or(default)
}

/// A GPU side must have run on the device its backend was opened on, and
/// must have completed kernels there, at least one a frame: every GPU
/// pipeline dispatches for each frame it scores, so fewer means frames
/// scored elsewhere (ADR-0176 errata: never CPU twice).
pub(crate) fn check_provenance(backend: &dyn Backend, out: &SideOutput) -> Result<(), String> {
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
    match out.dispatches.unwrap_or(0) {
        0 => Err(format!("no kernel completed on {}: the side did not run on its GPU", expected.name)),
        n if n < out.frames as u64 => Err(format!(
            "{} completed on {} for {}: some frames were not scored on its GPU",
            crate::report::plural(n as usize, "kernel"),
            expected.name,
            crate::report::plural(out.frames, "frame")
        )),
        _ => Ok(()),
    }
}

fn assemble(plan: &Plan, computed: &Computed, lookup: &ArchLookup, options: &RunOptions, cell: &CellPlan) -> Cell {
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
        arch_overrides: lookup.overrides(cell.gate, [&cell.a, &cell.b]),
        worst_series: None,
        calibrated: None,
    };
    let backend_of = |name: &String| computed.backend(cell.gate, name).as_ref().ok();
    out.device_a = backend_of(&cell.a).map(|b| b.device().clone());
    out.device_b = backend_of(&cell.b).map(|b| b.device().clone());
    let gpu_ids: Vec<String> = [&out.device_a, &out.device_b]
        .into_iter()
        .flatten()
        .filter(|d| d.kind == DeviceKind::Gpu)
        .map(|d| lookup.id(cell.gate, d))
        .collect();
    let tolerance = decide_tolerance(gate, cell, &gpu_ids);
    (out.tolerance_abs, out.tolerance_source) = (tolerance.abs, tolerance.source);

    if let Err((status, note)) = computed.readiness(plan, cell) {
        (out.status, out.note) = (status, note);
        return out;
    }
    let side = |name: &String| computed.side(cell, name).expect("a runnable cell's sides were computed");
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

    // The offset tier: GPU sides get their fitted offsets, the reference
    // (CPU, recorded, external) never does.
    let mut notes = Vec::new();
    let (block, calibrated_scores) = match &options.offsets {
        Some(offsets) if [a, b].iter().any(|o| o.device.kind == DeviceKind::Gpu) => {
            let mut block = Calibrated::new(offsets.file());
            let [sa, sb] = [(&cell.a, a), (&cell.b, b)].map(|(name, output)| {
                calibrate_side(offsets, lookup.id(cell.gate, &output.device), name, cell, output, &mut block)
            });
            (Some(block), Some((sa, sb)))
        }
        _ => (None, None),
    };
    let (scores_a, scores_b) = match &calibrated_scores {
        Some((sa, sb)) => (sa, sb),
        None => (&a.scores, &b.scores),
    };
    let compared = compare(cell, scores_a, scores_b, a.frames, tolerance.abs);
    if let Some(mut block) = block {
        let raw = compare(cell, &a.scores, &b.scores, a.frames, tolerance.abs);
        block.status_raw = raw.status();
        block.per_metric_max_abs_diff_raw = raw.per_metric.iter().map(|(k, d)| (k.clone(), d.max_abs_diff)).collect();
        block.per_metric_mismatches_raw = raw.per_metric.iter().map(|(k, d)| (k.clone(), d.mismatches)).collect();
        if !block.missing.is_empty() {
            notes.push(format!(
                "no fitted offset in {} for {}: raw scores compared there",
                block.offsets_file,
                block.missing.join("; ")
            ));
        }
        out.calibrated = Some(block);
    }
    out.status = compared.status();
    notes.extend(compared.notes);
    if let Some(metric) = &compared.worst {
        let (va, vb) = (padded(scores_a, metric, a.frames), padded(scores_b, metric, a.frames));
        out.worst_series = Some(Series { metric: metric.to_string(), abs_diff: abs_diff_series(&va, &vb) });
    }
    out.note = notes.join("; ");
    for (metric, d) in compared.per_metric {
        out.per_metric_max_abs_diff.insert(metric.clone(), d.max_abs_diff);
        out.per_metric_mismatches.insert(metric.clone(), d.mismatches);
        out.per_metric.insert(metric, d);
    }
    out
}

/// A GPU side's scores with its fitted offsets added (matched by the
/// lookup arch_id, the backend's name, the feature and the metric); other
/// sides unchanged. Records what was applied, and what had no offset.
fn calibrate_side(
    offsets: &Offsets,
    arch_id: String,
    name: &str,
    cell: &CellPlan,
    output: &SideOutput,
    block: &mut Calibrated,
) -> Scores {
    let mut scores = output.scores.clone();
    if output.device.kind != DeviceKind::Gpu {
        return scores;
    }
    let mut missing = Vec::new();
    for metric in &cell.feature.metrics {
        match offsets.get(&arch_id, name, &cell.feature.name, metric) {
            Some(applied) => {
                scores.offset(metric, applied.offset);
                block.offsets.entry(name.to_string()).or_default().insert(metric.clone(), applied.clone());
            }
            None => missing.push(metric.as_str()),
        }
    }
    if !missing.is_empty() {
        block.missing.push(format!("{name} on {arch_id} ({})", missing.join(", ")));
    }
    scores
}

/// The per-metric diffs of two sides' scores.
struct Compared {
    per_metric: BTreeMap<String, crate::report::model::MetricDiff>,
    /// The metric with the most mismatches (then the largest |Δ|), if any.
    worst: Option<String>,
    notes: Vec<String>,
}

impl Compared {
    fn status(&self) -> Status {
        if self.worst.is_some() { Status::Fail } else { Status::Ok }
    }
}

fn padded(scores: &Scores, metric: &str, frames: usize) -> Vec<f64> {
    let mut v = scores.get(metric).expect("checked: every side produced every metric").to_vec();
    v.resize(frames, f64::NAN);
    v
}

fn compare(cell: &CellPlan, a: &Scores, b: &Scores, frames: usize, tolerance: f64) -> Compared {
    let mut worst: Option<(usize, f64, &str)> = None;
    let mut notes = Vec::new();
    let mut per_metric = BTreeMap::new();
    for metric in &cell.feature.metrics {
        let d = diff_metric(&padded(a, metric, frames), &padded(b, metric, frames), tolerance);
        if d.mismatches > 0 {
            let rank = (d.mismatches, d.max_abs_diff.unwrap_or(f64::INFINITY));
            if worst.is_none_or(|(m, x, _)| (rank.0, rank.1) > (m, x)) {
                worst = Some((rank.0, rank.1, metric));
            }
            notes.push(mismatch_note(metric, &d, frames, tolerance));
        }
        per_metric.insert(metric.clone(), d);
    }
    Compared { per_metric, worst: worst.map(|(_, _, m)| m.to_string()), notes }
}

fn mismatch_note(metric: &str, d: &crate::report::model::MetricDiff, frames: usize, tol: f64) -> String {
    let mut s = format!("{metric}: {} of {frames} frames mismatch", d.mismatches);
    if let (Some(m), Some(f)) = (d.max_abs_diff, d.worst_frame)
        && m > tol
    {
        let (m, tol) = (crate::report::number_against(m, tol), crate::report::tolerance(tol));
        s.push_str(&format!(" (worst |Δ| {m} at frame {f}, tolerance {tol})"));
    }
    if let Some(f) = d.first_non_finite_frame {
        s.push_str(&format!(" ({} non-finite, first at frame {f})", d.non_finite));
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_mismatch_note_gives_the_tolerance_as_given() {
        let d = crate::report::model::MetricDiff {
            max_abs_diff: Some(4.91e-7),
            mismatches: 1,
            worst_frame: Some(3),
            ..Default::default()
        };
        // Rounded to one digit, 4.9e-7 read "5e-7", above the worst |Δ|.
        assert_eq!(
            super::mismatch_note("psnr_y", &d, 12, 4.9e-7),
            "psnr_y: 1 of 12 frames mismatch (worst |Δ| 4.91e-7 at frame 3, tolerance 4.9e-7)"
        );
    }

    use super::*;

    fn key(gate: usize, backend: &str, feature: &str, fixture: &str) -> SideKey {
        SideKey { gate, backend: backend.into(), feature: feature.into(), fixture: fixture.into() }
    }

    #[test]
    fn jobs_join_a_joint_passs_features_of_one_backend_and_fixture() {
        let mut needed = vec![
            key(0, "cpu", "float_ms_ssim", "a"),
            key(0, "cpu", "float_ssim", "a"),
            key(0, "cpu", "psnr", "a"),
            key(0, "vulkan", "float_ms_ssim", "a"),
            key(0, "vulkan", "float_ms_ssim", "b"),
            key(0, "vulkan", "float_ssim", "a"),
            key(0, "vulkan", "float_ssim", "c"),
            key(1, "vulkan", "float_ssim", "a"),
        ];
        needed.sort();
        let jobs = jobs(&needed);
        let names = |job: &Vec<SideKey>| {
            job.iter().map(|k| format!("{}/{}/{}/{}", k.gate, k.backend, k.feature, k.fixture)).collect::<Vec<_>>()
        };
        let got: Vec<Vec<String>> = jobs.iter().map(names).collect();
        // The joint pass's order (float_ssim first); everything else alone;
        // every side exactly once.
        assert!(got.contains(&vec!["0/cpu/float_ssim/a".to_string(), "0/cpu/float_ms_ssim/a".to_string()]));
        assert!(got.contains(&vec!["0/vulkan/float_ssim/a".to_string(), "0/vulkan/float_ms_ssim/a".to_string()]));
        for alone in ["0/cpu/psnr/a", "0/vulkan/float_ms_ssim/b", "0/vulkan/float_ssim/c", "1/vulkan/float_ssim/a"] {
            assert!(got.contains(&vec![alone.to_string()]), "{alone}: {got:?}");
        }
        assert_eq!(jobs.iter().map(Vec::len).sum::<usize>(), needed.len());
    }

    #[test]
    fn jobs_take_each_fixture_together() {
        // The sides' own order (backend first) interleaves the fixtures.
        let needed: BTreeSet<SideKey> = ["cpu", "vulkan"]
            .into_iter()
            .flat_map(|b| ["psnr", "vif"].map(move |f| (b, f)))
            .flat_map(|(b, f)| ["a", "b", "c"].map(move |x| key(0, b, f, x)))
            .chain([key(1, "cpu", "psnr", "a")])
            .collect();
        let needed: Vec<SideKey> = needed.into_iter().collect();
        let order: Vec<(usize, String)> = jobs(&needed).iter().map(|j| (j[0].gate, j[0].fixture.clone())).collect();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(order, sorted);
        assert_eq!(order.len(), needed.len());
    }

    fn tiny_fixture() -> SideFrames {
        let geometry =
            crate::fixture::Geometry { width: 4, height: 4, bit_depth: 8, chroma: crate::fixture::Chroma::Yuv420 };
        Arc::new(crate::fixture::LoadedFixture { geometry, reference: Vec::new(), distorted: Vec::new() })
    }

    #[test]
    fn a_fixture_is_read_once_and_let_go_after_its_last_job() {
        let slot = FixtureSlot::default();
        slot.users.store(2, Ordering::Relaxed);
        let reads = AtomicUsize::new(0);
        let read = || {
            reads.fetch_add(1, Ordering::Relaxed);
            Ok(tiny_fixture())
        };
        slot.read_ahead(read);
        let first = slot.get(read).expect("read");
        let second = slot.get(read).expect("read");
        assert!(Arc::ptr_eq(&first, &second));
        assert_eq!(reads.load(Ordering::Relaxed), 1);
        slot.job_ended(false);
        assert!(slot.peek().is_some(), "one job still reads it");
        slot.job_ended(false);
        assert!(slot.peek().is_none(), "the last job ended");
        // A side that still holds the frames keeps them.
        assert_eq!(first.geometry().width, 4);
    }

    #[test]
    fn a_fingerprint_is_taken_as_the_frames_go_and_reading_errors_stay() {
        let fixture = crate::features::testutil::synthetic(8, crate::fixture::Chroma::Yuv420, 3);
        let expected = Fingerprint::of(&fixture).unwrap();
        let printed = FixtureSlot::default();
        printed.users.store(2, Ordering::Relaxed);
        printed.read_ahead(|| Ok(Arc::new(fixture)));
        printed.job_ended(true);
        assert_eq!(printed.fingerprint(), None, "taken only when the last job ends");
        printed.job_ended(true);
        assert!(printed.peek().is_none(), "the frames went");
        assert_eq!(printed.fingerprint(), Some(Ok(expected)));

        let plain = FixtureSlot::default();
        plain.users.store(1, Ordering::Relaxed);
        plain.read_ahead(|| Ok(tiny_fixture()));
        plain.job_ended(false);
        assert_eq!(plain.fingerprint(), None, "not asked for");

        let failed = FixtureSlot::default();
        failed.users.store(1, Ordering::Relaxed);
        let error = FixtureError::UnexpectedFrameCount { expected: 2, actual: 1 };
        assert_eq!(failed.get(|| Err(error.clone())).err(), Some(error.clone()));
        failed.job_ended(true);
        assert_eq!(failed.peek().and_then(Result::err), Some(error.clone()));
        assert_eq!(failed.fingerprint(), Some(Err(error)));
    }

    /// A backend whose joint pass scores every side `joint`'s value (fails
    /// with its error; is absent for `None`) and whose alone pass scores
    /// every side 1. Either pass reports its one frame per side, the joint
    /// pass twice (as a pass that fails after its first frames does).
    struct Fake {
        device: DeviceInfo,
        joint: Option<Result<f64, String>>,
    }

    fn scored(value: f64) -> SideOutput {
        let mut scores = Scores::default();
        scores.record("m", 0, value);
        SideOutput { scores, frames: 1, device: crate::backend::cpu::device_info("fake"), dispatches: None }
    }

    impl Backend for Fake {
        fn kind(&self) -> crate::config::gate::BackendKind {
            crate::config::gate::BackendKind::Cpu
        }
        fn device(&self) -> &DeviceInfo {
            &self.device
        }
        fn supports(&self, _: &crate::config::ResolvedFeature) -> Result<(), String> {
            Ok(())
        }
        fn compute(&self, request: &SideRequest<'_>) -> Result<SideOutput, String> {
            (request.on_frame)();
            Ok(scored(1.0))
        }
        fn compute_joint(&self, requests: &[SideRequest<'_>]) -> Option<Result<Vec<SideOutput>, String>> {
            let joint = self.joint.clone()?;
            for request in requests {
                (request.on_frame)();
                (request.on_frame)();
            }
            Some(joint.map(|v| requests.iter().map(|_| scored(v)).collect()))
        }
    }

    /// The sides [`compute_job`] gives with a [`Fake`] backend, and the
    /// frames its progress counted.
    fn computed(joint: Option<Result<f64, String>>) -> (Vec<(SideKey, f64, Vec<String>)>, u64) {
        let backend = Fake { device: crate::backend::cpu::device_info("fake"), joint };
        let feature = |name: &str| crate::config::ResolvedFeature {
            name: name.into(),
            metrics: vec!["m".into()],
            tolerance: 0.0,
            adr: String::new(),
            precision: Default::default(),
            options: Default::default(),
            golden_file: String::new(),
        };
        let features = [feature("float_ssim"), feature("float_ms_ssim")];
        let source = || crate::fixture::FrameSource::Y4m { path: "x.y4m".into() };
        let fixture = ResolvedFixture {
            name: "a".into(),
            reference: source(),
            distorted: source(),
            golden: None,
            expected_frames: None,
        };
        let frames = || Err(FixtureError::Missing { path: "x.y4m".into() });
        let bar = ProgressBar::hidden();
        let progress = JobProgress::new(&bar);
        let on_frame = || progress.frame();
        let requests: Vec<SideRequest> = features
            .iter()
            .map(|feature| SideRequest { feature, fixture: &fixture, frames: &frames, on_frame: &on_frame })
            .collect();
        let job = [key(0, "fake", "float_ssim", "a"), key(0, "fake", "float_ms_ssim", "a")];
        let sides = compute_job(&backend, &job, &requests, &|| progress.rewind())
            .into_iter()
            .map(|(k, side)| (k, side.result.expect("scored").scores.get("m").expect("m")[0], side.joint))
            .collect();
        (sides, bar.position())
    }

    /// A Vulkan backend opened on `device` that computes nothing: only
    /// [`check_provenance`] reads it.
    struct OpenedOn(DeviceInfo);

    impl Backend for OpenedOn {
        fn kind(&self) -> crate::config::gate::BackendKind {
            crate::config::gate::BackendKind::Vulkan
        }
        fn device(&self) -> &DeviceInfo {
            &self.0
        }
        fn supports(&self, _: &crate::config::ResolvedFeature) -> Result<(), String> {
            Ok(())
        }
        fn compute(&self, _: &SideRequest<'_>) -> Result<SideOutput, String> {
            Err("not computed here".into())
        }
    }

    #[test]
    fn a_gpu_side_is_taken_only_with_its_kernels_run_on_its_device() {
        use crate::backend::DeviceKind;
        let gpu = |name: &str| DeviceInfo::named("vulkan", DeviceKind::Gpu, name, "vulkan:0x10005:0x0");
        let backend = OpenedOn(gpu("llvmpipe"));
        let side = |device: DeviceInfo, dispatches: Option<u64>| SideOutput {
            scores: Scores::default(),
            frames: 3,
            device,
            dispatches,
        };
        assert_eq!(check_provenance(&backend, &side(gpu("llvmpipe"), Some(3))), Ok(()));
        for (out, why) in [
            (side(gpu("llvmpipe"), None), "no kernel completed on llvmpipe: the side did not run on its GPU"),
            (side(gpu("llvmpipe"), Some(0)), "no kernel completed on llvmpipe: the side did not run on its GPU"),
            (side(crate::backend::cpu::device_info("vulkan"), Some(3)), "reported a Cpu device, not a GPU"),
            (side(gpu("other"), Some(3)), "ran on other (vulkan:0x10005:0x0), not on the selected llvmpipe"),
            (side(gpu("llvmpipe"), Some(2)), "2 kernels completed on llvmpipe for 3 frames: some frames were not"),
        ] {
            let got = check_provenance(&backend, &out).expect_err(why);
            assert!(got.starts_with(why), "{got}");
        }
        // A CPU backend's side needs no kernel.
        let cpu = Fake { device: crate::backend::cpu::device_info("cpu"), joint: None };
        assert_eq!(check_provenance(&cpu, &side(crate::backend::cpu::device_info("cpu"), None)), Ok(()));
    }

    #[test]
    fn a_joint_pass_that_fails_or_is_absent_leaves_each_side_its_own_pass() {
        for joint in [None, Some(Err("the pass failed".to_string()))] {
            let (sides, frames) = computed(joint.clone());
            for (k, value, with) in sides {
                assert_eq!((value, with.len()), (1.0, 0), "{joint:?}: {}", k.feature);
            }
            // The failed pass's frames are taken back: each side's one
            // frame alone is all the bar counts.
            assert_eq!(frames, 2, "{joint:?}");
        }
        let (sides, frames) = computed(Some(Ok(2.0)));
        assert_eq!(frames, 4);
        assert_eq!(sides[0].0.feature, "float_ssim");
        assert_eq!((sides[0].1, sides[0].2.clone()), (2.0, vec!["float_ms_ssim".to_string()]));
        assert_eq!((sides[1].1, sides[1].2.clone()), (2.0, vec!["float_ssim".to_string()]));
    }
}
