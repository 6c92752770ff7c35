//! `float_vif` on every GPU backend: one host pipeline
//! (kernels/float_vif.cl, shaders/float_vif_*.comp). An optional prescale
//! dispatch, then per scale [`FLOAT_VIF_VERTICAL`], [`FLOAT_VIF_HORIZONTAL`]
//! and [`FLOAT_VIF_ROWS`]; the next scale's picture is made on the way.
//! Every pixel's float operations are the CPU reference's, in its order,
//! each rounded on its own, and the sums libvmaf makes in order (each row in
//! column order, then the rows) are made in that order, so the scores are
//! the CPU reference's bits.

use super::float::{LOG2_POLY, StatConsts};
use super::prescale::Resampler;
use super::{FloatParams, PrescaleMethod, ScaleFractions, tables};
use crate::backend::gpu::{Arg, Buffer, Gpu, Kernel, KernelSpec, Stream, groups_for};
use crate::features::Extractor;
use crate::features::gpu::{GpuExtractor, GpuPipeline, floats, planes_bytes, word_buffer};
use crate::features::picture::scaler;
use crate::fixture::Geometry;
use crate::scores::Scores;
use anyhow::{Context, Result, ensure};
use std::sync::Arc;

/// `float_vif_prescale` (kernels/float_vif.cl, shaders/float_vif_prescale.comp):
/// vif_scale_frame_s. Item (x, y, p) writes pixel (x, y) of the `dw` x
/// `dh` picture p (0 reference, 1 distorted; launch 2 in z) as an f32,
/// from the `sw`-wide source of 1-byte (`format` 0) or u16 (1) samples read
/// as picture_copy's `v · inv - 128` (`inv` = 1 / scaler, exact), combining
/// the samples named by `table` — column indices [dw·tx], column weights
/// (f32 bits) [dw·tx], row indices [dh·ty], row weights [dh·ty] — as
/// `method` does: 0 nearest (the one sample), 1 bilinear (Σ (wy·wx)·s,
/// rows outer, the first term not added to 0), 2 bicubic (v = 0; v +=
/// s·(wx·wy)), 3 lanczos4 (sum += wx·wy; v += s·(wx·wy); v / sum).
/// Buffers: src_ref, src_dis, table, dst_ref, dst_dis. Scalars: sw, dw, dh,
/// tx, ty, method, format, inv (f32).
pub static FLOAT_VIF_PRESCALE: KernelSpec =
    KernelSpec { name: "float_vif_prescale", family: "float_vif", workgroup: [64, 4, 1], buffers: 5, scalars: 8 };

/// `float_vif_vertical` (kernels/float_vif.cl, shaders/float_vif_vertical.comp):
/// the vertical passes of one scale, an item per pixel of the `w` x `h`
/// picture. Item (x, y) sums `acc = 0; acc += f[k]·v` over the taps
/// `taps[tap0 .. tap0 + width)` in order and rows `mirror(y - width / 2 +
/// k)` (vif_tools.c's rule) for v = r, d, r·r, d·d, r·d (vif_filter1d_s,
/// _sq_s, _xy_s) and writes the five f32 sums to `vsum[q·w·h + y·w + x]`.
/// On even rows below `2 (h / 2)`, if `sub_width > 0`, it also sums
/// `taps[sub_tap0 .. + sub_width)` over r and d the same way into
/// `vsub[q·w·(h/2) + (y/2)·w + x]`. Samples: 1 byte (`format` 0) or u16
/// (1) read as `v · inv - 128`, or f32 (2).
/// Buffers: ref, dis, taps (f32), vsum, vsub. Scalars: w, h, format, inv
/// (f32), tap0, width, sub_tap0, sub_width.
pub static FLOAT_VIF_VERTICAL: KernelSpec =
    KernelSpec { name: "float_vif_vertical", family: "float_vif", workgroup: [64, 4, 1], buffers: 5, scalars: 8 };

/// `float_vif_vertical_strip` (kernels/float_vif.cl,
/// shaders/float_vif_vertical_strip.comp): [`FLOAT_VIF_VERTICAL`]'s
/// contract and bits in the shape for CPU drivers ([`super::SHAPE_VAR`]):
/// item (x, g) makes rows `8g .. 8g + 7` (below `h`) of column x, and the
/// next scale's rows `4g .. 4g + 3` (below `h / 2`). Launch `ceil(w / 64)`
/// x `ceil(h / 8)` groups. Each sample of the column is loaded once into an
/// eight-wide window that slides a row per tap; the next scale's filter
/// (the middle `sub_width` taps of this scale's rows) adds from the same
/// window in its own tap order, with no loads of its own.
pub static FLOAT_VIF_VERTICAL_STRIP: KernelSpec =
    KernelSpec { name: "float_vif_vertical_strip", family: "float_vif", workgroup: [64, 1, 1], buffers: 5, scalars: 8 };

/// `float_vif_vertical_strip_bytes`: [`FLOAT_VIF_VERTICAL_STRIP`] for
/// `format` 0 only, which the caller guarantees (the Vulkan dialect reads
/// no other format: lavapipe would run every format's loads,
/// shaders/include/float_vif_samples_bytes.glsl).
pub static FLOAT_VIF_VERTICAL_STRIP_BYTES: KernelSpec = KernelSpec {
    name: "float_vif_vertical_strip_bytes",
    family: "float_vif",
    workgroup: [64, 1, 1],
    buffers: 5,
    scalars: 8,
};

/// `float_vif_vertical_quads` (kernels/float_vif.cl,
/// shaders/float_vif_vertical_quads.comp): [`FLOAT_VIF_VERTICAL_STRIP`]'s
/// outputs for `format` 0 on pictures whose width is a multiple of 4,
/// which the caller guarantees; item (q, g) makes rows `8g .. 8g + 7` of
/// columns `4q .. 4q + 3` (launch `ceil(w / 4 / 64)` x `ceil(h / 8)`
/// groups). The Vulkan dialect reads a row's four samples as one word and
/// writes each sum of the four columns as one vec4: lavapipe loads and
/// stores a storage buffer lane by lane, so
/// [`FLOAT_VIF_VERTICAL_STRIP_BYTES`]' load a sample and store a sum were
/// its cost. Same buffers and scalars.
pub static FLOAT_VIF_VERTICAL_QUADS: KernelSpec =
    KernelSpec { name: "float_vif_vertical_quads", family: "float_vif", workgroup: [64, 1, 1], buffers: 5, scalars: 8 };

/// `float_vif_vertical_strip_floats`: the same for `format` 2 (the
/// prescaled picture and scales 1-3).
pub static FLOAT_VIF_VERTICAL_STRIP_FLOATS: KernelSpec = KernelSpec {
    name: "float_vif_vertical_strip_floats",
    family: "float_vif",
    workgroup: [64, 1, 1],
    buffers: 5,
    scalars: 8,
};

/// Rows of a column a `float_vif_vertical_strip` item makes.
pub const VERTICAL_STRIP: usize = 8;

/// `float_vif_horizontal` (kernels/float_vif.cl, shaders/float_vif_horizontal.comp):
/// item (x, y) sums `acc = 0; acc += f[k]·vsum_q[y][mirror(x - width / 2 +
/// k)]` in tap order for the five planes, computes vif_statistic_s's
/// (num_val, den_val) with its every float and double operation (dparams
/// = [vif_sigma_nsq]; `gain_limit` and `sigma_max_inv` as libvmaf's floats;
/// `taps[256..265]` = log2f_approx's coefficients, which the Vulkan
/// dialect holds as constants instead) and writes them to
/// `stat[y·w + x]` and `stat[w·h + y·w + x]`. With `sub_width > 0`, at even
/// x below `2 (w / 2)` and even y below `2 (h / 2)` it also filters row
/// y/2 of `vsub` the same way and writes `next_ref` /
/// `next_dis[(y/2)·(w/2) + x/2]` (vif_dec2_s of the filtered picture).
/// Buffers: vsum, vsub, taps, dparams (f64), stat, next_ref, next_dis.
/// Scalars: w, h, tap0, width, sub_tap0, sub_width, gain_limit (f32),
/// sigma_max_inv (f32).
pub static FLOAT_VIF_HORIZONTAL: KernelSpec =
    KernelSpec { name: "float_vif_horizontal", family: "float_vif", workgroup: [64, 4, 1], buffers: 7, scalars: 8 };

/// `float_vif_horizontal_strip` (kernels/float_vif.cl,
/// shaders/float_vif_horizontal_strip.comp): [`FLOAT_VIF_HORIZONTAL`]'s
/// contract and bits in the shape for CPU drivers ([`super::SHAPE_VAR`]):
/// item (t, y) makes pixels `8t .. 8t + 7` of row y (those below `w`),
/// and, on even rows, the next scale's pixels `4t .. 4t + 3`. Launch
/// `ceil(ceil(w / 8) / 64)` x `h` groups. Each sample of the row is loaded
/// once into an eight-wide window that slides a column per tap, where an
/// item per pixel loads it `width` times: lavapipe loads storage buffers
/// lane by lane, so the loads are what a CPU driver spends its time on.
pub static FLOAT_VIF_HORIZONTAL_STRIP: KernelSpec = KernelSpec {
    name: "float_vif_horizontal_strip",
    family: "float_vif",
    workgroup: [64, 1, 1],
    buffers: 7,
    scalars: 8,
};

/// Pixels a `float_vif_horizontal_strip` item makes.
pub const STRIP: usize = 8;

/// `float_vif_rows` (kernels/float_vif.cl, shaders/float_vif_rows.comp):
/// item i below `2h` adds row i / 2 of `stat`'s plane i % 2 (num_val,
/// den_val) in column order, in f32 from 0, into `rows[i]`
/// (vif_statistic_s's row sums; the host adds the rows in order). Launch
/// `ceil(2h / 16)` groups (small groups: the rows spread over every SM of a GPU, whose L1s each serve a row per lane of a load). Buffers: stat, rows. Scalars: w, h.
pub static FLOAT_VIF_ROWS: KernelSpec =
    KernelSpec { name: "float_vif_rows", family: "float_vif", workgroup: [16, 1, 1], buffers: 2, scalars: 2 };

pub static KERNELS: &[&KernelSpec] = &[
    &FLOAT_VIF_PRESCALE,
    &FLOAT_VIF_VERTICAL,
    &FLOAT_VIF_VERTICAL_STRIP,
    &FLOAT_VIF_VERTICAL_STRIP_BYTES,
    &FLOAT_VIF_VERTICAL_STRIP_FLOATS,
    &FLOAT_VIF_VERTICAL_QUADS,
    &FLOAT_VIF_HORIZONTAL,
    &FLOAT_VIF_HORIZONTAL_STRIP,
    &FLOAT_VIF_ROWS,
];

/// Where log2f_approx's coefficients sit in the taps buffer (after every
/// scale's filter: at most 69 + 37 + 21 + 13 taps).
const POLY0: usize = 256;

pub fn extractor(gpu: Arc<dyn Gpu>, geometry: &Geometry, params: FloatParams) -> Result<Box<dyn Extractor>> {
    let strip = super::strip_shape(gpu.device())?;
    let horizontal = if strip { &FLOAT_VIF_HORIZONTAL_STRIP } else { &FLOAT_VIF_HORIZONTAL };
    let [horizontal, rows] = [horizontal, &FLOAT_VIF_ROWS].map(|k| gpu.load_kernel(k));
    let resampler = Resampler::new(params.prescale_method, geometry, params.scaled(geometry));
    // Loaded only where it runs: on lavapipe building a pipeline is a NIR
    // translation in every run (7-11 ms for this one).
    let prescale = if resampler.is_identity() { None } else { Some(gpu.load_kernel(&FLOAT_VIF_PRESCALE)?) };
    let formats: [u32; 4] = std::array::from_fn(|s| input_format(s, geometry, &resampler));
    let (w, h) = resampler.dst;
    let dims: [(usize, usize); 4] = std::array::from_fn(|s| (w >> s, h >> s));
    let quads: [bool; 4] = std::array::from_fn(|s| strip && formats[s] == 0 && dims[s].0.is_multiple_of(4));
    let vertical = vertical_kernels(gpu.as_ref(), strip, formats, quads)?;
    let filters: [Vec<f32>; 4] = std::array::from_fn(|s| tables::float_filter(s, params.kernelscale));
    let mut taps = vec![0.0f32; POLY0];
    let mut tap0 = [0u32; 4];
    let mut at = 0;
    for (s, f) in filters.iter().enumerate() {
        tap0[s] = at as u32;
        taps[at..at + f.len()].copy_from_slice(f);
        at += f.len();
    }
    ensure!(at <= POLY0, "float_vif's filters take {at} taps, more than the {POLY0} the kernels expect");
    taps.extend(LOG2_POLY);
    let consts = StatConsts::new(params.sigma_nsq, params.gain_limit);
    // The tables of the resampling: column indices, column weights, row
    // indices, row weights, as u32 words.
    let table: Vec<u32> = resampler
        .cols
        .index
        .iter()
        .map(|&i| i as u32)
        .chain(resampler.cols.weight.iter().map(|w| w.to_bits()))
        .chain(resampler.rows.index.iter().map(|&i| i as u32))
        .chain(resampler.rows.weight.iter().map(|w| w.to_bits()))
        .collect();
    let upload = |words: Vec<u8>| -> Result<Buffer> {
        let buffer = gpu.create_buffer(words.len().max(4))?;
        let mut stream = gpu.create_stream()?;
        stream.upload(&buffer, 0, &words)?;
        stream.wait()?;
        Ok(buffer)
    };
    let constants = [
        upload(taps.iter().flat_map(|t| t.to_le_bytes()).collect())?,
        upload(params.sigma_nsq.to_le_bytes().to_vec())?,
        upload(table.iter().flat_map(|t| t.to_le_bytes()).collect())?,
    ];
    let pipeline = FloatGpu {
        prescale,
        kernels: [horizontal?, rows?],
        vertical,
        formats,
        strip,
        quads,
        geometry: *geometry,
        dims,
        tap0,
        widths: filters.each_ref().map(|f| f.len() as u32),
        consts,
        resampler,
        params,
        constants,
    };
    GpuExtractor::boxed(gpu, pipeline)
}

/// The sample format each scale's vertical pass reads (`format` of
/// [`FLOAT_VIF_VERTICAL`]): the luma's bytes (0) or u16s (1) at scale 0,
/// f32s (2) where the luma was prescaled and at scales 1-3.
fn input_format(scale: usize, geometry: &Geometry, resampler: &Resampler) -> u32 {
    if scale > 0 || !resampler.is_identity() { 2 } else { u32::from(geometry.bit_depth > 8) }
}

/// Each scale's vertical kernel: [`FLOAT_VIF_VERTICAL`] on GPUs; in the
/// strip shape [`FLOAT_VIF_VERTICAL_QUADS`] where `quads` says (bytes,
/// rows of whole words), else the variant for the scale's sample format
/// where there is one (bytes, f32s), else [`FLOAT_VIF_VERTICAL_STRIP`].
fn vertical_kernels(gpu: &dyn Gpu, strip: bool, formats: [u32; 4], quads: [bool; 4]) -> Result<[Kernel; 4]> {
    let spec = |s: usize| match (strip, quads[s], formats[s]) {
        (false, _, _) => &FLOAT_VIF_VERTICAL,
        (true, true, _) => &FLOAT_VIF_VERTICAL_QUADS,
        (true, false, 0) => &FLOAT_VIF_VERTICAL_STRIP_BYTES,
        (true, false, 2) => &FLOAT_VIF_VERTICAL_STRIP_FLOATS,
        (true, false, _) => &FLOAT_VIF_VERTICAL_STRIP,
    };
    let [a, b, c, d] = [0, 1, 2, 3].map(|s| gpu.load_kernel(spec(s)));
    Ok([a?, b?, c?, d?])
}

struct FloatGpu {
    /// The prescaling kernel, where the luma is prescaled.
    prescale: Option<Kernel>,
    /// horizontal (or its strip shape), rows.
    kernels: [Kernel; 2],
    /// Each scale's vertical pass ([`vertical_kernels`]) and the format it
    /// reads.
    vertical: [Kernel; 4],
    formats: [u32; 4],
    /// Whether the vertical and horizontal kernels are the strip shape's.
    strip: bool,
    /// Per scale: whether its vertical kernel is [`FLOAT_VIF_VERTICAL_QUADS`].
    quads: [bool; 4],
    geometry: Geometry,
    /// Each scale's picture size: the prescaled luma halved `s` times.
    dims: [(usize, usize); 4],
    tap0: [u32; 4],
    widths: [u32; 4],
    consts: StatConsts,
    resampler: Resampler,
    params: FloatParams,
    /// taps (+ log2 coefficients), dparams, the resampling tables.
    constants: [Buffer; 3],
}

struct FloatSlot {
    reference: Buffer,
    distorted: Buffer,
    /// The prescaled pictures (unused without prescaling).
    scaled: [Buffer; 2],
    vsum: Buffer,
    vsub: Buffer,
    stat: Buffer,
    /// The pictures of scales 1 to 3, reference then distorted (f32).
    planes: [[Buffer; 2]; 3],
    /// Each scale's row sums.
    rows: [Buffer; 4],
}

impl GpuPipeline for FloatGpu {
    type Slot = FloatSlot;

    fn new_slot(&self, gpu: &dyn Gpu) -> Result<Self::Slot> {
        let luma = planes_bytes(&self.geometry, 1);
        let (w, h) = self.dims[0];
        let f32s = |n: usize| gpu.create_buffer((n * 4).max(4));
        let plane = |s: usize| f32s(self.dims[s].0 * self.dims[s].1);
        let scaled = if self.resampler.is_identity() { 1 } else { w * h };
        let [r0, r1, r2, r3] = [0, 1, 2, 3].map(|s| f32s(2 * self.dims[s].1));
        Ok(FloatSlot {
            reference: word_buffer(gpu, luma)?,
            distorted: word_buffer(gpu, luma)?,
            scaled: [f32s(scaled)?, f32s(scaled)?],
            vsum: f32s(5 * w * h)?,
            vsub: f32s(2 * w * (h / 2))?,
            stat: f32s(2 * w * h)?,
            planes: [[plane(1)?, plane(1)?], [plane(2)?, plane(2)?], [plane(3)?, plane(3)?]],
            rows: [r0?, r1?, r2?, r3?],
        })
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    fn planes(&self) -> usize {
        1
    }

    fn inputs<'a>(&self, slot: &'a Self::Slot) -> [&'a Buffer; 2] {
        [&slot.reference, &slot.distorted]
    }

    fn compute(&self, b: &Self::Slot, stream: &mut dyn Stream) -> Result<()> {
        let [horizontal, rows] = &self.kernels;
        let [taps, dparams, table] = &self.constants;
        let inv = 1.0 / scaler(self.geometry.bit_depth);
        let raw = u32::from(self.geometry.bit_depth > 8);
        let scaled = !self.resampler.is_identity();
        if scaled {
            let prescale = self.prescale.as_ref().context("float_vif: the prescaling kernel was not loaded")?;
            let r = &self.resampler;
            let method = match r.method {
                PrescaleMethod::Nearest => 0,
                PrescaleMethod::Bilinear => 1,
                PrescaleMethod::Bicubic => 2,
                PrescaleMethod::Lanczos4 => 3,
            };
            let mut args = vec![
                Arg::Buffer(&b.reference),
                Arg::Buffer(&b.distorted),
                Arg::Buffer(table),
                Arg::Buffer(&b.scaled[0]),
                Arg::Buffer(&b.scaled[1]),
            ];
            let (dw, dh) = r.dst;
            args.extend(
                [r.src.0 as u32, dw as u32, dh as u32, r.cols.taps as u32, r.rows.taps as u32, method, raw]
                    .map(Arg::U32),
            );
            args.push(Arg::F32(inv));
            let [wx, wy, _] = FLOAT_VIF_PRESCALE.workgroup;
            stream.dispatch(prescale, [groups_for(dw, wx), groups_for(dh, wy), 2], &args)?;
        }
        for s in 0..4 {
            let (w, h) = self.dims[s];
            let src = match s {
                0 if scaled => [&b.scaled[0], &b.scaled[1]],
                0 => [&b.reference, &b.distorted],
                _ => [&b.planes[s - 1][0], &b.planes[s - 1][1]],
            };
            let format = self.formats[s];
            let (sub_tap0, sub_width) = if s < 3 { (self.tap0[s + 1], self.widths[s + 1]) } else { (0, 0) };
            let mut args = vec![
                Arg::Buffer(src[0]),
                Arg::Buffer(src[1]),
                Arg::Buffer(taps),
                Arg::Buffer(&b.vsum),
                Arg::Buffer(&b.vsub),
            ];
            args.extend([Arg::U32(w as u32), Arg::U32(h as u32), Arg::U32(format), Arg::F32(inv)]);
            args.extend([self.tap0[s], self.widths[s], sub_tap0, sub_width].map(Arg::U32));
            let [wx, wy, _] = FLOAT_VIF_VERTICAL.workgroup;
            let grid = [groups_for(w, wx), groups_for(h, wy), 1];
            let vgrid = if self.quads[s] {
                [groups_for(w / 4, FLOAT_VIF_VERTICAL_QUADS.workgroup[0]), groups_for(h, VERTICAL_STRIP as u32), 1]
            } else if self.strip {
                [groups_for(w, FLOAT_VIF_VERTICAL_STRIP.workgroup[0]), groups_for(h, VERTICAL_STRIP as u32), 1]
            } else {
                grid
            };
            stream.dispatch(&self.vertical[s], vgrid, &args)?;
            let next = if s < 3 { &b.planes[s] } else { &b.planes[2] };
            let mut args = vec![
                Arg::Buffer(&b.vsum),
                Arg::Buffer(&b.vsub),
                Arg::Buffer(taps),
                Arg::Buffer(dparams),
                Arg::Buffer(&b.stat),
                Arg::Buffer(&next[0]),
                Arg::Buffer(&next[1]),
            ];
            args.extend([w as u32, h as u32, self.tap0[s], self.widths[s], sub_tap0, sub_width].map(Arg::U32));
            args.extend([Arg::F32(self.consts.gain_limit), Arg::F32(self.consts.sigma_max_inv)]);
            let hgrid = if self.strip {
                [groups_for(w.div_ceil(STRIP), FLOAT_VIF_HORIZONTAL_STRIP.workgroup[0]), h as u32, 1]
            } else {
                grid
            };
            stream.dispatch(horizontal, hgrid, &args)?;
            let args = [Arg::Buffer(&b.stat), Arg::Buffer(&b.rows[s]), Arg::U32(w as u32), Arg::U32(h as u32)];
            stream.dispatch(rows, [groups_for(2 * h, FLOAT_VIF_ROWS.workgroup[0]), 1, 1], &args)?;
        }
        for s in 0..4 {
            stream.download(&b.rows[s], 0, 2 * self.dims[s].1 * 4)?;
        }
        Ok(())
    }

    fn finish(&self, index: usize, downloads: &[Vec<u8>], out: &mut Scores) -> Result<()> {
        ensure!(downloads.len() == 4, "expected 4 row-sum downloads, got {}", downloads.len());
        let mut fractions: ScaleFractions = [(0.0, 0.0); 4];
        for (s, bytes) in downloads.iter().enumerate() {
            let rows: Vec<f32> = floats(bytes).collect();
            ensure!(rows.len() == 2 * self.dims[s].1, "scale {s}: expected {} row sums", 2 * self.dims[s].1);
            // vif_statistic_s: the rows in order, in f32.
            let (mut num, mut den) = (0.0f32, 0.0f32);
            for pair in rows.chunks_exact(2) {
                num += pair[0];
                den += pair[1];
            }
            fractions[s] = (num, den);
        }
        self.params.scoring().record(index, &fractions, out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Vulkan dialect holds log2f_approx's coefficients as constants
    /// (shaders/include/float_vif_log2.glsl): they must be LOG2_POLY's
    /// bits, in Horner order, as the C dialect reads them from the taps.
    #[test]
    fn the_vulkan_log2_holds_the_cpu_coefficients() {
        let source = include_str!("../../../shaders/include/float_vif_log2.glsl");
        let steps: Vec<u32> = source
            .lines()
            .filter_map(|line| line.trim().strip_prefix("v = v * t + uintBitsToFloat(0x")?.strip_suffix("u);"))
            .map(|hex| u32::from_str_radix(hex, 16).expect("a hex constant"))
            .collect();
        let expected: Vec<u32> = LOG2_POLY.iter().map(|c| c.to_bits()).collect();
        assert_eq!(steps, expected);
    }
}
