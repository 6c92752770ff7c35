//! `float_moment` (libvmaf float_moment.c + moment.c): first and second
//! moments of the luma of both pictures.

use super::gpu::{GpuExtractor, GpuPipeline, planes_bytes, sum_u64_partials, word_buffer};
use super::picture::{float_plane_into, scaler};
use super::sums::{float_sums_are_exact, sum_and_squares};
use super::{Extractor, FeatureImpl, options};
use crate::backend::gpu::{Arg, Buffer, Gpu, Kernel, KernelSpec, Stream, groups_for};
use crate::fixture::{Frame, Geometry};
use crate::scores::Scores;
use anyhow::Result;

pub const METRICS: [&str; 4] =
    ["float_moment_ref1st", "float_moment_dis1st", "float_moment_ref2nd", "float_moment_dis2nd"];

pub static FLOAT_MOMENT: FeatureImpl = FeatureImpl {
    name: "float_moment",
    options: &[],
    metrics: |options| {
        options::check("float_moment", options, &[])?;
        Ok(METRICS.iter().map(|s| s.to_string()).collect())
    },
    cpu: |_, options| {
        options::check("float_moment", options, &[])?;
        Ok(Box::new(MomentCpu::default()))
    },
    gpu: Some(|gpu, geometry, options| {
        options::check("float_moment", options, &[])?;
        let pipeline = MomentGpu { kernel: gpu.load_kernel(&MOMENT_SUMS)?, geometry: *geometry };
        GpuExtractor::boxed(gpu, pipeline)
    }),
    kernels: &[&MOMENT_SUMS],
    temporal: false,
    chroma_metrics: &[],
    refuses: super::takes_any_geometry,
};

/// `moment_sums` (kernels/moment.cl, shaders/moment_sums.comp): exact 64-bit
/// sums over the luma of both frames. Work group `gx` covers samples
/// `[gx * chunk, (gx + 1) * chunk)` and writes four (lo, hi) u32 pairs at
/// `partials[8 * gx]`: Σ ref, Σ dis, Σ ref², Σ dis², where each square is
/// first rounded to f32 as moment.c's float square rounds it (a no-op up to
/// 12 bits; at 16 bits it is what keeps the GPU bit-identical, within the
/// bound `MomentGpu::finish` gives). Buffers: reference,
/// distorted, partials. Scalars: luma samples, bytes per sample, chunk.
pub static MOMENT_SUMS: KernelSpec =
    KernelSpec { name: "moment_sums", family: "moment", workgroup: [256, 1, 1], buffers: 3, scalars: 3 };

/// Samples each `moment_sums` work group reduces (64 per thread): few enough
/// groups that a CPU driver (lavapipe), where a work group's barrier costs
/// microseconds, spends its time on samples; still over a hundred groups
/// per 1080p plane for a GPU to spread.
const CHUNK: usize = 256 * 64;

struct MomentGpu {
    kernel: Kernel,
    geometry: Geometry,
}

impl MomentGpu {
    fn groups(&self) -> u32 {
        groups_for(self.geometry.plane_samples(0), CHUNK as u32)
    }
}

impl GpuPipeline for MomentGpu {
    type Slot = [Buffer; 3];

    fn new_slot(&self, gpu: &dyn Gpu) -> Result<Self::Slot> {
        let luma = planes_bytes(&self.geometry, 1);
        Ok([word_buffer(gpu, luma)?, word_buffer(gpu, luma)?, gpu.create_buffer(self.groups() as usize * 32)?])
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    fn planes(&self) -> usize {
        1
    }

    fn inputs<'a>(&self, slot: &'a Self::Slot) -> [&'a Buffer; 2] {
        [&slot[0], &slot[1]]
    }

    fn compute(&self, b: &Self::Slot, stream: &mut dyn Stream) -> Result<()> {
        let args = [
            Arg::Buffer(&b[0]),
            Arg::Buffer(&b[1]),
            Arg::Buffer(&b[2]),
            Arg::U32(self.geometry.plane_samples(0) as u32),
            Arg::U32(self.geometry.bytes_per_sample() as u32),
            Arg::U32(CHUNK as u32),
        ];
        stream.dispatch(&self.kernel, [self.groups(), 1, 1], &args)?;
        stream.download(&b[2], 0, self.groups() as usize * 32)
    }

    fn finish(&self, index: usize, downloads: &[Vec<u8>], out: &mut Scores) -> Result<()> {
        let sums = sum_u64_partials(&downloads[0], 4)?;
        let n = self.geometry.plane_samples(0) as f64;
        let s = f64::from(scaler(self.geometry.bit_depth));
        // moment.c sums v / s and (v / s)² rounded to f32 in double; s is a
        // power of two, so (v / s)² rounds as v² does, which the kernel did
        // before summing. Its double sums in pixel order equal these exact
        // sums while they stay below 2^53 units (`sums::float_sums_are_exact`):
        // always up to 12 bits, and at 16 bits for any frame under 2^21
        // samples (a 1080p luma). Beyond that libvmaf's sum rounds as it
        // goes, the CPU reference follows it, and this exact value can
        // differ from it in the last bits.
        let values = [
            sums[0] as f64 / s / n,
            sums[1] as f64 / s / n,
            sums[2] as f64 / (s * s) / n,
            sums[3] as f64 / (s * s) / n,
        ];
        for (name, value) in METRICS.iter().zip(values) {
            out.record(name, index, value);
        }
        Ok(())
    }
}

/// (1st, 2nd) moment of a float plane: the sum in double of each value and
/// of its square taken in float, divided by the sample count (moment.c's
/// `compute_1st_moment` and `compute_2nd_moment`).
pub fn moments(plane: &[f32]) -> (f64, f64) {
    let (mut first, mut second) = (0.0f64, 0.0f64);
    for &v in plane {
        first += f64::from(v);
        second += f64::from(v * v);
    }
    let n = plane.len() as f64;
    (first / n, second / n)
}

/// The float planes are kept from frame to frame.
#[derive(Default)]
struct MomentCpu {
    plane: Vec<f32>,
}

impl MomentCpu {
    /// The (1st, 2nd) moments of a frame's luma as moment.c computes them.
    fn moments(&mut self, frame: &Frame) -> (f64, f64) {
        let geometry = &frame.geometry;
        let n = geometry.plane_samples(0);
        // The bound is the samples' own (OR-ed), not the bit depth's: a
        // 10-bit file may hold larger words, whose float squares round.
        let (sum, squares, bits) = sum_and_squares(frame.plane(0));
        if float_sums_are_exact(n, bits) {
            // Each v / s, its f32 square v² / s² and every partial sum in
            // double are exact (see `float_sums_are_exact`): moment.c's sums
            // are the integer sums over s and s², in any order.
            let s = f64::from(scaler(geometry.bit_depth));
            return (sum as f64 / s / n as f64, squares as f64 / (s * s) / n as f64);
        }
        float_plane_into(frame, 0, 0, &mut self.plane);
        moments(&self.plane)
    }
}

impl Extractor for MomentCpu {
    fn extract(&mut self, index: usize, reference: &Frame, distorted: &Frame, out: &mut Scores) -> Result<()> {
        let ((r1, r2), (d1, d2)) = (self.moments(reference), self.moments(distorted));
        for (name, value) in METRICS.iter().zip([r1, d1, r2, d2]) {
            out.record(name, index, value);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_moments_have_the_float_loops_bits() {
        use crate::features::picture::float_plane;
        use crate::features::sums::random_frame;
        use crate::fixture::Chroma;
        for bit_depth in [8, 10, 12, 16] {
            for (width, height) in [(48, 32), (37, 23), (1, 1)] {
                let geometry = Geometry { width, height, bit_depth, chroma: Chroma::Yuv420 };
                let frame = random_frame(geometry, u64::from(bit_depth));
                let (a, b) = (MomentCpu::default().moments(&frame), moments(&float_plane(&frame, 0, 0)));
                assert_eq!((a.0.to_bits(), a.1.to_bits()), (b.0.to_bits(), b.1.to_bits()), "{geometry}");
            }
        }
    }

    /// A 10- or 12-bit file may hold words above its bit depth's maximum;
    /// libvmaf reads them as they are and rounds their float squares. The
    /// integer path took the bit depth's word for it and was 0.038 off on
    /// a 64x32 10-bit frame (found against libvmaf 3.2.0).
    #[test]
    fn samples_above_the_bit_depth_are_squared_as_libvmaf_squares_them() {
        use crate::features::picture::float_plane;
        use crate::fixture::{Chroma, Frame, Samples};
        for bit_depth in [10, 12] {
            let geometry = Geometry { width: 64, height: 32, bit_depth, chroma: Chroma::Yuv420 };
            let mut words: Vec<u16> = (0..geometry.frame_samples()).map(|i| (i * 37 % 1024) as u16).collect();
            for (i, w) in words.iter_mut().enumerate().step_by(5) {
                *w = 65504 - (i % 977) as u16;
            }
            let frame = Frame::new(geometry, Samples::U16(words)).unwrap();
            let (a, b) = (MomentCpu::default().moments(&frame), moments(&float_plane(&frame, 0, 0)));
            assert_eq!((a.0.to_bits(), a.1.to_bits()), (b.0.to_bits(), b.1.to_bits()), "{geometry}");
        }
    }

    #[test]
    fn moments_of_a_constant_plane() {
        assert_eq!(moments(&[3.0; 10]), (3.0, 9.0));
    }
}
