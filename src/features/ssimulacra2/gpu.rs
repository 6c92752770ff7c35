//! The GPU pipeline of `ssimulacra2`, one for every backend: per frame pair
//! one dispatch for scale 0's linear RGB and XYB, then per scale (a
//! downsample with XYB from scale 1 on) the row pass of the blur and the
//! column pass with the maps, and one last dispatch that adds each plane's
//! map sums: 3 per scale plus 1, 18 at most, and 864 bytes read back.
//!
//! Every per-pixel operation is the CPU reference's, in its order (the
//! kernels' comments say which C function each mirrors), so every blurred
//! value and every map value is the CPU's. The one difference: the CPU
//! (as the fork) adds each plane's map values in raster order, the GPU
//! down each column and then across the columns. Those are f64 sums of at
//! most a few million non-negative terms; docs/features/ssimulacra2.md
//! gives the residual measured on lavapipe and PoCL.

use super::blur::RecursiveGaussian;
use super::color::{YuvToRgb, eotf_lut};
use super::maps::ChannelSums;
use super::xyb::Opsin;
use super::{Params, scales, score};
use crate::backend::gpu::{Arg, Buffer, Gpu, Kernel, KernelSpec, Stream, groups_for};
use crate::features::Extractor;
use crate::features::gpu::{GpuExtractor, GpuPipeline, planes_bytes, word_buffer};
use crate::fixture::Geometry;
use crate::scores::Scores;
use anyhow::{Result, ensure};
use std::sync::Arc;

/// `ssimulacra2_linear_xyb` (kernels/ssimulacra2.cl, shaders/
/// ssimulacra2_linear_xyb.comp): a work item per pixel of scale 0, `[x,
/// y]` = (global id 0, group id 1); launch `[ceil(width / 64), height, 1]`.
/// ssimulacra2.c `picture_to_linear_rgb` of both pictures (samples times
/// `inv_peak`, minus the offsets, times the scales, the matrix, clamped to
/// [0, 1], the EOTF table interpolated; chroma read at `read_plane`'s
/// coordinate) and `linear_rgb_to_xyb` (with `vmaf_ss2_cbrtf`), every f32
/// operation as [`YuvToRgb::nonlinear`], [`super::color::srgb_eotf`] and
/// [`Opsin::xyb`] do it. Buffers: reference and distorted frames (all three
/// planes, 1 or 2 bytes a sample), the EOTF table (1024 f32; a uniform
/// block in the Vulkan dialect), `lin` and
/// `xyb` (six width x height f32 planes: the reference's three, then the
/// distorted's). Scalars: width, height, chroma width, chroma height, bytes
/// per sample, then the f32 constants inv_peak, y_off, y_scale, c_scale,
/// cr_r, cb_g, cr_g, cb_b (of [`YuvToRgb`]) and m01, m11, m22, cbrt_bias (of
/// [`Opsin`]).
pub static LINEAR_XYB: KernelSpec = KernelSpec {
    name: "ssimulacra2_linear_xyb",
    family: "ssimulacra2",
    workgroup: [64, 1, 1],
    buffers: 5,
    scalars: 17,
};

/// `ssimulacra2_downsample_xyb`: a work item per pixel of the next scale
/// (`(in_width + 1) / 2` x `(in_height + 1) / 2`), launched as
/// [`LINEAR_XYB`]. `downsample_2x2` of the six planes of `lin_in` into
/// `lin_out`, as [`super::pyramid::downsample_2x2`] computes each pixel,
/// then `linear_rgb_to_xyb` of it into `xyb`. Buffers: lin_in, lin_out,
/// xyb. Scalars: in_width, in_height, m01, m11, m22, cbrt_bias.
pub static DOWNSAMPLE_XYB: KernelSpec = KernelSpec {
    name: "ssimulacra2_downsample_xyb",
    family: "ssimulacra2",
    workgroup: [64, 1, 1],
    buffers: 3,
    scalars: 6,
};

/// `ssimulacra2_blur_rows`: a work item per row y and channel c, item
/// `c * height + y` (global id 0) of a launch `[ceil(3 height / 64), 1, 1]`
/// (three channels' rows in one run of groups: a group row per channel
/// left up to 63 of a group's items idle in each, which a CPU driver runs
/// as if they worked). `fast_gaussian_1d`
/// along row y of the five blur inputs of channel c (ref, dist, ref * ref,
/// dist * dist, ref * dist of `xyb`, each product rounded to f32) into
/// `rows` plane `5c + k`, as [`super::blur::RecursiveGaussian::blur_line`]
/// computes it. Buffers: xyb (six planes), rows (fifteen planes). Scalars:
/// width, height, n2[0..3], d1[0..3] (f32), radius (5, ssimulacra2's only
/// one: the GLSL dialect unrolls its ring of the last 2 * radius samples).
pub static BLUR_ROWS: KernelSpec =
    KernelSpec { name: "ssimulacra2_blur_rows", family: "ssimulacra2", workgroup: [64, 1, 1], buffers: 2, scalars: 9 };

/// `ssimulacra2_blur_columns_maps`: a work item per column x (global id 0)
/// and channel c (group id 1): launch `[ceil(width / 64), 3, 1]`. The
/// column pass of `blur_plane` down column x of `rows` planes `5c..5c + 5`
/// (as [`super::blur::ColumnIir::step`]), and at every row the pixel's
/// [`super::maps::ssim_error`] and [`super::maps::edge_change`] (`xyb` gives
/// the unblurred pictures), summed in f64 down the column as
/// [`super::maps::add_row`] sums them: d, d^4, artifact, artifact^4, detail
/// lost, detail lost^4 into `sums[base + (6c + j) * stride + x]`. Buffers:
/// xyb, rows, sums (f64). Scalars: width, height, n2[0..3], d1[0..3],
/// radius (5, as [`BLUR_ROWS`]), base, stride.
pub static BLUR_COLUMNS_MAPS: KernelSpec = KernelSpec {
    name: "ssimulacra2_blur_columns_maps",
    family: "ssimulacra2",
    workgroup: [64, 1, 1],
    buffers: 3,
    scalars: 11,
};

/// `ssimulacra2_sum_columns`: one group of 128; work item t < 108 adds in
/// f64, in column order, the column sums of term `t % 18` of scale `t /
/// 18` (at `sums[(t / 18 * 18 + t % 18) * width0 ..]`, the scale's width
/// being width0 halved `t / 18` times, rounding up) into `totals[t]`; 0 for
/// a scale from `scales` on. Buffers: sums, totals (108 f64). Scalars:
/// width0, scales.
pub static SUM_COLUMNS: KernelSpec = KernelSpec {
    name: "ssimulacra2_sum_columns",
    family: "ssimulacra2",
    workgroup: [128, 1, 1],
    buffers: 2,
    scalars: 2,
};

/// How far the tests let a GPU score lie from the CPU reference's: only the
/// order of the f64 map sums differs (the per-pixel values are the CPU's
/// bits: the tests hold the GPU to [`super::SumOrder::Columns`] exactly),
/// which moves scores by about 1e-13 at the sizes the tests run; 1e-10 is
/// far above that and far below the registry's 5e-3.
pub const SUM_ORDER_TOLERANCE: f64 = 1e-10;

/// Terms per scale: six sums of each of three channels.
const TERMS: usize = 18;

pub(super) fn extractor(gpu: Arc<dyn Gpu>, params: Params) -> Result<Box<dyn Extractor>> {
    let (w, h) = params.geometry.plane_dims(0);
    // The kernels index the fifteen row-blurred planes with 32-bit integers.
    ensure!(
        (15 * w * h) as u64 <= u64::from(u32::MAX),
        "ssimulacra2 on the GPU takes frames up to 286 million pixels, got {}",
        params.geometry
    );
    let rg = RecursiveGaussian::ssimulacra2();
    // The GLSL blur kernels keep 2 * radius samples in registers, unrolled.
    ensure!(rg.radius == 5, "the ssimulacra2 blur kernels take radius 5, got {}", rg.radius);
    let kernels = [&LINEAR_XYB, &DOWNSAMPLE_XYB, &BLUR_ROWS, &BLUR_COLUMNS_MAPS, &SUM_COLUMNS]
        .map(|spec| gpu.load_kernel(spec))
        .into_iter()
        .collect::<Result<Vec<_>>>()?;
    let pipeline = Ssimulacra2Gpu {
        kernels,
        conv: YuvToRgb::new(params.matrix, params.geometry.bit_depth),
        opsin: Opsin::default(),
        rg,
        scales: scales(w, h),
        geometry: params.geometry,
    };
    GpuExtractor::boxed(gpu, pipeline)
}

struct Ssimulacra2Gpu {
    /// In the order of [`super::SSIMULACRA2`]'s kernel list.
    kernels: Vec<Kernel>,
    conv: YuvToRgb,
    opsin: Opsin,
    rg: RecursiveGaussian,
    scales: Vec<(usize, usize)>,
    geometry: Geometry,
}

struct Slot {
    reference: Buffer,
    distorted: Buffer,
    lut: Buffer,
    /// Linear RGB of both pictures, one buffer per scale.
    lin: Vec<Buffer>,
    /// XYB of both pictures at the current scale.
    xyb: Buffer,
    /// The row-blurred statistics at the current scale (15 planes).
    rows: Buffer,
    /// Per scale and term, the column sums (f64).
    column_sums: Buffer,
    totals: Buffer,
}

impl Ssimulacra2Gpu {
    fn blur_scalars(&self) -> [Arg<'static>; 7] {
        let (n2, d1) = (self.rg.n2, self.rg.d1);
        [
            Arg::F32(n2[0]),
            Arg::F32(n2[1]),
            Arg::F32(n2[2]),
            Arg::F32(d1[0]),
            Arg::F32(d1[1]),
            Arg::F32(d1[2]),
            Arg::U32(self.rg.radius as u32),
        ]
    }

    fn opsin_scalars(&self) -> [Arg<'static>; 4] {
        let o = self.opsin;
        [Arg::F32(o.m01), Arg::F32(o.m11), Arg::F32(o.m22), Arg::F32(o.cbrt_bias)]
    }
}

/// A buffer of at least one word (a frame below 8x8 has no scale to hold).
fn buffer(gpu: &dyn Gpu, bytes: usize) -> Result<Buffer> {
    gpu.create_buffer(bytes.max(4))
}

impl GpuPipeline for Ssimulacra2Gpu {
    type Slot = Slot;

    fn new_slot(&self, gpu: &dyn Gpu) -> Result<Slot> {
        let frame = planes_bytes(&self.geometry, 3);
        let full = self.scales.first().map_or(0, |&(w, h)| w * h);
        let width0 = self.scales.first().map_or(0, |&(w, _)| w);
        let slot = Slot {
            reference: word_buffer(gpu, frame)?,
            distorted: word_buffer(gpu, frame)?,
            lut: gpu.create_buffer(4 * eotf_lut().len())?,
            lin: self.scales.iter().map(|&(w, h)| buffer(gpu, 6 * 4 * w * h)).collect::<Result<_>>()?,
            xyb: buffer(gpu, 6 * 4 * full)?,
            rows: buffer(gpu, 15 * 4 * full)?,
            column_sums: buffer(gpu, 8 * TERMS * self.scales.len() * width0)?,
            totals: gpu.create_buffer(8 * TERMS * super::NUM_SCALES)?,
        };
        // The EOTF table goes up once, the very f32 values the CPU uses.
        let lut: Vec<u8> = eotf_lut().iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut stream = gpu.create_stream()?;
        stream.upload(&slot.lut, 0, &lut)?;
        stream.wait()?;
        Ok(slot)
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    fn planes(&self) -> usize {
        3
    }

    fn inputs<'a>(&self, slot: &'a Slot) -> [&'a Buffer; 2] {
        [&slot.reference, &slot.distorted]
    }

    fn compute(&self, b: &Slot, stream: &mut dyn Stream) -> Result<()> {
        let [linear_xyb, downsample_xyb, blur_rows, blur_columns_maps, sum_columns] = &self.kernels[..] else {
            unreachable!("five kernels are loaded")
        };
        let width0 = self.scales.first().map_or(0, |&(w, _)| w);
        if let Some(&(w, h)) = self.scales.first() {
            let (cw, ch) = self.geometry.plane_dims(1);
            let c = self.conv;
            let mut args = vec![
                Arg::Buffer(&b.reference),
                Arg::Buffer(&b.distorted),
                Arg::Buffer(&b.lut),
                Arg::Buffer(&b.lin[0]),
                Arg::Buffer(&b.xyb),
                Arg::U32(w as u32),
                Arg::U32(h as u32),
                Arg::U32(cw as u32),
                Arg::U32(ch as u32),
                Arg::U32(self.geometry.bytes_per_sample() as u32),
            ];
            args.extend([c.inv_peak, c.y_off, c.y_scale, c.c_scale, c.cr_r, c.cb_g, c.cr_g, c.cb_b].map(Arg::F32));
            args.extend(self.opsin_scalars());
            stream.dispatch(linear_xyb, [groups_for(w, 64), h as u32, 1], &args)?;
        }
        for (s, &(w, h)) in self.scales.iter().enumerate() {
            if s > 0 {
                let (iw, ih) = self.scales[s - 1];
                let mut args = vec![
                    Arg::Buffer(&b.lin[s - 1]),
                    Arg::Buffer(&b.lin[s]),
                    Arg::Buffer(&b.xyb),
                    Arg::U32(iw as u32),
                    Arg::U32(ih as u32),
                ];
                args.extend(self.opsin_scalars());
                stream.dispatch(downsample_xyb, [groups_for(w, 64), h as u32, 1], &args)?;
            }
            let mut args = vec![Arg::Buffer(&b.xyb), Arg::Buffer(&b.rows), Arg::U32(w as u32), Arg::U32(h as u32)];
            args.extend(self.blur_scalars());
            stream.dispatch(blur_rows, [groups_for(3 * h, 64), 1, 1], &args)?;
            let mut args = vec![
                Arg::Buffer(&b.xyb),
                Arg::Buffer(&b.rows),
                Arg::Buffer(&b.column_sums),
                Arg::U32(w as u32),
                Arg::U32(h as u32),
            ];
            args.extend(self.blur_scalars());
            args.extend([Arg::U32((s * TERMS * width0) as u32), Arg::U32(width0 as u32)]);
            stream.dispatch(blur_columns_maps, [groups_for(w, 64), 3, 1], &args)?;
        }
        // Always run, even with no scale (it writes zeros): the score comes
        // from the device.
        let args = [
            Arg::Buffer(&b.column_sums),
            Arg::Buffer(&b.totals),
            Arg::U32(width0 as u32),
            Arg::U32(self.scales.len() as u32),
        ];
        stream.dispatch(sum_columns, [1, 1, 1], &args)?;
        stream.download(&b.totals, 0, 8 * TERMS * super::NUM_SCALES)
    }

    fn finish(&self, index: usize, downloads: &[Vec<u8>], out: &mut Scores) -> Result<()> {
        let totals: Vec<f64> =
            downloads[0].chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
        ensure!(totals.len() == TERMS * super::NUM_SCALES, "expected 108 sums, got {}", totals.len());
        let sums: Vec<[ChannelSums; 3]> = (0..self.scales.len())
            .map(|s| std::array::from_fn(|c| std::array::from_fn(|j| totals[s * TERMS + c * 6 + j])))
            .collect();
        out.record("ssimulacra2", index, score::score(&self.scales, &sums));
        Ok(())
    }
}
