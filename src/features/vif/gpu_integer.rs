//! `vif` on every GPU backend: one host pipeline (kernels/vif.cl,
//! shaders/vif_*.wgsl). Each scale is two dispatches, [`VIF_VERTICAL`] then
//! [`VIF_HORIZONTAL`]; the next scale's picture is made on the way (the
//! subsampling filter at the rows and columns the decimation keeps). The
//! sums are integers, so they are exact in any order: every frame's four
//! sums per scale are the CPU reference's, and so are the scores.

use super::integer::ScaleSums;
use super::tables::{INT_FILTERS, log2_table_packed};
use super::{IntegerParams, ScaleFractions};
use crate::backend::gpu::{Arg, Buffer, Gpu, Kernel, KernelSpec, Stream, groups_for};
use crate::features::Extractor;
use crate::features::gpu::{GpuExtractor, GpuPipeline, planes_bytes, sum_u64_partials, word_buffer};
use crate::fixture::Geometry;
use crate::scores::Scores;
use anyhow::{Result, bail, ensure};
use std::sync::Arc;

/// `vif_vertical` (kernels/vif.cl, shaders/vif_vertical.wgsl): the vertical
/// passes of one scale, a work item per pixel of the `w` x `h` picture.
/// Item (x, y) sums, over the taps `taps[tap0 .. tap0 + width)` and rows
/// `mirror(y - width / 2 + k)` (integer_vif.c's border rule), the five
/// sums of vif_statistic_8 (`mode` 8: u32 sums of c·r, c·d, c·r·r, c·d·d,
/// c·r·d, wrapping as C's; writes `(Σ c·r + 128) >> 8`, the same for d,
/// and the three raw sums) or vif_statistic_16 (`mode` 16: u32 sums of
/// c·r and c·d, u64 sums of the products; writes `(u16)((Σ + mu_add) >>
/// mu_shift)` twice and `(u32)((Σ + sq_add) >> sq_shift)` three times) to
/// `vsum[k·w·h + y·w + x]` (k = mu1, mu2, xx, yy, xy). On even rows below
/// `2 (h / 2)`, if `sub_width > 0`, it also sums `taps[sub_tap0 .. +
/// sub_width)` over r and d (u32, wrapping) and writes `(u16)((Σ +
/// sub_add) >> sub_shift)` to `vsub[k·w·(h/2) + (y/2)·w + x]` (the
/// vertical pass of subsample_rd_8 / subsample_rd_16). Samples are 1 byte
/// (`format` 0), a little-endian u16 (1) or a u32 (2) each.
/// Buffers: ref, dis, taps (u32), vsum, vsub. Scalars: w, h, format, tap0,
/// width, mode, mu_add, mu_shift, sq_add, sq_shift, sub_tap0, sub_width,
/// sub_add, sub_shift.
pub static VIF_VERTICAL: KernelSpec =
    KernelSpec { name: "vif_vertical", family: "vif", workgroup: [64, 4, 1], buffers: 5, scalars: 14 };

/// `vif_vertical_strip` (kernels/vif.cl, shaders/vif_vertical_strip.wgsl):
/// [`VIF_VERTICAL`]'s contract and bits in the shape for CPU drivers
/// ([`super::SHAPE_VAR`]). Launch `ceil(w / 64)` x `ceil(h / 8)` groups;
/// item (x, g) makes rows `8g .. 8g + 7` (below `h`) of column x, and the
/// next scale's rows `4g .. 4g + 3` (below `h / 2`). Each sample of the
/// column is loaded once into an eight-wide window that slides a row per
/// tap, where an item per pixel loads it `width` times; the next scale's
/// filter (the middle `sub_width` taps of this scale's rows) adds from the
/// same window, with no loads of its own. Same buffers and scalars as
/// [`VIF_VERTICAL`].
pub static VIF_VERTICAL_STRIP: KernelSpec =
    KernelSpec { name: "vif_vertical_strip", family: "vif", workgroup: [64, 1, 1], buffers: 5, scalars: 14 };

/// `vif_vertical_strip_bytes`: [`VIF_VERTICAL_STRIP`] for `format` 0 and
/// `mode` 8 only (the 8-bit scale 0), which the caller guarantees: the
/// Vulkan dialect reads bytes and makes vif_statistic_8's sums, without
/// the other formats' and mode's code, which lavapipe runs beside the
/// taken side of a run-time choice (shaders/include/vif_strip_bytes.wgsl).
pub static VIF_VERTICAL_STRIP_BYTES: KernelSpec =
    KernelSpec { name: "vif_vertical_strip_bytes", family: "vif", workgroup: [64, 1, 1], buffers: 5, scalars: 14 };

/// `vif_vertical_strip_words`: [`VIF_VERTICAL_STRIP`] for `format` 2 and
/// `mode` 16 only (scales 1-3), likewise.
pub static VIF_VERTICAL_STRIP_WORDS: KernelSpec =
    KernelSpec { name: "vif_vertical_strip_words", family: "vif", workgroup: [64, 1, 1], buffers: 5, scalars: 14 };

/// `vif_vertical_quads` (kernels/vif.cl, shaders/vif_vertical_quads.wgsl):
/// [`VIF_VERTICAL_STRIP`]'s outputs for `format` 0 and `mode` 8 (the 8-bit
/// scale 0) on pictures whose width is a multiple of 4, which the caller
/// guarantees; item (q, g) makes rows `8g .. 8g + 7` of columns `4q .. 4q +
/// 3` (launch `ceil(w / 4 / 64)` x `ceil(h / 8)` groups). The Vulkan
/// dialect reads a row's four samples as one word and writes each sum of
/// the four columns as one vec4: lavapipe loads and stores a storage
/// buffer lane by lane, so [`VIF_VERTICAL_STRIP_BYTES`]' load a sample and
/// store a sum were its cost. Same buffers and scalars as
/// [`VIF_VERTICAL`].
pub static VIF_VERTICAL_QUADS: KernelSpec =
    KernelSpec { name: "vif_vertical_quads", family: "vif", workgroup: [64, 1, 1], buffers: 5, scalars: 14 };

/// Rows of a column a `vif_vertical_strip` item makes.
pub const VERTICAL_STRIP: usize = 8;

/// `vif_horizontal` (kernels/vif.cl, shaders/vif_horizontal.wgsl): the
/// horizontal pass and statistic of one scale. Work group (gx, gy) covers
/// columns `gx·256 + [0, 256)` and rows `gy·8 + [0, 8)`; its item i takes
/// column `gx·256 + i` of each of those rows. At pixel (x, y) it sums
/// `taps[tap0 .. + width)` times `vsum`'s five planes at row y, columns
/// `mirror(x - width / 2 + k)`: mu1, mu2 in u32 (wrapping), xx, yy, xy in
/// u64, and adds the pixel's share to vif_statistic_*'s four sums
/// (integer_vif.c: every integer and double operation kept; `table` the
/// log2 table's entries 32768..65535, two u16 a u32
/// ([`super::tables::log2_table_packed`]: 64 KiB); `dparams` = [vif_enhn_gain_limit,
/// 65536·1e-10]). The group's num_log, den_log, num_non_log and
/// den_non_log go to `partials[8·(gy·groups_x + gx) ..]` as four (lo, hi)
/// u32 pairs. With `sub_width > 0`, at even x below `2 (w / 2)` and even y
/// below `2 (h / 2)` it also filters row y/2 of `vsub` with `taps[sub_tap0
/// .. + sub_width)` (u32, wrapping) and writes `(u16)((Σ + 32768) >> 16)`
/// to `next_ref` / `next_dis[(y/2)·(w/2) + x/2]`: the next scale's
/// picture (decimate_and_pad).
/// Buffers: vsum, vsub, taps, table, dparams (f64), partials, next_ref,
/// next_dis. Scalars: w, h, tap0, width, sub_tap0, sub_width.
pub static VIF_HORIZONTAL: KernelSpec =
    KernelSpec { name: "vif_horizontal", family: "vif", workgroup: [256, 1, 1], buffers: 8, scalars: 6 };

/// `vif_horizontal_strip` (kernels/vif.cl, shaders/vif_horizontal_strip.wgsl):
/// [`VIF_HORIZONTAL`]'s arithmetic and bits in the shape for CPU drivers
/// ([`super::SHAPE_VAR`]). Launch `ceil(ceil(w / 8) / 64)` x `ceil(h / 8)`
/// groups; item (t, g) takes pixels `8t .. 8t + 7` (below `w`) of rows
/// `8g .. 8g + 7` (below `h`), does at each what [`VIF_HORIZONTAL`] does
/// (the statistic's four sums; on even rows the next scale's pixels `4t ..
/// 4t + 3` of row y/2), and writes its own four sums to `partials[8·(g·64·
/// groups_x + t) ..]` as (lo, hi) u32 pairs (every item writes, zeros where
/// it has no pixel). Each sample of a row is loaded once into an eight-wide
/// window that slides a column per tap, where an item per pixel loads it
/// `width` times: lavapipe loads storage buffers lane by lane, so the loads
/// are what a CPU driver spends its time on; no work-group memory or
/// barrier either. Same buffers and scalars as [`VIF_HORIZONTAL`].
pub static VIF_HORIZONTAL_STRIP: KernelSpec =
    KernelSpec { name: "vif_horizontal_strip", family: "vif", workgroup: [64, 1, 1], buffers: 8, scalars: 6 };

/// Pixels of a row a `vif_horizontal_strip` item makes.
pub const STRIP: usize = 8;

/// Rows each `vif_horizontal` work group covers (kernels/vif.cl `VIF_ROWS`).
pub const HORIZONTAL_ROWS: usize = 8;

pub static KERNELS: &[&KernelSpec] = &[
    &VIF_VERTICAL,
    &VIF_VERTICAL_STRIP,
    &VIF_VERTICAL_STRIP_BYTES,
    &VIF_VERTICAL_STRIP_WORDS,
    &VIF_VERTICAL_QUADS,
    &VIF_HORIZONTAL,
    &VIF_HORIZONTAL_STRIP,
];

/// Where each scale's taps start in the taps buffer (17, 9, 5, 3 taps).
const TAP0: [u32; 4] = [0, 17, 26, 31];

pub fn extractor(gpu: Arc<dyn Gpu>, geometry: &Geometry, params: IntegerParams) -> Result<Box<dyn Extractor>> {
    let strip = super::strip_shape(gpu.device())?;
    let quads = strip && geometry.bit_depth == 8 && geometry.plane_dims(0).0.is_multiple_of(4);
    let vertical = vertical_kernels(gpu.as_ref(), strip, quads, geometry.bit_depth)?;
    let horizontal = gpu.load_kernel(if strip { &VIF_HORIZONTAL_STRIP } else { &VIF_HORIZONTAL })?;
    // The constants, uploaded once and shared by every slot.
    let taps: Vec<u8> = INT_FILTERS.iter().flat_map(|t| t.iter()).flat_map(|&c| u32::from(c).to_le_bytes()).collect();
    let table: Vec<u8> = log2_table_packed().iter().flat_map(|&v| v.to_le_bytes()).collect();
    let dparams: Vec<u8> = [params.gain_limit, 65536.0 * 1.0e-10].iter().flat_map(|v| v.to_le_bytes()).collect();
    let constants = [gpu.create_buffer(taps.len())?, gpu.create_buffer(table.len())?, gpu.create_buffer(16)?];
    let mut stream = gpu.create_stream()?;
    for (buffer, bytes) in constants.iter().zip([&taps, &table, &dparams]) {
        stream.upload(buffer, 0, bytes)?;
    }
    stream.wait()?;
    let (w, h) = geometry.plane_dims(0);
    let dims: [(usize, usize); 4] = std::array::from_fn(|s| (w >> s, h >> s));
    let pipeline = IntegerGpu { vertical, horizontal, strip, quads, geometry: *geometry, params, dims, constants };
    GpuExtractor::boxed(gpu, pipeline)
}

/// Each scale's vertical kernel: [`VIF_VERTICAL`] on GPUs; in the strip
/// shape, the kernel made for the scale's input where there is one (the
/// 8-bit scale 0's quads where rows are whole words, else its bytes; the
/// later scales' 16-bit words).
fn vertical_kernels(gpu: &dyn Gpu, strip: bool, quads: bool, bit_depth: u8) -> Result<[Kernel; 4]> {
    if !strip {
        let k = gpu.load_kernel(&VIF_VERTICAL)?;
        return Ok([k.clone(), k.clone(), k.clone(), k]);
    }
    let first = gpu.load_kernel(match (quads, bit_depth) {
        (true, _) => &VIF_VERTICAL_QUADS,
        (false, 8) => &VIF_VERTICAL_STRIP_BYTES,
        _ => &VIF_VERTICAL_STRIP,
    })?;
    let rest = gpu.load_kernel(&VIF_VERTICAL_STRIP_WORDS)?;
    Ok([first, rest.clone(), rest.clone(), rest])
}

struct IntegerGpu {
    /// Per scale.
    vertical: [Kernel; 4],
    horizontal: Kernel,
    /// Whether `vertical` and `horizontal` are [`VIF_VERTICAL_STRIP`]'s
    /// and [`VIF_HORIZONTAL_STRIP`].
    strip: bool,
    /// Whether scale 0's vertical kernel is [`VIF_VERTICAL_QUADS`].
    quads: bool,
    geometry: Geometry,
    params: IntegerParams,
    /// Each scale's picture size (the luma halved `s` times, rounding down).
    dims: [(usize, usize); 4],
    /// taps, log2 table, dparams.
    constants: [Buffer; 3],
}

struct IntegerSlot {
    reference: Buffer,
    distorted: Buffer,
    vsum: Buffer,
    vsub: Buffer,
    /// The pictures of scales 1 to 3, reference then distorted (u32 samples).
    planes: [[Buffer; 2]; 3],
    /// Each scale's group sums.
    partials: [Buffer; 4],
}

impl IntegerGpu {
    fn groups(&self, scale: usize) -> [u32; 2] {
        let (w, h) = self.dims[scale];
        let gx = if self.strip {
            groups_for(w.div_ceil(STRIP), VIF_HORIZONTAL_STRIP.workgroup[0])
        } else {
            groups_for(w, VIF_HORIZONTAL.workgroup[0])
        };
        [gx, groups_for(h, HORIZONTAL_ROWS as u32)]
    }

    /// A partial (four u64 sums) per work group, or per item of the strip
    /// shape.
    fn partials_bytes(&self, scale: usize) -> usize {
        let [gx, gy] = self.groups(scale);
        let per_group = if self.strip { VIF_HORIZONTAL_STRIP.workgroup[0] as usize } else { 1 };
        (gx * gy) as usize * per_group * 4 * 8
    }
}

impl GpuPipeline for IntegerGpu {
    type Slot = IntegerSlot;

    fn new_slot(&self, gpu: &dyn Gpu) -> Result<Self::Slot> {
        let luma = planes_bytes(&self.geometry, 1);
        let (w, h) = self.dims[0];
        let plane = |s: usize| gpu.create_buffer((self.dims[s].0 * self.dims[s].1 * 4).max(4));
        let [p0, p1, p2, p3] = [0, 1, 2, 3].map(|s| gpu.create_buffer(self.partials_bytes(s)));
        Ok(IntegerSlot {
            reference: word_buffer(gpu, luma)?,
            distorted: word_buffer(gpu, luma)?,
            vsum: gpu.create_buffer(5 * w * h * 4)?,
            vsub: gpu.create_buffer((2 * w * (h / 2) * 4).max(4))?,
            planes: [[plane(1)?, plane(1)?], [plane(2)?, plane(2)?], [plane(3)?, plane(3)?]],
            partials: [p0?, p1?, p2?, p3?],
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
        let bpc = u32::from(self.geometry.bit_depth);
        let [taps, table, dparams] = &self.constants;
        for s in 0..4 {
            let (w, h) = self.dims[s];
            let (src, format) = match s {
                0 => ([&b.reference, &b.distorted], u32::from(bpc > 8)),
                _ => ([&b.planes[s - 1][0], &b.planes[s - 1][1]], 2),
            };
            // integer_vif.c: vif_statistic_8 at 8-bit scale 0, else
            // vif_statistic_16 rounding by the bit depth at scale 0.
            let (mode, mu, sq) = match (s, bpc) {
                (0, 8) => (8, (0, 0), (0, 0)),
                (0, b) => (16, (1 << (b - 1), b), (1 << (2 * (b - 8) - 1), 2 * (b - 8))),
                _ => (16, (32768, 16), (32768, 16)),
            };
            // The next scale's filter: subsample_rd_8 (8-bit, from scale
            // 0), subsample_rd_16 with the bit depth's rounding (from
            // scale 0), else 16 bits.
            let (sub_tap0, sub_width, sub) = if s < 3 {
                let round = match (s, bpc) {
                    (0, 8) => (128, 8),
                    (0, b) => (1 << (b - 1), b),
                    _ => (32768, 16),
                };
                (TAP0[s + 1], INT_FILTERS[s + 1].len() as u32, round)
            } else {
                (0, 0, (0, 0))
            };
            let width = INT_FILTERS[s].len() as u32;
            let scalars = [
                w as u32, h as u32, format, TAP0[s], width, mode, mu.0, mu.1, sq.0, sq.1, sub_tap0, sub_width, sub.0,
                sub.1,
            ];
            let mut args = vec![
                Arg::Buffer(src[0]),
                Arg::Buffer(src[1]),
                Arg::Buffer(taps),
                Arg::Buffer(&b.vsum),
                Arg::Buffer(&b.vsub),
            ];
            args.extend(scalars.map(Arg::U32));
            let grid = if self.quads && s == 0 {
                [groups_for(w / 4, VIF_VERTICAL_QUADS.workgroup[0]), groups_for(h, VERTICAL_STRIP as u32), 1]
            } else if self.strip {
                [groups_for(w, VIF_VERTICAL_STRIP.workgroup[0]), groups_for(h, VERTICAL_STRIP as u32), 1]
            } else {
                [groups_for(w, VIF_VERTICAL.workgroup[0]), groups_for(h, VIF_VERTICAL.workgroup[1]), 1]
            };
            // The variants assume their scale's format and mode.
            debug_assert!(!self.strip || s == 0 || (format, mode) == (2, 16));
            stream.dispatch(&self.vertical[s], grid, &args)?;
            // The last scale writes no next picture; any buffer will do.
            let next = if s < 3 { &b.planes[s] } else { &b.planes[2] };
            let mut args = vec![
                Arg::Buffer(&b.vsum),
                Arg::Buffer(&b.vsub),
                Arg::Buffer(taps),
                Arg::Buffer(table),
                Arg::Buffer(dparams),
                Arg::Buffer(&b.partials[s]),
                Arg::Buffer(&next[0]),
                Arg::Buffer(&next[1]),
            ];
            args.extend([w as u32, h as u32, TAP0[s], width, sub_tap0, sub_width].map(Arg::U32));
            let [gx, gy] = self.groups(s);
            stream.dispatch(&self.horizontal, [gx, gy, 1], &args)?;
        }
        for s in 0..4 {
            stream.download(&b.partials[s], 0, self.partials_bytes(s))?;
        }
        Ok(())
    }

    fn finish(&self, index: usize, downloads: &[Vec<u8>], out: &mut Scores) -> Result<()> {
        ensure!(downloads.len() == 4, "expected 4 partial-sum downloads, got {}", downloads.len());
        let mut fractions: ScaleFractions = [(0.0, 0.0); 4];
        for (s, bytes) in downloads.iter().enumerate() {
            let [num_log, den_log, num_non_log, den_non_log] = sum_u64_partials(bytes, 4)?[..] else {
                bail!("scale {s}: expected four sums")
            };
            let sums = ScaleSums {
                num_log: num_log as i64,
                den_log: den_log as i64,
                num_non_log: num_non_log as i64,
                den_non_log: den_non_log as i64,
            };
            fractions[s] = sums.num_den();
        }
        self.params.scoring().record(index, &fractions, out);
        Ok(())
    }
}
