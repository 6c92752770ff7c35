//! Throughput on one clip, per feature and backend:
//!
//! - *upload included*: each frame pair read from the files (looping the
//!   clip as needed) and scored as a gate run scores it (GPU: upload,
//!   compute and readback with the pipeline's slots in flight);
//! - *upload excluded*: the frames resident (GPU: uploaded once into every
//!   slot, then only `compute` repeatedly with the slots in flight; CPU:
//!   frames already in memory), with as many workers as the upload-included
//!   figure, so the two differ by reading and upload alone;
//! - the host-to-device bandwidth through the `Gpu` trait, and what it
//!   bounds: `bandwidth / (bytes uploaded per frame pair)` frames per
//!   second, which the upload-included rate is compared with.

use super::meter::upload_bandwidth;
use super::read_ahead::score_read_ahead;
use super::{Machine, rate};
use crate::backend::external::{ExternalBackend, Inputs};
use crate::backend::gpu::{CountingGpu, Gpu};
use crate::backend::worker_threads;
use crate::backend::{self, Backend, DeviceInfo, OpenOptions};
use crate::calibration::time;
use crate::config::ResolvedBackend;
use crate::config::gate::BackendKind;
use crate::features::gpu::{IN_FLIGHT, WarmUp, run_workers, score_parallel, score_parallel_after_warm_up};
use crate::features::{self, Extractor, FeatureImpl, Options as FeatureOptions};
use crate::fixture::{FilePair, FixtureError, Frame, FrameReader, FrameSource, Geometry, PairSource};
use crate::scores::Scores;
use anyhow::{Context, Result, anyhow, bail, ensure};
use serde::Serialize;
use std::time::Instant;

pub struct Options {
    pub reference: FrameSource,
    pub distorted: FrameSource,
    /// Frame pairs timed per measurement.
    pub frames: usize,
    pub features: Vec<String>,
    /// The backends to measure, in order: built-in ones, and external
    /// commands (a real `vmaf`) declared by a gate or `--vmaf`.
    pub backends: Vec<ResolvedBackend>,
    pub open: OpenOptions,
    /// Bytes per upload of the bandwidth measurement.
    pub bandwidth_bytes: usize,
    /// Thread counts, each measured in turn (empty: the default). A GPU
    /// backend's host threads (default: what `run` uses), the CPU
    /// reference's workers over the frames (default 1), an external
    /// command's `{threads}` (default 1).
    pub threads: Vec<usize>,
    /// Times every measurement is taken, the backends in turn each time;
    /// a figure is the median of its rounds.
    pub rounds: usize,
}

/// Host-to-device bandwidth with some threads uploading at once.
#[derive(Debug, Serialize)]
pub struct Bandwidth {
    pub threads: usize,
    pub bytes_per_second: f64,
}

#[derive(Debug, Serialize)]
pub struct BackendFigures {
    pub backend: String,
    pub device: Option<DeviceInfo>,
    pub open_seconds: f64,
    /// Host to device through `Gpu` uploads (GPU backends), per thread
    /// count measured.
    pub h2d: Vec<Bandwidth>,
    pub error: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Throughput {
    pub feature: String,
    pub backend: String,
    /// Frame pairs timed.
    pub frames: usize,
    /// Host threads that read and uploaded frames (GPU backends), workers
    /// over the frames (cpu), or the external command's `{threads}`.
    pub threads: usize,
    /// cpu rows reading a clip from files: whether one more thread read the next
    /// pairs while the workers scored (libvmaf's model; only where a core
    /// was left for it, and never for a temporal feature: read_ahead.rs).
    pub reading_thread: Option<bool>,
    /// Frames read from the files and scored (external commands: whole
    /// processes, start-up and writing their output included).
    pub upload_included_fps: f64,
    pub upload_included_ms_per_frame: f64,
    /// Each round's upload-included figure (the one above is their median).
    pub upload_included_fps_rounds: Vec<f64>,
    /// Frames resident (not measured for external commands).
    pub upload_excluded_fps: Option<f64>,
    pub upload_excluded_ms_per_frame: Option<f64>,
    /// Bytes the pipeline uploads per frame pair (GPU backends).
    pub upload_bytes_per_pair: Option<u64>,
    /// GPU backends reading a clip from files: seconds from the workers' start
    /// until every one had its extractor and had scored its
    /// [`WARM_UP_FRAMES`] frames. Not in the fps above, which is the
    /// steady state after it.
    pub setup_seconds: Option<f64>,
    /// `h2d bytes per second / upload_bytes_per_pair`, same thread count.
    pub upload_bound_fps: Option<f64>,
    /// `upload_included_fps / upload_bound_fps`: 1 means upload-bound.
    pub upload_included_vs_bound: Option<f64>,
    /// cpu upload-included time over this one's, same feature and threads.
    pub speedup_vs_cpu: Option<f64>,
    /// Kernels that completed on the device (GPU backends): the proof it ran there.
    pub dispatches: Option<u64>,
    /// External commands: timed runs over the whole clip (after one
    /// untimed run, whose scores are compared with the cpu's).
    pub process_runs: Option<usize>,
    /// External commands: the largest |this - cpu| over every metric of
    /// the feature and every frame both scored (the cpu row of the same
    /// feature and threads).
    pub max_abs_diff_vs_cpu: Option<f64>,
    pub error: Option<String>,
}

impl Throughput {
    fn empty(feature: &str, backend: &str, frames: usize) -> Throughput {
        Throughput {
            feature: feature.into(),
            backend: backend.into(),
            frames,
            threads: 1,
            reading_thread: None,
            upload_included_fps: 0.0,
            upload_included_ms_per_frame: 0.0,
            upload_included_fps_rounds: Vec::new(),
            upload_excluded_fps: None,
            upload_excluded_ms_per_frame: None,
            upload_bytes_per_pair: None,
            setup_seconds: None,
            upload_bound_fps: None,
            upload_included_vs_bound: None,
            speedup_vs_cpu: None,
            dispatches: None,
            process_runs: None,
            max_abs_diff_vs_cpu: None,
            error: None,
        }
    }
}

/// The CPU reference against an external command (a real `vmaf`), one
/// feature at one thread count, both reading included.
#[derive(Debug, Serialize)]
pub struct Comparison {
    pub feature: String,
    pub threads: usize,
    pub cpu_fps: f64,
    pub backend: String,
    pub backend_fps: f64,
    /// `cpu_fps / backend_fps`: 1 or more means the CPU reference keeps up.
    pub cpu_over_backend: f64,
    pub max_abs_diff: Option<f64>,
}

#[derive(Debug, Serialize)]
pub struct ClipBench {
    pub schema: &'static str,
    pub mode: &'static str,
    pub machine: Machine,
    /// When the figures were taken (UTC, RFC 3339).
    pub date: String,
    pub reference: String,
    pub distorted: String,
    pub geometry: String,
    /// Frame pairs in the clip (it loops to `frames`).
    pub clip_frames: usize,
    pub frames: usize,
    /// Rounds each figure is the median of.
    pub rounds: usize,
    pub backends: Vec<BackendFigures>,
    pub throughput: Vec<Throughput>,
    pub comparisons: Vec<Comparison>,
}

/// Frames of a source, from the start again at its end.
struct Looping {
    source: FrameSource,
    reader: Box<dyn FrameReader>,
}

impl Looping {
    fn open(source: &FrameSource) -> Result<Looping> {
        Ok(Looping { source: source.clone(), reader: source.open()? })
    }

    fn next(&mut self) -> Result<Frame> {
        if let Some(f) = self.reader.next_frame()? {
            return Ok(f);
        }
        self.reader = self.source.open()?;
        self.reader.next_frame()?.ok_or_else(|| anyhow!("{}: no frames", self.source.describe()))
    }
}

/// A clip's files looped to `frames` pairs.
struct Looped<'a> {
    inner: &'a FilePair,
    frames: usize,
}

impl PairSource for Looped<'_> {
    fn geometry(&self) -> Geometry {
        self.inner.geometry()
    }

    fn frames(&self) -> usize {
        self.frames
    }

    fn read_bytes(&self, index: usize, distorted: bool, dst: &mut [u8]) -> Result<(), FixtureError> {
        self.inner.read_bytes(index % self.inner.frames(), distorted, dst)
    }

    fn frame(&self, index: usize, distorted: bool) -> Result<Frame, FixtureError> {
        self.inner.frame(index % self.inner.frames(), distorted)
    }

    fn frame_into<'a>(
        &self,
        index: usize,
        distorted: bool,
        frame: &'a mut Option<Frame>,
    ) -> Result<&'a Frame, FixtureError> {
        self.inner.frame_into(index % self.inner.frames(), distorted, frame)
    }
}

/// Both sides as one file pair (raw or Y4M), when they are files: frames
/// can then be read by index from several threads.
fn file_pair(options: &Options) -> Result<Option<FilePair>> {
    Ok(FilePair::open(&options.reference, &options.distorted, None)?)
}

fn geometry_of(options: &Options) -> Result<Geometry> {
    let (r, d) = (options.reference.open()?.geometry(), options.distorted.open()?.geometry());
    if r != d {
        bail!("the reference is {r}, the distorted {d}");
    }
    Ok(r)
}

/// Frame pairs in the clip: the files' frame count, or the frames
/// generated to the end (synthetic).
fn clip_frames(options: &Options) -> Result<usize> {
    if let Some(pair) = file_pair(options)? {
        return Ok(pair.frames());
    }
    let mut reader = options.reference.open()?;
    if let Some(n) = reader.frame_count_hint() {
        return Ok(n);
    }
    let mut n = 0;
    while reader.next_frame()?.is_some() {
        n += 1;
    }
    Ok(n)
}

/// Scores `frames` pairs read from the files, after `warm` untimed ones:
/// the seconds, and the scores (frame `i` is clip frame `i % clip_frames`).
fn upload_included(ext: &mut dyn Extractor, options: &Options, warm: usize) -> Result<(f64, Scores)> {
    let (mut r, mut d) = (Looping::open(&options.reference)?, Looping::open(&options.distorted)?);
    let mut scratch = Scores::default();
    for i in 0..warm {
        ext.extract(i, &r.next()?, &d.next()?, &mut scratch)?;
    }
    ext.flush(&mut scratch)?;
    let (mut r, mut d) = (Looping::open(&options.reference)?, Looping::open(&options.distorted)?);
    let mut scores = Scores::default();
    let t0 = Instant::now();
    for i in 0..options.frames {
        ext.extract(i, &r.next()?, &d.next()?, &mut scores)?;
    }
    ext.flush(&mut scores)?;
    Ok((t0.elapsed().as_secs_f64(), scores))
}

/// Frame pairs held in memory, looped to `frames` (the resident figure's
/// source for CPU extractors: no reading, no decoding).
struct Resident {
    pairs: Vec<(Frame, Frame)>,
    frames: usize,
}

impl PairSource for Resident {
    fn geometry(&self) -> Geometry {
        self.pairs[0].0.geometry
    }

    fn frames(&self) -> usize {
        self.frames
    }

    fn read_bytes(&self, index: usize, distorted: bool, dst: &mut [u8]) -> Result<(), FixtureError> {
        let frame = self.frame(index, distorted)?;
        let bytes = frame.samples.as_bytes();
        let src = bytes.get(..dst.len()).ok_or_else(|| {
            FixtureError::Invalid(format!("{} bytes asked of a {}-byte frame", dst.len(), bytes.len()))
        })?;
        dst.copy_from_slice(src);
        Ok(())
    }

    fn frame(&self, index: usize, distorted: bool) -> Result<Frame, FixtureError> {
        let (reference, dist) = &self.pairs[index % self.pairs.len()];
        Ok(if distorted { dist } else { reference }.clone())
    }
}

/// Scores `frames` pairs already in memory (GPU: on the device) with
/// `threads` workers, each with its own extractor, as many as the
/// upload-included figure's engine runs: the two figures then differ by
/// reading and upload alone, not by how many frames are in flight. Each
/// worker scores `warm` frames before the clock starts (when the last one
/// has), then its share of `frames`; the clock stops when every worker is
/// done.
fn upload_excluded(make: &MakeExtractor, gpu: bool, options: &Options, warm: usize, threads: usize) -> Result<f64> {
    let (mut r, mut d) = (Looping::open(&options.reference)?, Looping::open(&options.distorted)?);
    // A GPU worker uploads one pair into its slots; a CPU one loops over
    // the clip's first frames (at most 64), decoded once.
    let resident = if gpu { 1 } else { options.frames.clamp(1, 64) };
    let pairs: Vec<(Frame, Frame)> = (0..resident).map(|_| Ok((r.next()?, d.next()?))).collect::<Result<_>>()?;
    let threads = threads.clamp(1, options.frames.max(1));
    let ready = std::sync::OnceLock::new();
    let on_ready = || {
        let _ = ready.set(Instant::now());
    };
    let start = Instant::now();
    if !gpu {
        let source = Resident { pairs, frames: options.frames + threads * warm };
        let warm_up = WarmUp { frames: warm, on_ready: &on_ready };
        score_parallel_after_warm_up(make, &source, threads, &|| {}, Some(warm_up))?;
        return Ok(ready.get().copied().unwrap_or(start).elapsed().as_secs_f64());
    }
    let (reference, distorted) = &pairs[0];
    let results = run_workers(threads, Some(&on_ready), |k, arrival| {
        let share = (k + 1) * options.frames / threads - k * options.frames / threads;
        let mut ext = make()?;
        let driver = ext.gpu_driver().context("a GPU backend's extractor has no GPU driver")?;
        driver.make_resident(reference, distorted)?;
        driver.compute_resident(warm)?;
        arrival.arrive();
        driver.compute_resident(share)
    });
    let seconds = ready.get().copied().unwrap_or(start).elapsed().as_secs_f64();
    results.into_iter().collect::<Result<Vec<()>>>()?;
    Ok(seconds)
}

/// Makes one worker's extractor.
type MakeExtractor<'a> = dyn Fn() -> Result<Box<dyn Extractor>> + Sync + 'a;

/// Frames each worker of a GPU backend scores before the clock starts:
/// every slot used twice, so staging memory is allocated and merged
/// (features::gpu::IN_FLIGHT).
pub const WARM_UP_FRAMES: usize = 2 * IN_FLIGHT;

/// What one measurement of a built-in backend gives: its figures, and the
/// scores of the timed pass (the cpu's are what external commands are
/// compared with).
struct Measured {
    figures: Throughput,
    scores: Option<Scores>,
}

fn measure(
    imp: &FeatureImpl,
    backend: &dyn Backend,
    geometry: &Geometry,
    options: &Options,
    threads: Option<usize>,
    bandwidth: Option<f64>,
) -> Result<Measured> {
    let none = FeatureOptions::new();
    let warm = features::gpu::IN_FLIGHT;
    let mut t = Throughput::empty(imp.name, &backend.device().backend, options.frames);
    let mut scores = None;
    let (included, excluded) = match backend.gpu() {
        Some(gpu) => {
            ensure!(imp.has_gpu(), "{} has no GPU kernels yet", imp.name);
            let counting = CountingGpu::new(gpu);
            let make = || imp.gpu_extractor(counting.clone(), geometry, &none);
            let included = match file_pair(options)? {
                // The engine `run` uses: several threads, each reading frames
                // straight into its pinned staging, frames in flight on each
                // (temporal features too: they are windowed, features/gpu.rs).
                Some(pair) => {
                    let threads = threads.unwrap_or_else(|| worker_threads(backend.device(), options.frames));
                    t.threads = threads;
                    // What each worker's extractor uploads once (filter taps,
                    // say) is not per frame.
                    let setup = {
                        let before = counting.uploaded();
                        drop(make()?);
                        (counting.uploaded() - before) * threads as u64
                    };
                    // The steady state: the clock starts once every worker
                    // has its extractor (buffers, streams, staging) and has
                    // scored WARM_UP_FRAMES frames; that set-up is timed
                    // apart (a long clip pays it once).
                    let warm_frames = threads * WARM_UP_FRAMES;
                    let source = Looped { inner: &pair, frames: options.frames + warm_frames };
                    let before = counting.uploaded() + setup;
                    let ready = std::sync::OnceLock::new();
                    let start = Instant::now();
                    let warm_up = WarmUp {
                        frames: WARM_UP_FRAMES,
                        on_ready: &|| {
                            let _ = ready.set(Instant::now());
                        },
                    };
                    score_parallel_after_warm_up(&make, &source, threads, &|| {}, Some(warm_up))?;
                    let ready = ready.get().copied().unwrap_or(start);
                    t.setup_seconds = Some((ready - start).as_secs_f64());
                    t.upload_bytes_per_pair =
                        Some((counting.uploaded() - before) / (options.frames + warm_frames) as u64);
                    ready.elapsed().as_secs_f64()
                }
                _ => {
                    let mut ext = make()?;
                    let before = counting.uploaded();
                    let (seconds, _) = upload_included(ext.as_mut(), options, warm)?;
                    // Every pair scored so far, warm-up included, counts once.
                    t.upload_bytes_per_pair = Some((counting.uploaded() - before) / (options.frames + warm) as u64);
                    seconds
                }
            };
            let excluded = upload_excluded(&make, true, options, warm, t.threads)?;
            t.dispatches = Some(counting.dispatches());
            if counting.dispatches() == 0 {
                bail!("no kernel completed on {}: nothing ran on the GPU", counting.device().name);
            }
            (included, excluded)
        }
        None => {
            if backend.kind() != BackendKind::Cpu {
                bail!("{} backends are not benchmarked on clips", backend.kind().as_str());
            }
            // `--threads` workers over the frames, as libvmaf's `--threads`
            // spreads frames over its pool (one by default), and, where a
            // core is left for it, one more thread that reads the next pairs
            // meanwhile, as libvmaf's main thread does (read_ahead.rs). With
            // every core a worker's, a reader only competes with them (at 2
            // workers on 2 cores: adm -17%, psnr -35%, 2026-11-28), so each
            // worker reads its own pairs. So does a temporal feature's: it is
            // windowed, so each worker takes a run of frames and reads the
            // earlier ones it needs (libvmaf keeps its TEMPORAL extractors,
            // float_motion, on one thread).
            let threads = threads.unwrap_or(1);
            t.threads = threads;
            let make = || imp.cpu_extractor(geometry, &none);
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            let reading_thread = !imp.temporal && threads < cores;
            let score = |source: &dyn PairSource| {
                if !reading_thread {
                    score_parallel(&make, source, threads, &|| {})
                } else {
                    score_read_ahead(&make, source, threads)
                }
            };
            let included = match file_pair(options)? {
                Some(pair) => {
                    t.reading_thread = Some(reading_thread);
                    score(&Looped { inner: &pair, frames: threads * 2 })?;
                    let t0 = Instant::now();
                    let timed = score(&Looped { inner: &pair, frames: options.frames })?;
                    let seconds = t0.elapsed().as_secs_f64();
                    scores = Some(timed);
                    seconds
                }
                _ => {
                    let (seconds, timed) = upload_included(make()?.as_mut(), options, warm)?;
                    scores = Some(timed);
                    seconds
                }
            };
            let excluded = upload_excluded(&make, false, options, warm, threads)?;
            (included, excluded)
        }
    };
    (t.upload_included_fps, t.upload_included_ms_per_frame) = rate(options.frames, included);
    let (fps, ms) = rate(options.frames, excluded);
    (t.upload_excluded_fps, t.upload_excluded_ms_per_frame) = (Some(fps), Some(ms));
    if let (Some(bw), Some(bytes)) = (bandwidth, t.upload_bytes_per_pair)
        && bytes > 0
    {
        let bound = bw / bytes as f64;
        t.upload_bound_fps = Some(bound);
        t.upload_included_vs_bound = Some(t.upload_included_fps / bound);
    }
    Ok(Measured { figures: t, scores })
}

/// The files an external command reads: the clip's, as they are.
fn external_inputs(options: &Options, geometry: Geometry) -> Result<Inputs> {
    let path = |source: &FrameSource| -> Result<std::path::PathBuf> {
        match source {
            FrameSource::Raw { path, .. } | FrameSource::Y4m { path } => {
                std::path::absolute(path).with_context(|| path.display().to_string())
            }
            FrameSource::Synthetic { .. } => bail!("an external command reads files, not synthetic frames"),
        }
    };
    Ok(Inputs { reference: path(&options.reference)?, distorted: path(&options.distorted)?, geometry })
}

/// An external command timed as whole processes over the clip: in the
/// first round one untimed run (files in the page cache, the program
/// loaded; its scores are returned for the comparison with the cpu), then
/// enough timed runs to cover `frames` pairs. Each run must report the
/// clip's frame count.
fn measure_external(
    imp: &FeatureImpl,
    external: &ExternalBackend,
    inputs: &Inputs,
    clip_frames: usize,
    options: &Options,
    threads: usize,
    first_round: bool,
) -> Result<(Throughput, Option<Scores>)> {
    let name = external.program_name();
    let score = || -> Result<crate::scores::RecordedScores> {
        let recorded = external.score_files(imp.name, inputs, threads).map_err(|e| anyhow!(e))?;
        if recorded.frames != clip_frames {
            bail!("frame-count mismatch: `{name}` reported {} frames of a {clip_frames}-frame clip", recorded.frames);
        }
        Ok(recorded)
    };
    let mut first = None;
    if first_round {
        let recorded = score()?;
        for metric in (imp.metrics)(&FeatureOptions::new())? {
            if recorded.scores.get(&metric).is_none() {
                bail!("`{name}` printed no `{metric}` for {}", imp.name);
            }
        }
        first = Some(recorded.scores);
    }
    let runs = options.frames.div_ceil(clip_frames).max(1);
    let t0 = Instant::now();
    for _ in 0..runs {
        score()?;
    }
    let seconds = t0.elapsed().as_secs_f64();
    let mut t = Throughput::empty(imp.name, &external.device().backend, runs * clip_frames);
    t.threads = threads;
    t.process_runs = Some(runs);
    (t.upload_included_fps, t.upload_included_ms_per_frame) = rate(runs * clip_frames, seconds);
    Ok((t, first))
}

/// The largest |a - b| over `metrics` and the frames both have (a non-finite
/// value on either side counts as infinite).
fn max_abs_diff(a: &Scores, b: &Scores, metrics: &[String]) -> Option<f64> {
    let mut worst: Option<f64> = None;
    for metric in metrics {
        let (Some(x), Some(y)) = (a.get(metric), b.get(metric)) else { continue };
        for (x, y) in x.iter().zip(y) {
            let d = (x - y).abs();
            let d = if d.is_finite() { d } else { f64::INFINITY };
            worst = Some(worst.map_or(d, |w| w.max(d)));
        }
    }
    worst
}

/// The median of some figures (the mean of the middle two for an even count).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

/// The thread counts to measure: those given, else one default run.
fn thread_counts(options: &Options) -> Vec<Option<usize>> {
    if options.threads.is_empty() { vec![None] } else { options.threads.iter().map(|&t| Some(t.max(1))).collect() }
}

pub fn run(options: &Options) -> Result<ClipBench> {
    if options.frames == 0 {
        bail!("--frames must be at least 1");
    }
    let geometry = geometry_of(options)?;
    let clip_frames = clip_frames(options)?;
    let mut impls = Vec::new();
    for name in &options.features {
        impls.push(features::find(name).ok_or_else(|| anyhow!("unknown feature `{name}`"))?);
    }
    // Every backend opened first (and a GPU's bandwidth measured at each
    // thread count), then the measurements thread count by thread count and
    // feature by feature, each backend in turn: the figures compared with
    // each other are taken one right after the other.
    struct Opened<'a> {
        decl: &'a ResolvedBackend,
        backend: std::sync::Arc<dyn Backend>,
        external: Option<ExternalBackend>,
        /// Host-to-device bytes per second per thread count (GPU backends).
        bandwidth: Vec<(Option<usize>, f64)>,
    }
    let mut backends = Vec::new();
    let mut opened = Vec::new();
    for decl in &options.backends {
        let name = &decl.name;
        let t0 = Instant::now();
        let result = backend::open(decl, &options.open);
        let open_seconds = t0.elapsed().as_secs_f64();
        let backend = match result {
            Ok(b) => b,
            Err(e) => {
                backends.push(BackendFigures {
                    backend: name.clone(),
                    device: None,
                    open_seconds,
                    h2d: Vec::new(),
                    error: Some(e),
                });
                continue;
            }
        };
        let mut figures = BackendFigures {
            backend: name.clone(),
            device: Some(backend.device().clone()),
            open_seconds,
            h2d: Vec::new(),
            error: None,
        };
        let mut bandwidth = Vec::new();
        if let Some(gpu) = backend.gpu() {
            for threads in thread_counts(options) {
                // Measured with as many threads as the engine feeds the
                // device with, so the bound is the one the upload-included
                // rate runs against.
                let feeders = threads.unwrap_or_else(|| worker_threads(backend.device(), options.frames));
                let bps = upload_bandwidth(gpu.as_ref(), options.bandwidth_bytes, 9, feeders)
                    .with_context(|| format!("{name}: bandwidth"))?;
                figures.h2d.push(Bandwidth { threads: feeders, bytes_per_second: bps });
                bandwidth.push((threads, bps));
            }
        }
        let external = match decl.kind {
            BackendKind::External => Some(ExternalBackend::new(decl).map_err(|e| anyhow!(e))?),
            _ => None,
        };
        backends.push(figures);
        opened.push(Opened { decl, backend, external, bandwidth });
    }
    let mut throughput: Vec<Throughput> = Vec::new();
    // Scores of the first round's timed passes: the cpu's per (feature,
    // threads), and each external row's (by its index in `throughput`).
    let mut cpu_scores: Vec<(String, usize, Scores)> = Vec::new();
    let mut external_scores: Vec<(usize, Scores)> = Vec::new();
    // Each row's figures per round: (upload included, resident) fps.
    let mut rounds: Vec<Vec<(f64, Option<f64>)>> = Vec::new();
    for round in 0..options.rounds.max(1) {
        let mut row = 0;
        for threads in thread_counts(options) {
            for imp in &impls {
                for o in &opened {
                    let name = &o.decl.name;
                    let failed = |e: anyhow::Error| Throughput {
                        error: Some(format!("{e:#}")),
                        threads: threads.unwrap_or(1),
                        ..Throughput::empty(imp.name, name, options.frames)
                    };
                    let t = if let Some(external) = &o.external {
                        let threads = threads.unwrap_or(1);
                        let measured = external_inputs(options, geometry).and_then(|inputs| {
                            measure_external(imp, external, &inputs, clip_frames, options, threads, round == 0)
                        });
                        match measured {
                            Ok((t, scores)) => {
                                if let Some(scores) = scores {
                                    external_scores.push((row, scores));
                                }
                                t
                            }
                            Err(e) => failed(e),
                        }
                    } else {
                        let bandwidth = o.bandwidth.iter().find(|(t, _)| *t == threads).map(|(_, bps)| *bps);
                        match measure(imp, o.backend.as_ref(), &geometry, options, threads, bandwidth) {
                            Ok(m) => {
                                if let (Some(scores), BackendKind::Cpu, 0) = (m.scores, o.decl.kind, round) {
                                    cpu_scores.push((imp.name.to_string(), m.figures.threads, scores));
                                }
                                m.figures
                            }
                            Err(e) => failed(e),
                        }
                    };
                    if round == 0 {
                        throughput.push(t);
                        rounds.push(Vec::new());
                    } else if t.error.is_some() && throughput[row].error.is_none() {
                        throughput[row] = t;
                    } else if t.error.is_none() {
                        rounds[row].push((t.upload_included_fps, t.upload_excluded_fps));
                    }
                    if round == 0 && throughput[row].error.is_none() {
                        let t = &throughput[row];
                        rounds[row].push((t.upload_included_fps, t.upload_excluded_fps));
                    }
                    row += 1;
                }
            }
        }
    }
    // Each figure the median of its rounds.
    for (t, figures) in throughput.iter_mut().zip(&rounds) {
        if t.error.is_some() || figures.is_empty() {
            continue;
        }
        t.upload_included_fps_rounds = figures.iter().map(|f| f.0).collect();
        t.upload_included_fps = median(figures.iter().map(|f| f.0).collect());
        t.upload_included_ms_per_frame = 1e3 / t.upload_included_fps;
        let resident: Vec<f64> = figures.iter().filter_map(|f| f.1).collect();
        if !resident.is_empty() {
            let fps = median(resident);
            (t.upload_excluded_fps, t.upload_excluded_ms_per_frame) = (Some(fps), Some(1e3 / fps));
        }
        if let Some(bound) = t.upload_bound_fps {
            t.upload_included_vs_bound = Some(t.upload_included_fps / bound);
        }
    }
    // Against the cpu row of the same feature and threads.
    let is_cpu = |t: &Throughput| {
        options.backends.iter().any(|b| b.name == t.backend && b.kind == BackendKind::Cpu) && t.error.is_none()
    };
    let cpu_rows: Vec<(String, usize, f64, f64)> = throughput
        .iter()
        .filter(|t| is_cpu(t))
        .map(|t| (t.feature.clone(), t.threads, t.upload_included_ms_per_frame, t.upload_included_fps))
        .collect();
    let cpu_of = |t: &Throughput| cpu_rows.iter().find(|(f, n, _, _)| *f == t.feature && *n == t.threads);
    for t in &mut throughput {
        if let Some((_, _, ms, _)) = cpu_of(t)
            && t.error.is_none()
            && t.upload_included_ms_per_frame > 0.0
        {
            t.speedup_vs_cpu = Some(ms / t.upload_included_ms_per_frame);
        }
    }
    let mut comparisons = Vec::new();
    for (index, scores) in &external_scores {
        let t = &mut throughput[*index];
        let Some(imp) = features::find(&t.feature) else { continue };
        let metrics = (imp.metrics)(&FeatureOptions::new())?;
        // The cpu's timed pass looped the clip: its first frames are the clip's.
        if let Some((_, _, cpu)) = cpu_scores.iter().find(|(f, n, _)| *f == t.feature && *n == t.threads) {
            t.max_abs_diff_vs_cpu = max_abs_diff(scores, cpu, &metrics);
        }
        if let Some((_, _, _, cpu_fps)) = cpu_rows.iter().find(|(f, n, _, _)| *f == t.feature && *n == t.threads)
            && t.upload_included_fps > 0.0
        {
            comparisons.push(Comparison {
                feature: t.feature.clone(),
                threads: t.threads,
                cpu_fps: *cpu_fps,
                backend: t.backend.clone(),
                backend_fps: t.upload_included_fps,
                cpu_over_backend: cpu_fps / t.upload_included_fps,
                max_abs_diff: t.max_abs_diff_vs_cpu,
            });
        }
    }
    let order: Vec<&String> = options.features.iter().collect();
    comparisons.sort_by_key(|c| (c.backend.clone(), order.iter().position(|f| **f == c.feature), c.threads));
    Ok(ClipBench {
        schema: "ulpgate-bench/2",
        mode: "clip",
        machine: Machine::here(),
        date: time::date_time(time::now_epoch()),
        reference: options.reference.describe(),
        distorted: options.distorted.describe(),
        geometry: geometry.to_string(),
        clip_frames,
        frames: options.frames,
        rounds: options.rounds.max(1),
        backends,
        throughput,
        comparisons,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::synthetic::{Content, Distortion};
    use crate::fixture::{Chroma, SyntheticSpec};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn options(frames: usize) -> Options {
        let spec = SyntheticSpec {
            width: 48,
            height: 32,
            frames: 5,
            bit_depth: 8,
            chroma: Chroma::Yuv420,
            seed: 3,
            content: Content::default(),
            distortion: Distortion::default(),
        };
        let src = |distorted| FrameSource::Synthetic { spec: spec.clone(), distorted };
        Options {
            reference: src(false),
            distorted: src(true),
            frames,
            features: vec!["psnr".into()],
            backends: Vec::new(),
            open: OpenOptions::default(),
            bandwidth_bytes: 1 << 20,
            threads: Vec::new(),
            rounds: 1,
        }
    }

    /// An extractor that counts the frames it scores.
    struct Counting(Arc<AtomicUsize>);

    impl Extractor for Counting {
        fn extract(&mut self, _: usize, _: &Frame, _: &Frame, _: &mut Scores) -> Result<()> {
            self.0.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
    }

    #[test]
    fn the_resident_figure_runs_as_many_workers_as_the_upload_included_one() {
        let (made, scored) = (AtomicUsize::new(0), Arc::new(AtomicUsize::new(0)));
        let make = || -> Result<Box<dyn Extractor>> {
            made.fetch_add(1, Ordering::Relaxed);
            Ok(Box::new(Counting(scored.clone())))
        };
        let seconds = upload_excluded(&make, false, &options(7), 2, 3).unwrap();
        assert!(seconds > 0.0);
        assert_eq!(made.load(Ordering::Relaxed), 3, "one extractor per worker");
        assert_eq!(scored.load(Ordering::Relaxed), 7 + 3 * 2, "the timed frames and each worker's warm-up");
    }
}
