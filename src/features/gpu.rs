//! The frame pipeline every feature's GPU host code runs in: several frames
//! in flight, each on its own stream with its own buffers, so uploads,
//! kernels and readbacks of consecutive frames overlap.

use super::Extractor;
use crate::backend::gpu::{Buffer, Gpu, Stream};
use crate::fixture::{Frame, Geometry, PairSource};
use crate::scores::Scores;
use anyhow::{Context, Result, bail};
use std::sync::Arc;

/// Frames in flight per extractor.
pub const IN_FLIGHT: usize = 3;

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
    /// indices: a worker of [`score_parallel`] sees every T-th frame).
    next: usize,
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
        Ok(Box::new(GpuExtractor { pipeline, slots, next: 0, _gpu: gpu }))
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
            pipeline.finish(index, &downloads, out).with_context(|| format!("frame {index}"))?;
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
        for slot in &mut self.slots {
            let [r, d] = self.pipeline.inputs(&slot.buffers);
            slot.stream.upload(r, 0, &reference.samples.as_bytes()[..bytes])?;
            slot.stream.upload(d, 0, &distorted.samples.as_bytes()[..bytes])?;
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
        let [r, d] = self.pipeline.inputs(&slot.buffers);
        for (buffer, distorted) in [(r, false), (d, true)] {
            slot.stream
                .upload_with(buffer, 0, bytes, &mut |staging| Ok(source.read_bytes(index, distorted, staging)?))
                .with_context(|| format!("frame {index}"))?;
        }
        self.launch(i, index).with_context(|| format!("frame {index}"))
    }
}

impl<P: GpuPipeline> Extractor for GpuExtractor<P> {
    fn extract(&mut self, index: usize, reference: &Frame, distorted: &Frame, out: &mut Scores) -> Result<()> {
        let i = self.take_slot(out)?;
        let bytes = self.upload_bytes();
        let slot = &mut self.slots[i];
        let [r, d] = self.pipeline.inputs(&slot.buffers);
        slot.stream.upload(r, 0, &reference.samples.as_bytes()[..bytes]).with_context(|| format!("frame {index}"))?;
        slot.stream.upload(d, 0, &distorted.samples.as_bytes()[..bytes]).with_context(|| format!("frame {index}"))?;
        self.launch(i, index).with_context(|| format!("frame {index}"))
    }

    fn gpu_driver(&mut self) -> Option<&mut dyn GpuDriver> {
        Some(self)
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
/// its own extractor over every `threads`-th frame. A GPU extractor (its own
/// streams and buffers, frames in flight) reads frames straight into its
/// staging memory; a CPU extractor gets them decoded from `source`. Only
/// for features whose frames are independent (not `temporal`).
pub fn score_parallel(
    extractor: &(dyn Fn() -> Result<Box<dyn Extractor>> + Sync),
    source: &dyn PairSource,
    threads: usize,
    on_frame: &(dyn Fn() + Sync),
) -> Result<Scores> {
    let frames = source.frames();
    let threads = threads.clamp(1, frames.max(1));
    let parts: Vec<Result<Scores>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|k| {
                scope.spawn(move || -> Result<Scores> {
                    let mut ext = extractor()?;
                    let mut scores = Scores::default();
                    // A CPU extractor's frames, their storage reused from
                    // frame to frame.
                    let (mut r, mut d) = (None, None);
                    for index in (k..frames).step_by(threads) {
                        match ext.gpu_driver() {
                            Some(driver) => driver.extract_from(index, source, &mut scores)?,
                            None => {
                                let reference = source.frame_into(index, false, &mut r)?;
                                let distorted = source.frame_into(index, true, &mut d)?;
                                ext.extract(index, reference, distorted, &mut scores)?;
                            }
                        }
                        on_frame();
                    }
                    ext.flush(&mut scores)?;
                    Ok(scores)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|_| Err(anyhow::anyhow!("a GPU worker panicked"))))
            .collect()
    });
    let mut scores = Scores::default();
    for (k, part) in parts.into_iter().enumerate() {
        let part = part?;
        for (metric, values) in part.metrics() {
            for index in (k..frames).step_by(threads) {
                scores.record(metric, index, values.get(index).copied().unwrap_or(f64::NAN));
            }
        }
    }
    scores.pad_to(frames);
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
}
