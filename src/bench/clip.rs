//! Throughput on one clip, per feature and backend:
//!
//! - *upload included*: each frame pair read from the files (looping the
//!   clip as needed) and scored as a gate run scores it (GPU: upload,
//!   compute and readback with the pipeline's slots in flight);
//! - *upload excluded*: the frames resident (GPU: uploaded once into every
//!   slot, then only `compute` repeatedly with the slots in flight; CPU:
//!   frames already in memory);
//! - the host-to-device bandwidth through the `Gpu` trait, and what it
//!   bounds: `bandwidth / (bytes uploaded per frame pair)` frames per
//!   second, which the upload-included rate is compared with.

use super::meter::upload_bandwidth;
use super::{Machine, rate};
use crate::backend::gpu::{CountingGpu, Gpu};
use crate::backend::worker_threads;
use crate::backend::{self, Backend, DeviceInfo, OpenOptions};
use crate::config::ResolvedBackend;
use crate::config::gate::BackendKind;
use crate::features::gpu::{IN_FLIGHT, score_parallel};
use crate::features::{self, Extractor, FeatureImpl, Options as FeatureOptions};
use crate::fixture::{FixtureError, Frame, FrameReader, FrameSource, Geometry, PairSource, RawPair};
use crate::scores::Scores;
use anyhow::{Context, Result, anyhow, bail};
use serde::Serialize;
use std::time::Instant;

pub struct Options {
    pub reference: FrameSource,
    pub distorted: FrameSource,
    /// Frame pairs timed per measurement.
    pub frames: usize,
    pub features: Vec<String>,
    pub backends: Vec<String>,
    pub open: OpenOptions,
    /// Bytes per upload of the bandwidth measurement.
    pub bandwidth_bytes: usize,
    /// Host threads feeding a GPU backend (default: what `run` uses).
    pub threads: Option<usize>,
}

#[derive(Debug, Serialize)]
pub struct BackendFigures {
    pub backend: String,
    pub device: Option<DeviceInfo>,
    pub open_seconds: f64,
    /// Host to device through `Gpu` uploads (GPU backends), bytes/second,
    /// with `h2d_threads` threads uploading at once.
    pub h2d_bytes_per_second: Option<f64>,
    pub h2d_threads: usize,
    pub error: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Throughput {
    pub feature: String,
    pub backend: String,
    pub frames: usize,
    /// Host threads that read and uploaded frames (GPU backends, raw clips).
    pub threads: usize,
    pub upload_included_fps: f64,
    pub upload_included_ms_per_frame: f64,
    pub upload_excluded_fps: f64,
    pub upload_excluded_ms_per_frame: f64,
    /// Bytes the pipeline uploads per frame pair (GPU backends).
    pub upload_bytes_per_pair: Option<u64>,
    /// `h2d_bytes_per_second / upload_bytes_per_pair`.
    pub upload_bound_fps: Option<f64>,
    /// `upload_included_fps / upload_bound_fps`: 1 means upload-bound.
    pub upload_included_vs_bound: Option<f64>,
    /// cpu upload-included time over this one's, same feature.
    pub speedup_vs_cpu: Option<f64>,
    /// Kernels that completed on the device (GPU backends): the proof it ran there.
    pub dispatches: Option<u64>,
    pub error: Option<String>,
}

impl Throughput {
    fn empty(feature: &str, backend: &str, frames: usize) -> Throughput {
        Throughput {
            feature: feature.into(),
            backend: backend.into(),
            frames,
            threads: 1,
            upload_included_fps: 0.0,
            upload_included_ms_per_frame: 0.0,
            upload_excluded_fps: 0.0,
            upload_excluded_ms_per_frame: 0.0,
            upload_bytes_per_pair: None,
            upload_bound_fps: None,
            upload_included_vs_bound: None,
            speedup_vs_cpu: None,
            dispatches: None,
            error: None,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct ClipBench {
    pub schema: &'static str,
    pub mode: &'static str,
    pub machine: Machine,
    pub reference: String,
    pub distorted: String,
    pub geometry: String,
    pub frames: usize,
    pub backends: Vec<BackendFigures>,
    pub throughput: Vec<Throughput>,
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

/// A raw clip's frames looped to `frames` pairs.
struct Looped<'a> {
    inner: &'a RawPair,
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
}

/// Both sides as one raw pair, when they are raw files (frames can then be
/// read by index from several threads).
fn raw_pair(options: &Options) -> Result<Option<RawPair>> {
    match (&options.reference, &options.distorted) {
        (FrameSource::Raw { path: r, geometry }, FrameSource::Raw { path: d, .. }) => {
            Ok(Some(RawPair::open(r, d, *geometry)?))
        }
        _ => Ok(None),
    }
}

fn geometry_of(options: &Options) -> Result<Geometry> {
    let (r, d) = (options.reference.open()?.geometry(), options.distorted.open()?.geometry());
    if r != d {
        bail!("the reference is {r}, the distorted {d}");
    }
    Ok(r)
}

/// Scores `frames` pairs read from the files, after `warm` untimed ones.
fn upload_included(ext: &mut dyn Extractor, options: &Options, warm: usize) -> Result<f64> {
    let (mut r, mut d) = (Looping::open(&options.reference)?, Looping::open(&options.distorted)?);
    let mut scratch = Scores::default();
    for i in 0..warm {
        ext.extract(i, &r.next()?, &d.next()?, &mut scratch)?;
    }
    ext.flush(&mut scratch)?;
    let t0 = Instant::now();
    for i in 0..options.frames {
        ext.extract(i, &r.next()?, &d.next()?, &mut scratch)?;
    }
    ext.flush(&mut scratch)?;
    Ok(t0.elapsed().as_secs_f64())
}

/// Scores `frames` pairs already in memory (GPU: on the device).
fn upload_excluded(ext: &mut dyn Extractor, options: &Options, warm: usize) -> Result<f64> {
    let (mut r, mut d) = (Looping::open(&options.reference)?, Looping::open(&options.distorted)?);
    if let Some(driver) = ext.gpu_driver() {
        driver.make_resident(&r.next()?, &d.next()?)?;
        driver.compute_resident(warm)?;
        let t0 = Instant::now();
        driver.compute_resident(options.frames)?;
        return Ok(t0.elapsed().as_secs_f64());
    }
    let resident: Vec<(Frame, Frame)> =
        (0..options.frames.clamp(1, 64)).map(|_| Ok((r.next()?, d.next()?))).collect::<Result<_>>()?;
    let mut scratch = Scores::default();
    let t0 = Instant::now();
    for i in 0..options.frames {
        let (a, b) = &resident[i % resident.len()];
        ext.extract(i, a, b, &mut scratch)?;
    }
    ext.flush(&mut scratch)?;
    Ok(t0.elapsed().as_secs_f64())
}

fn measure(
    imp: &FeatureImpl,
    backend: &dyn Backend,
    geometry: &Geometry,
    options: &Options,
    bandwidth: Option<f64>,
) -> Result<Throughput> {
    let none = FeatureOptions::new();
    let warm = features::gpu::IN_FLIGHT;
    let mut t = Throughput::empty(imp.name, &backend.device().backend, options.frames);
    let (included, excluded) = match backend.gpu() {
        Some(gpu) => {
            let factory = imp.gpu.ok_or_else(|| anyhow!("{} has no GPU kernels yet", imp.name))?;
            let counting = CountingGpu::new(gpu);
            let make = || factory(counting.clone(), geometry, &none);
            let included = match raw_pair(options)? {
                // The engine `run` uses: several threads, each reading frames
                // straight into its pinned staging, frames in flight on each
                // (temporal features too: they are windowed, features/gpu.rs).
                Some(pair) => {
                    let threads = options.threads.unwrap_or_else(|| worker_threads(backend.device(), options.frames));
                    t.threads = threads;
                    let warm_up = Looped { inner: &pair, frames: threads * IN_FLIGHT * 2 };
                    score_parallel(&make, &warm_up, threads, &|| {})?;
                    // What each worker's extractor uploads once (filter taps,
                    // say) is not per frame.
                    let setup = {
                        let before = counting.uploaded();
                        drop(make()?);
                        (counting.uploaded() - before) * threads as u64
                    };
                    let before = counting.uploaded() + setup;
                    let t0 = Instant::now();
                    score_parallel(&make, &Looped { inner: &pair, frames: options.frames }, threads, &|| {})?;
                    let seconds = t0.elapsed().as_secs_f64();
                    t.upload_bytes_per_pair = Some((counting.uploaded() - before) / options.frames as u64);
                    seconds
                }
                _ => {
                    let mut ext = make()?;
                    let before = counting.uploaded();
                    let seconds = upload_included(ext.as_mut(), options, warm)?;
                    // Every pair scored so far, warm-up included, counts once.
                    t.upload_bytes_per_pair = Some((counting.uploaded() - before) / (options.frames + warm) as u64);
                    seconds
                }
            };
            let mut ext = make()?;
            let excluded = upload_excluded(ext.as_mut(), options, warm)?;
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
            // spreads frames over its pool (one by default). A temporal
            // feature too: it is windowed, so each worker takes a run of
            // frames (libvmaf keeps its TEMPORAL extractors, float_motion,
            // on one thread).
            let threads = options.threads.unwrap_or(1);
            t.threads = threads;
            let make = || (imp.cpu)(geometry, &none);
            let included = match raw_pair(options)? {
                Some(pair) => {
                    score_parallel(&make, &Looped { inner: &pair, frames: threads * 2 }, threads, &|| {})?;
                    let t0 = Instant::now();
                    score_parallel(&make, &Looped { inner: &pair, frames: options.frames }, threads, &|| {})?;
                    t0.elapsed().as_secs_f64()
                }
                _ => upload_included(make()?.as_mut(), options, warm)?,
            };
            let excluded = upload_excluded(make()?.as_mut(), options, warm)?;
            (included, excluded)
        }
    };
    (t.upload_included_fps, t.upload_included_ms_per_frame) = rate(options.frames, included);
    (t.upload_excluded_fps, t.upload_excluded_ms_per_frame) = rate(options.frames, excluded);
    if let (Some(bw), Some(bytes)) = (bandwidth, t.upload_bytes_per_pair)
        && bytes > 0
    {
        let bound = bw / bytes as f64;
        t.upload_bound_fps = Some(bound);
        t.upload_included_vs_bound = Some(t.upload_included_fps / bound);
    }
    Ok(t)
}

pub fn run(options: &Options) -> Result<ClipBench> {
    if options.frames == 0 {
        bail!("--frames must be at least 1");
    }
    let geometry = geometry_of(options)?;
    let mut impls = Vec::new();
    for name in &options.features {
        impls.push(features::find(name).ok_or_else(|| anyhow!("unknown feature `{name}`"))?);
    }
    let mut backends = Vec::new();
    let mut throughput = Vec::new();
    for name in &options.backends {
        let kind = BackendKind::from_name(name).ok_or_else(|| anyhow!("unknown backend `{name}`"))?;
        let decl = ResolvedBackend { name: name.clone(), kind, required: true, device: None, command: None };
        let t0 = Instant::now();
        let opened = backend::open(&decl, &options.open);
        let open_seconds = t0.elapsed().as_secs_f64();
        let backend = match opened {
            Ok(b) => b,
            Err(e) => {
                backends.push(BackendFigures {
                    backend: name.clone(),
                    device: None,
                    open_seconds,
                    h2d_bytes_per_second: None,
                    h2d_threads: 0,
                    error: Some(e),
                });
                continue;
            }
        };
        // Measured with as many threads as the engine feeds the device with,
        // so the bound is the one the upload-included rate runs against.
        let feeders = options.threads.unwrap_or_else(|| worker_threads(backend.device(), options.frames));
        let bandwidth = match backend.gpu() {
            Some(gpu) => Some(
                upload_bandwidth(gpu.as_ref(), options.bandwidth_bytes, 9, feeders)
                    .with_context(|| format!("{name}: bandwidth"))?,
            ),
            None => None,
        };
        backends.push(BackendFigures {
            backend: name.clone(),
            device: Some(backend.device().clone()),
            open_seconds,
            h2d_bytes_per_second: bandwidth,
            h2d_threads: feeders,
            error: None,
        });
        for imp in &impls {
            let t = measure(imp, backend.as_ref(), &geometry, options, bandwidth).unwrap_or_else(|e| Throughput {
                error: Some(format!("{e:#}")),
                ..Throughput::empty(imp.name, name, options.frames)
            });
            throughput.push(t);
        }
    }
    let cpu: Vec<(String, f64)> = throughput
        .iter()
        .filter(|t| t.backend == "cpu" && t.error.is_none())
        .map(|t| (t.feature.clone(), t.upload_included_ms_per_frame))
        .collect();
    for t in &mut throughput {
        if let Some((_, c)) = cpu.iter().find(|(f, _)| *f == t.feature)
            && t.error.is_none()
            && t.upload_included_ms_per_frame > 0.0
        {
            t.speedup_vs_cpu = Some(c / t.upload_included_ms_per_frame);
        }
    }
    Ok(ClipBench {
        schema: "ulpgate-bench/1",
        mode: "clip",
        machine: Machine::here(),
        reference: options.reference.describe(),
        distorted: options.distorted.describe(),
        geometry: geometry.to_string(),
        frames: options.frames,
        backends,
        throughput,
    })
}
