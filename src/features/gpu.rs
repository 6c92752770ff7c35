//! The frame pipeline every feature's GPU host code runs in: several frames
//! in flight, each on its own stream with its own buffers, so uploads,
//! kernels and readbacks of consecutive frames overlap.
//!
//! # Temporal features: windows, not carried state
//!
//! A temporal feature's score of frame `i` reads other frames: integer
//! motion the previous reference (with `motion_five_frame_window`, the one
//! two back), float motion the blurred previous reference, and motion2 and
//! motion3 the next frame's score. libvmaf carries that state from call to
//! call (`prev_ref`, a ring of three blurred frames) and scores the
//! sequence's end in `flush`. Carried state would tie a feature to one
//! worker and one stream with every frame waiting for the one before; at
//! 1080p that cannot reach 2,000 frames a second on an H100, where every
//! other feature keeps several frames in flight on several host threads.
//!
//! So a temporal feature is *windowed* ([`super::Extractor::window`]):
//!
//! 1. **Each frame reads its own window.** The pipeline names the frames
//!    its input buffers hold relative to the scored one
//!    ([`GpuPipeline::input_frames`]; motion: the previous reference and
//!    this one), and the driver uploads them into that frame's slot, as it
//!    uploads any feature's pair. Nothing is shared between slots, streams
//!    or workers, so frames stay independent: [`score_parallel`] spreads
//!    them over host threads and each keeps [`IN_FLIGHT`] frames in flight,
//!    exactly as for a non-temporal feature. A frame before the first
//!    (frame 0's previous) reads frame 0; the pipeline's `finish` knows the
//!    index and records what libvmaf records there (motion: 0).
//! 2. **The neighbour's work is recomputed** where it is needed (float
//!    motion blurs the previous reference again in the frame that needs it)
//!    instead of being kept on the device for the next frame.
//! 3. **Cross-frame rules run once, on the host, in frame order**
//!    ([`GpuPipeline::finish_sequence`], libvmaf's `flush`): after every
//!    frame's per-frame values have come back and the workers' scores are
//!    merged, motion2 takes the minimum with the next frame, motion3 blends
//!    and averages. They are a few operations a frame on doubles, the same
//!    code as the CPU reference's, so they cannot differ.
//!
//! Why not a device-side ring of blurred frames (upload each frame once,
//! keep the last blurs resident)? Frame `i`'s kernels would read buffers
//! that frame `i - 1`'s stream writes: streams would wait on each other
//! (the [`crate::backend::gpu::Stream`] trait has no cross-stream events,
//! and would need them in three APIs), a worker could only take a
//! contiguous run of frames, and a slot could not be reused before the next
//! frame had read it. What it would save is small: the motion features read
//! only the reference, so uploading the previous reference too is two luma
//! planes a frame, what every luma feature uploads (the reference and the
//! distorted); and recomputing a 5-tap blur is a small part of a frame's
//! work on a GPU. Per-frame values in, sequence rules out also keeps the
//! sequence logic in one place for the CPU reference and every backend.
//!
//! Shard and cell semantics are unchanged: a side scores every frame of
//! the fixture, and the sequence rules see all of them. A worker of a
//! windowed feature takes a contiguous run of frames (round robin
//! otherwise), so a CPU extractor can reuse the previous frame's work when
//! its frames come in order ([`Recent`] lets plain `extract` callers, which
//! give frames one by one, use the same code).

use super::Extractor;
use crate::backend::gpu::{Buffer, Gpu, Stream};
use crate::fixture::{FixtureError, Frame, Geometry, PairSource};
use crate::scores::Scores;
use anyhow::{Context, Result, bail};
use std::collections::VecDeque;
use std::sync::Arc;

/// Frames in flight per extractor.
pub const IN_FLIGHT: usize = 3;

/// What a [`GpuPipeline::finish`] returns for a frame its first pass
/// cannot score: the driver records [`GpuPipeline::redo`] on the same slot
/// and finishes that instead.
#[derive(Debug)]
pub struct Redo(pub String);

impl std::fmt::Display for Redo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the frame is scored again: {}", self.0)
    }
}

impl std::error::Error for Redo {}

/// One feature's GPU orchestration, written once for every backend.
pub trait GpuPipeline: Send + 'static {
    /// The device buffers one in-flight frame needs.
    type Slot: Send;

    fn new_slot(&self, gpu: &dyn Gpu) -> Result<Self::Slot>;

    /// The geometry of the frames it scores.
    fn geometry(&self) -> &Geometry;

    /// How many planes the kernels read (1: luma; 3: every plane). The
    /// driver uploads that many, contiguous from the frame's start.
    fn planes(&self) -> usize;

    /// The slot's reference and distorted input buffers, which the driver
    /// fills (from a decoded frame, or straight from a file into staging).
    fn inputs<'a>(&self, slot: &'a Self::Slot) -> [&'a Buffer; 2];

    /// Records the dispatches and downloads that score the uploaded pair.
    /// Separate from the upload so a benchmark can time the kernels with
    /// the frames already resident.
    fn compute(&self, slot: &Self::Slot, stream: &mut dyn Stream) -> Result<()>;

    /// Turns one frame's downloads (in recording order) into scores.
    fn finish(&self, index: usize, downloads: &[Vec<u8>], out: &mut Scores) -> Result<()>;

    /// Which frame and side the driver uploads into each of
    /// [`GpuPipeline::inputs`], relative to the scored frame: by default
    /// its reference and its distorted picture. A temporal pipeline names
    /// earlier frames (motion: the previous reference, then this one); one
    /// before the first frame reads frame 0.
    fn input_frames(&self) -> [FrameInput; 2] {
        [FrameInput::REFERENCE, FrameInput::DISTORTED]
    }

    /// Which of [`GpuPipeline::inputs`] the kernels read: the driver
    /// uploads only those (cambi without `full_ref` reads no reference).
    /// Both by default.
    fn uploads(&self) -> [bool; 2] {
        [true, true]
    }

    /// Records the frame again on `slot`, another way, where
    /// [`GpuPipeline::finish`] returned a [`Redo`] error (its inputs still
    /// hold the frame); the driver submits it, waits and calls
    /// [`GpuPipeline::finish_redone`]. Only a pipeline whose `finish` can
    /// ask is called (the SSIM maps: the terms stored for the exact sum).
    fn redo(&self, _slot: &Self::Slot, _stream: &mut dyn Stream) -> Result<()> {
        anyhow::bail!("this pipeline cannot score a frame again")
    }

    /// [`GpuPipeline::finish`] for the downloads of a [`GpuPipeline::redo`].
    fn finish_redone(&self, index: usize, downloads: &[Vec<u8>], out: &mut Scores) -> Result<()> {
        self.finish(index, downloads, out)
    }

    /// The cross-frame rules of a temporal feature (libvmaf's `flush`),
    /// run once over every frame's [`GpuPipeline::finish`]ed values, in
    /// frame order. Nothing by default.
    fn finish_sequence(&self, _scores: &mut Scores, _frames: usize) -> Result<()> {
        Ok(())
    }
}

/// One input buffer's frame: `back` frames before the scored one, of the
/// reference or the distorted side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameInput {
    pub back: usize,
    pub distorted: bool,
}

impl FrameInput {
    /// The scored frame's reference.
    pub const REFERENCE: FrameInput = FrameInput { back: 0, distorted: false };
    /// The scored frame's distorted picture.
    pub const DISTORTED: FrameInput = FrameInput { back: 0, distorted: true };

    /// The frame it reads when frame `index` is scored (frame 0 before the
    /// first).
    pub fn frame(self, index: usize) -> usize {
        index.saturating_sub(self.back)
    }
}

/// The frames a windowed temporal extractor reads beside the scored one
/// ([`super::Extractor::window`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// How many frames before the scored one it reads (motion: 1; with
    /// `motion_five_frame_window`: 2).
    pub lookback: usize,
}

/// The frames a windowed extractor was last given through
/// [`Extractor::extract`], as a [`PairSource`]: callers that hand frames
/// over one by one (benchmarks, tests) then run the same
/// [`Extractor::extract_at`] code as the engine, which reads any frame by
/// index. Frames must come in order; it keeps the last `lookback + 1`.
#[derive(Default)]
pub struct Recent {
    geometry: Option<Geometry>,
    keep: usize,
    frames: VecDeque<(usize, Frame, Frame)>,
}

impl Recent {
    pub fn new(window: Window) -> Self {
        Recent { geometry: None, keep: window.lookback + 1, frames: VecDeque::new() }
    }

    /// Adds frame `index` (forgetting what falls out of the window).
    pub fn push(&mut self, index: usize, reference: &Frame, distorted: &Frame) {
        if self.frames.back().is_some_and(|(last, _, _)| index != last + 1) {
            self.frames.clear();
        }
        self.geometry = Some(reference.geometry);
        self.frames.push_back((index, reference.clone(), distorted.clone()));
        while self.frames.len() > self.keep.max(1) {
            self.frames.pop_front();
        }
    }
}

impl PairSource for Recent {
    fn geometry(&self) -> Geometry {
        self.geometry.unwrap_or(Geometry { width: 0, height: 0, bit_depth: 8, chroma: crate::fixture::Chroma::Yuv400 })
    }

    fn frames(&self) -> usize {
        self.frames.back().map_or(0, |(i, _, _)| i + 1)
    }

    fn read_bytes(&self, index: usize, distorted: bool, dst: &mut [u8]) -> Result<(), FixtureError> {
        let frame = self.frame(index, distorted)?;
        let bytes = frame.samples.as_bytes();
        if dst.len() > bytes.len() {
            return Err(FixtureError::Invalid(format!("{} bytes asked of a {}-byte frame", dst.len(), bytes.len())));
        }
        dst.copy_from_slice(&bytes[..dst.len()]);
        Ok(())
    }

    fn frame(&self, index: usize, distorted: bool) -> Result<Frame, FixtureError> {
        let found = self.frames.iter().find(|(i, _, _)| *i == index);
        found.map(|(_, r, d)| if distorted { d.clone() } else { r.clone() }).ok_or_else(|| {
            FixtureError::Invalid(format!(
                "frame {index} was not among the last {} given in order to a windowed extractor's extract",
                self.keep
            ))
        })
    }
}

struct Slot<S> {
    stream: Box<dyn Stream>,
    buffers: S,
    pending: Option<usize>,
}

/// Drives a [`GpuPipeline`] as an [`Extractor`].
pub struct GpuExtractor<P: GpuPipeline> {
    pipeline: P,
    slots: Vec<Slot<P::Slot>>,
    /// The slot the next frame goes to (round robin, whatever the frame
    /// indices: a worker of [`score_parallel`] sees every T-th frame, or a
    /// contiguous run of them).
    next: usize,
    /// A windowed pipeline's last frames given through `extract`.
    recent: Recent,
    // Keeps the context alive as long as its buffers and streams.
    _gpu: Arc<dyn Gpu>,
}

impl<P: GpuPipeline> GpuExtractor<P> {
    pub fn boxed(gpu: Arc<dyn Gpu>, pipeline: P) -> Result<Box<dyn Extractor>> {
        let slots = (0..IN_FLIGHT)
            .map(|_| {
                Ok(Slot { stream: gpu.create_stream()?, buffers: pipeline.new_slot(gpu.as_ref())?, pending: None })
            })
            .collect::<Result<Vec<_>>>()?;
        let recent = Recent::new(window_of(&pipeline).unwrap_or(Window { lookback: 0 }));
        Ok(Box::new(GpuExtractor { pipeline, slots, next: 0, recent, _gpu: gpu }))
    }

    /// Bytes uploaded per side: the pipeline's planes.
    fn upload_bytes(&self) -> usize {
        planes_bytes(self.pipeline.geometry(), self.pipeline.planes())
    }

    /// Takes the next slot, finishing the frame it still holds.
    fn take_slot(&mut self, out: &mut Scores) -> Result<usize> {
        let i = self.next;
        self.next = (self.next + 1) % self.slots.len();
        Self::complete(&self.pipeline, &mut self.slots[i], out)?;
        Ok(i)
    }

    /// Records compute after the uploads already recorded on slot `i`, and
    /// submits.
    fn launch(&mut self, i: usize, index: usize) -> Result<()> {
        let slot = &mut self.slots[i];
        self.pipeline.compute(&slot.buffers, slot.stream.as_mut())?;
        slot.stream.submit()?;
        slot.pending = Some(index);
        Ok(())
    }

    fn complete(pipeline: &P, slot: &mut Slot<P::Slot>, out: &mut Scores) -> Result<()> {
        if let Some(index) = slot.pending.take() {
            let downloads = slot.stream.wait().with_context(|| format!("frame {index}"))?;
            match pipeline.finish(index, &downloads, out) {
                Err(e) if e.is::<Redo>() => {
                    // The slot's inputs still hold the frame: score it the
                    // other way, at once (a rare frame).
                    if crate::trace::enabled() {
                        crate::trace::mark(&format!("frame {index}: {e}"));
                    }
                    pipeline.redo(&slot.buffers, slot.stream.as_mut()).with_context(|| format!("frame {index}"))?;
                    slot.stream.submit().with_context(|| format!("frame {index}"))?;
                    let downloads = slot.stream.wait().with_context(|| format!("frame {index}"))?;
                    pipeline.finish_redone(index, &downloads, out).with_context(|| format!("frame {index}"))?;
                }
                result => result.with_context(|| format!("frame {index}"))?,
            }
        }
        Ok(())
    }
}

/// Drives a GPU extractor's slots directly, for benchmarks that time the
/// kernels with the frames already on the device.
pub trait GpuDriver {
    /// Uploads one frame pair into every slot and waits for the uploads.
    fn make_resident(&mut self, reference: &Frame, distorted: &Frame) -> Result<()>;

    /// Runs [`GpuPipeline::compute`] on the resident frames `n` times, the
    /// slots in flight as in a real run, and waits for all of it. Each
    /// result is finished into scratch scores (the host side counts too).
    fn compute_resident(&mut self, n: usize) -> Result<()>;

    /// Scores frame pair `index` of `source`, reading its bytes straight
    /// into the upload staging memory (no intermediate copy).
    fn extract_from(&mut self, index: usize, source: &dyn PairSource, out: &mut Scores) -> Result<()>;
}

impl<P: GpuPipeline> GpuDriver for GpuExtractor<P> {
    fn make_resident(&mut self, reference: &Frame, distorted: &Frame) -> Result<()> {
        self.flush(&mut Scores::default())?;
        let bytes = self.upload_bytes();
        let uploads = self.pipeline.uploads();
        for slot in &mut self.slots {
            let inputs = self.pipeline.inputs(&slot.buffers);
            for ((buffer, frame), upload) in inputs.into_iter().zip([reference, distorted]).zip(uploads) {
                if upload {
                    slot.stream.upload(buffer, 0, &frame.samples.as_bytes()[..bytes])?;
                }
            }
            slot.stream.wait()?;
        }
        Ok(())
    }

    fn compute_resident(&mut self, n: usize) -> Result<()> {
        let mut scratch = Scores::default();
        let count = self.slots.len();
        for i in 0..n {
            let slot = &mut self.slots[i % count];
            Self::complete(&self.pipeline, slot, &mut scratch)?;
            self.pipeline.compute(&slot.buffers, slot.stream.as_mut())?;
            slot.stream.submit()?;
            slot.pending = Some(i % count);
        }
        self.flush(&mut scratch)
    }

    fn extract_from(&mut self, index: usize, source: &dyn PairSource, out: &mut Scores) -> Result<()> {
        let i = self.take_slot(out)?;
        let bytes = self.upload_bytes();
        let slot = &mut self.slots[i];
        let inputs = self.pipeline.inputs(&slot.buffers);
        let wanted = self.pipeline.input_frames().into_iter().zip(self.pipeline.uploads());
        for (buffer, (input, upload)) in inputs.into_iter().zip(wanted) {
            if !upload {
                continue;
            }
            let (frame, distorted) = (input.frame(index), input.distorted);
            slot.stream
                .upload_with(buffer, 0, bytes, &mut |staging| Ok(source.read_bytes(frame, distorted, staging)?))
                .with_context(|| format!("frame {index}"))?;
        }
        self.launch(i, index).with_context(|| format!("frame {index}"))
    }
}

/// A pipeline's window: `Some` when an input reads an earlier frame.
fn window_of<P: GpuPipeline>(pipeline: &P) -> Option<Window> {
    let lookback = pipeline.input_frames().iter().map(|f| f.back).max().unwrap_or(0);
    (lookback > 0).then_some(Window { lookback })
}

impl<P: GpuPipeline> Extractor for GpuExtractor<P> {
    fn extract(&mut self, index: usize, reference: &Frame, distorted: &Frame, out: &mut Scores) -> Result<()> {
        if window_of(&self.pipeline).is_some() {
            let mut recent = std::mem::take(&mut self.recent);
            recent.push(index, reference, distorted);
            let result = self.extract_from(index, &recent, out);
            self.recent = recent;
            return result;
        }
        let i = self.take_slot(out)?;
        let bytes = self.upload_bytes();
        let slot = &mut self.slots[i];
        let inputs = self.pipeline.inputs(&slot.buffers);
        for ((buffer, frame), upload) in inputs.into_iter().zip([reference, distorted]).zip(self.pipeline.uploads()) {
            if upload {
                slot.stream
                    .upload(buffer, 0, &frame.samples.as_bytes()[..bytes])
                    .with_context(|| format!("frame {index}"))?;
            }
        }
        self.launch(i, index).with_context(|| format!("frame {index}"))
    }

    fn gpu_driver(&mut self) -> Option<&mut dyn GpuDriver> {
        Some(self)
    }

    fn window(&self) -> Option<Window> {
        window_of(&self.pipeline)
    }

    fn extract_at(&mut self, index: usize, source: &dyn PairSource, out: &mut Scores) -> Result<()> {
        self.extract_from(index, source, out)
    }

    fn finish_sequence(&self, scores: &mut Scores, frames: usize) -> Result<()> {
        self.pipeline.finish_sequence(scores, frames)
    }

    fn flush(&mut self, out: &mut Scores) -> Result<()> {
        // Oldest first, so scores land in frame order.
        let mut order: Vec<usize> = (0..self.slots.len()).collect();
        order.sort_by_key(|&i| self.slots[i].pending.unwrap_or(usize::MAX));
        for i in order {
            Self::complete(&self.pipeline, &mut self.slots[i], out)?;
        }
        Ok(())
    }
}

/// One of a feature's two kernel shapes with one contract and the same
/// bits: `cpu` on CPU implementations of a GPU API (`device_type` `cpu`:
/// Mesa lavapipe, PoCL), where a work-group barrier costs microseconds and a
/// thread walking its row is fastest; `gpu` on everything else, where one
/// thread per row leaves the chip idle. `choice` is the value of the
/// environment variable `var`, a testing and diagnostic switch that
/// overrides the device type: the first word of `cpu` or `gpu`, or empty;
/// anything else is an error naming both. Each side is (word, what it
/// runs, value).
pub fn shape_for_driver<T: Copy>(
    device: &crate::backend::DeviceInfo,
    var: &str,
    choice: Option<&std::ffi::OsStr>,
    cpu: (&str, &str, T),
    gpu: (&str, &str, T),
) -> Result<T> {
    let by_driver = if device.device_type.as_deref() == Some("cpu") { cpu.2 } else { gpu.2 };
    env_switch(var, choice, cpu, gpu, by_driver)
}

/// How a Vulkan kernel whose C divides correctly rounded gets its divisions
/// and square roots (ssim's terms; psnr_hvs's checks measured 5% of its
/// kernel on lavapipe, within the noise, and stay).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Division {
    /// The device's own, checked against exact residuals and corrected
    /// where they are off (Vulkan promises no better than 2.5 ulp):
    /// `shaders/include/correct_rounding.wgsl`.
    Checked,
    /// The device's own as they are, for a driver whose division and square
    /// root are IEEE 754's: `shaders/include/ieee_rounding.wgsl` (the
    /// kernels' `_ieee` variants).
    Device,
}

/// Environment variable that picks the [`Division`] (`checked` or
/// `device`; unset: by the driver, [`divides_as_ieee`]): a diagnostic,
/// and the tests' way to run the checking kernels on lavapipe.
pub const DIVISION_VAR: &str = "ULPGATE_DIVISION";

/// Whether a device's division and square root are IEEE 754's: Mesa's
/// llvmpipe (lavapipe), whose NIR options lower neither `fdiv` nor `fsqrt`
/// and whose gallivm emits them as LLVM's `fdiv` and `llvm.sqrt` without
/// fast-math flags, for the host CPU's IEEE instructions (the C
/// reference's). llvmpipe runs every path of a kernel for all lanes, so
/// checks that find nothing cost it as much as corrections. Every other
/// Vulkan driver, CPU or GPU, is checked; the CUDA and OpenCL dialects
/// divide correctly rounded by their specs and have no checks to skip.
pub fn divides_as_ieee(device: &crate::backend::DeviceInfo) -> bool {
    device.backend == "vulkan" && device.driver.as_deref().is_some_and(|d| d.starts_with("llvmpipe"))
}

/// The [`Division`] for a device: by [`divides_as_ieee`] unless
/// [`DIVISION_VAR`] names one.
pub fn division_for(device: &crate::backend::DeviceInfo) -> Result<Division> {
    division_with(device, std::env::var_os(DIVISION_VAR).as_deref())
}

fn division_with(device: &crate::backend::DeviceInfo, choice: Option<&std::ffi::OsStr>) -> Result<Division> {
    let by_driver = if divides_as_ieee(device) { Division::Device } else { Division::Checked };
    env_switch(
        DIVISION_VAR,
        choice,
        ("checked", "the device's divisions checked and corrected", Division::Checked),
        ("device", "the device's divisions as they are", Division::Device),
        by_driver,
    )
}

/// A two-way environment switch (the shapes above, and the diagnostics
/// that force one path of a feature): `choice`, the value of `var`, is the
/// word of `a` or of `b`, or unset or empty for `default`; anything else is
/// an error naming both words and what each does. Each side is (word, what
/// it does, value).
pub fn env_switch<T: Copy>(
    var: &str,
    choice: Option<&std::ffi::OsStr>,
    a: (&str, &str, T),
    b: (&str, &str, T),
    default: T,
) -> Result<T> {
    // `ULPGATE_TRACE` says which switch was taken: the tests that force a
    // kernel through one check that it took effect.
    let taken = |side: (&str, &str, T)| {
        crate::trace::mark(&format!("{var}={}: {}", side.0, side.1));
        Ok(side.2)
    };
    match choice.map(|c| c.to_str()) {
        None | Some(Some("")) => Ok(default),
        Some(Some(word)) if word == a.0 => taken(a),
        Some(Some(word)) if word == b.0 => taken(b),
        Some(_) => bail!(
            "{var}={:?}: expected `{}` ({}) or `{}` ({}), or unset",
            choice.unwrap_or_default(),
            a.0,
            a.1,
            b.0,
            b.1
        ),
    }
}

/// A GPU-API device of `device_type` (`None`: the driver gave none), for
/// the tests of the choices [`shape_for_driver`] makes.
#[cfg(test)]
pub fn device_of_type(device_type: Option<&str>) -> crate::backend::DeviceInfo {
    crate::backend::DeviceInfo {
        device_type: device_type.map(Into::into),
        ..crate::backend::DeviceInfo::named("vulkan", crate::backend::DeviceKind::Gpu, "d", "vulkan:0x10de:0x2335")
    }
}

/// A buffer for `bytes`, rounded up to whole 32-bit words (kernels read
/// samples through 32-bit words in the GLSL dialect).
pub fn word_buffer(gpu: &dyn Gpu, bytes: usize) -> Result<Buffer> {
    gpu.create_buffer(bytes.div_ceil(4) * 4)
}

/// Bytes of the first `planes` planes of a frame of `geometry`.
pub fn planes_bytes(geometry: &Geometry, planes: usize) -> usize {
    geometry.plane_offset(planes) * geometry.bytes_per_sample()
}

/// Scores every frame pair of `source` with `threads` workers, each driving
/// its own extractor through [`Extractor::extract_at`]: a GPU extractor
/// (its own streams and buffers, frames in flight) reads frames straight
/// into its staging memory; a CPU extractor gets them decoded from `source`.
/// A worker takes every `threads`-th frame, or, for a windowed extractor, a
/// contiguous run of frames (so it can reuse its previous frame's work);
/// the merged scores then go through [`Extractor::finish_sequence`] once.
/// A temporal feature must be windowed (its extractors say so); a
/// non-windowed extractor's frames must be independent.
pub fn score_parallel(
    extractor: &(dyn Fn() -> Result<Box<dyn Extractor>> + Sync),
    source: &dyn PairSource,
    threads: usize,
    on_frame: &(dyn Fn() + Sync),
) -> Result<Scores> {
    score_parallel_after_warm_up(extractor, source, threads, on_frame, None)
}

/// What [`score_parallel_after_warm_up`]'s workers do before the steady
/// state: each one waits for the others once it has its extractor and has
/// scored its first `frames` frames (all of them, if it has fewer; at once,
/// if it fails), and when the last one arrives `on_ready` runs, once.
pub struct WarmUp<'a> {
    pub frames: usize,
    pub on_ready: &'a (dyn Fn() + Sync),
}

/// A worker's one arrival at the warm-up barrier: explicit, or when dropped
/// (a worker that fails early must not leave the others waiting).
pub(crate) struct Arrival<'a>(Option<(&'a std::sync::Barrier, &'a (dyn Fn() + Sync))>);

impl Arrival<'_> {
    pub(crate) fn arrive(&mut self) {
        if let Some((barrier, on_ready)) = self.0.take()
            && barrier.wait().is_leader()
        {
            on_ready();
        }
    }
}

impl Drop for Arrival<'_> {
    fn drop(&mut self) {
        self.arrive();
    }
}

/// Runs `work(k, arrival)` for k in `0..threads`, each on a thread of its
/// own, and returns the results in that order (a worker that panics gives
/// an error). With `on_ready`, the workers' arrivals meet at one barrier
/// (each arrives when it calls [`Arrival::arrive`], or else when it returns
/// or fails) and the last to arrive runs `on_ready`; without, arriving does
/// nothing.
pub(crate) fn run_workers<T: Send>(
    threads: usize,
    on_ready: Option<&(dyn Fn() + Sync)>,
    work: impl Fn(usize, &mut Arrival<'_>) -> Result<T> + Sync,
) -> Vec<Result<T>> {
    let barrier = std::sync::Barrier::new(threads);
    let work = &work;
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|k| {
                let arrival = Arrival(on_ready.map(|f| (&barrier, f)));
                scope.spawn(move || {
                    let mut arrival = arrival;
                    work(k, &mut arrival)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or_else(|_| Err(anyhow::anyhow!("a worker panicked")))).collect()
    })
}

/// [`score_parallel`], with the workers meeting after their set-up and
/// first frames ([`WarmUp`]): a benchmark that starts its clock in
/// `on_ready` times the steady state alone (`bench --clip`).
pub fn score_parallel_after_warm_up(
    extractor: &(dyn Fn() -> Result<Box<dyn Extractor>> + Sync),
    source: &dyn PairSource,
    threads: usize,
    on_frame: &(dyn Fn() + Sync),
    warm_up: Option<WarmUp<'_>>,
) -> Result<Scores> {
    let frames = source.frames();
    let threads = threads.clamp(1, frames.max(1));
    let warm_frames = warm_up.as_ref().map_or(0, |w| w.frames);
    let parts = run_workers(threads, warm_up.as_ref().map(|w| w.on_ready), |k, arrival| -> Result<Part> {
        let mut ext = extractor()?;
        let mine: Vec<usize> = if ext.window().is_some() {
            (k * frames / threads..(k + 1) * frames / threads).collect()
        } else {
            (k..frames).step_by(threads).collect()
        };
        let mut scores = Scores::default();
        // A plain CPU extractor's frames, their storage reused from frame
        // to frame; GPU drivers and windowed extractors read through
        // `extract_at`.
        let plain_cpu = ext.window().is_none() && ext.gpu_driver().is_none();
        let (mut r, mut d) = (None, None);
        for (n, &index) in mine.iter().enumerate() {
            if n == warm_frames {
                arrival.arrive();
            }
            if plain_cpu {
                let reference = source.frame_into(index, false, &mut r)?;
                let distorted = source.frame_into(index, true, &mut d)?;
                ext.extract(index, reference, distorted, &mut scores)?;
            } else {
                ext.extract_at(index, source, &mut scores)?;
            }
            on_frame();
        }
        arrival.arrive();
        ext.flush(&mut scores)?;
        Ok((mine, scores, ext))
    });
    merge_parts(parts, frames)
}

/// One worker's part of a pass: the frames it scored, their scores (by
/// frame index) and its extractor.
pub(crate) type Part = (Vec<usize>, Scores, Box<dyn Extractor>);

/// The workers' parts as one pass's scores: each frame's from the worker
/// that scored it, padded to `frames`, then [`Extractor::finish_sequence`]
/// once (on the first worker's extractor); the first worker's error if any
/// failed.
pub(crate) fn merge_parts(parts: Vec<Result<Part>>, frames: usize) -> Result<Scores> {
    let mut scores = Scores::default();
    let mut first: Option<Box<dyn Extractor>> = None;
    for part in parts {
        let (mine, part, ext) = part?;
        for (metric, values) in part.metrics() {
            for &index in &mine {
                scores.record(metric, index, values.get(index).copied().unwrap_or(f64::NAN));
            }
        }
        first.get_or_insert(ext);
    }
    scores.pad_to(frames);
    if let Some(ext) = first {
        ext.finish_sequence(&mut scores, frames)?;
    }
    Ok(scores)
}

/// Little-endian u32 words of a download.
pub fn words(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
}

/// f32 values of a download.
pub fn floats(bytes: &[u8]) -> impl Iterator<Item = f32> + '_ {
    words(bytes).map(f32::from_bits)
}

/// Sums the 64-bit partials a reduction kernel wrote as (lo, hi) u32 pairs,
/// `stride` values per work group, returning one total per value.
pub fn sum_u64_partials(bytes: &[u8], stride: usize) -> Result<Vec<u64>> {
    let w: Vec<u32> = words(bytes).collect();
    if stride == 0 || !w.len().is_multiple_of(2 * stride) {
        bail!("partial sums: {} words is not a whole number of groups of {stride} 64-bit values", w.len());
    }
    let mut totals = vec![0u64; stride];
    for group in w.chunks_exact(2 * stride) {
        for (v, pair) in group.chunks_exact(2).enumerate() {
            totals[v] = totals[v].wrapping_add(u64::from(pair[0]) | (u64::from(pair[1]) << 32));
        }
    }
    Ok(totals)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partials_sum_per_value() {
        let mut bytes = Vec::new();
        for v in [1u64, 1 << 40, 2, 3] {
            bytes.extend_from_slice(&(v as u32).to_le_bytes());
            bytes.extend_from_slice(&((v >> 32) as u32).to_le_bytes());
        }
        assert_eq!(sum_u64_partials(&bytes, 2).unwrap(), vec![3, (1 << 40) + 3]);
        assert!(sum_u64_partials(&bytes, 3).is_err());
    }

    #[test]
    fn only_llvmpipe_divides_unchecked_unless_told() {
        use std::ffi::OsStr;
        let with = |backend: &str, driver: Option<&str>| crate::backend::DeviceInfo {
            backend: backend.into(),
            driver: driver.map(Into::into),
            ..device_of_type(Some("cpu"))
        };
        let lavapipe = with("vulkan", Some("llvmpipe Mesa 22.3.6 (LLVM 15.0.6)"));
        assert_eq!(division_with(&lavapipe, None).unwrap(), Division::Device);
        assert_eq!(division_with(&lavapipe, Some(OsStr::new("checked"))).unwrap(), Division::Checked);
        // A CPU device is not enough: SwiftShader's division is its own.
        for other in [
            with("vulkan", Some("SwiftShader driver")),
            with("vulkan", Some("NVIDIA 580.159.04")),
            with("vulkan", None),
            with("opencl", Some("llvmpipe")),
        ] {
            assert_eq!(division_with(&other, None).unwrap(), Division::Checked, "{other:?}");
        }
        let nvidia = with("vulkan", Some("NVIDIA 580.159.04"));
        assert_eq!(division_with(&nvidia, Some(OsStr::new("device"))).unwrap(), Division::Device);
        let err = division_with(&nvidia, Some(OsStr::new("ieee"))).unwrap_err().to_string();
        assert!(err.contains("ULPGATE_DIVISION=\"ieee\"") && err.contains("`checked`"), "{err}");
    }
}
