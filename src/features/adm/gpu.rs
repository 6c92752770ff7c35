//! The one GPU host pipeline of `adm` and `float_adm`, written once against
//! the `Gpu` trait for Vulkan, CUDA and OpenCL. Per frame and per scale:
//! the wavelet of both pictures (`*_dwt0` at scale 0 from the uploaded
//! lumas, `*_dwt` after from the previous scale's approximation bands),
//! the decoupling and CSF (`*_decouple`, a work item per pixel), and the
//! masking and denominator sums (`*_cm`, a work group per band row): 12
//! dispatches, then one download of every row's sums, which the host
//! finishes exactly as the CPU reference does ([`integer::finish`],
//! [`float::finish`]).
//!
//! Each in-flight frame's slot holds every buffer, allocated once: the
//! bands of all four scales in one buffer (reference a, h, v, d then
//! distorted a, h, v, d per scale), one work buffer the scales reuse in
//! turn (10 planes of scale 0's size for `adm`, 18 for `float_adm`), the
//! row sums of all scales, and the constants uploaded with the slot
//! (the gain limit as a double; float_adm's rcpss table).

use super::float::{self, rcp::Reciprocal};
use super::geometry::{Region, Scale, scales};
use super::integer;
use crate::backend::gpu::{Arg, Buffer, Gpu, Kernel, KernelSpec, Stream, groups_for};
use crate::features::gpu::{GpuExtractor, GpuPipeline, planes_bytes, word_buffer, words};
use crate::features::picture::scaler;
use crate::features::{Extractor, Options};
use crate::fixture::Geometry;
use crate::scores::Scores;
use anyhow::{Result, ensure};
use std::sync::Arc;

/// Work-group width of the per-pixel kernels (a row of pixels).
const PIXELS_WG: u32 = 64;

/// `adm_dwt0` (kernels/adm.cl, shaders/adm_dwt0.wgsl): integer_adm.c's
/// scale-0 wavelet (`adm_dwt2_8`/`_16`, with `lo_only` their `_lo` twins
/// for `adm_skip_scale0`). Launch `[ceil(bw / 64), bh, 2]`: work item
/// `(j, i)` of group z computes output (i, j) of image z (0 the
/// reference, 1 the distorted) from its 4x4 mirrored samples, the vertical
/// sums centred, rounded by `bpc` bits and stored as int16, the horizontal
/// ones rounded by 16 bits into int16, and writes a, h, v, d (only a with
/// `lo_only`) at `bands[out_base + z * 4 * plane + k * plane + i * bw + j]`,
/// plane = bw * bh. Buffers: reference, distorted (luma samples, 1 or 2
/// bytes), bands (i32). Scalars: width, height, bytes per sample, bpc,
/// out_base, lo_only.
pub static ADM_DWT0: KernelSpec =
    KernelSpec { name: "adm_dwt0", family: "adm", workgroup: [PIXELS_WG, 1, 1], buffers: 3, scalars: 6 };

/// `adm_dwt` (kernels/adm.cl, shaders/adm_dwt.wgsl): `adm_dwt2_s123_combined`
/// of both images for scale 1, 2 or 3: the input is image z's previous
/// approximation band at `bands[in_base + z * 4 * in_plane]`, width x
/// height; outputs as [`ADM_DWT0`]'s at `out_base`. int64 sums, each pass
/// rounded by the scale's own shift. Buffers: bands. Scalars: width,
/// height, in_base, in_plane, out_base, scale.
pub static ADM_DWT: KernelSpec =
    KernelSpec { name: "adm_dwt", family: "adm", workgroup: [PIXELS_WG, 1, 1], buffers: 1, scalars: 6 };

/// `adm_decouple` (kernels/adm.cl, shaders/adm_decouple.wgsl): a work
/// item per pixel `(top + y, left + x)` of a scale's decouple rectangle
/// (launch `[ceil(cols / 64), rows, 1]`, items past `right` idle).
/// `adm_decouple` (scale 0) or `adm_decouple_s123`, then `adm_csf` or
/// `i4_adm_csf` of the additive and the restored bands, reduced to what
/// [`ADM_CM`] reads: ten planes of `work` (r h, v, d; a h, v, d; F and T of
/// the CSF of a; F and T of the CSF of r, see
/// `integer::decouple::Masking`). Buffers: bands, work, params (f64: the
/// gain limit). Scalars: bw, bh, the scale's bands base, top, left, right,
/// scale, the three i_rfactor, cos²(1°) as f32.
pub static ADM_DECOUPLE: KernelSpec =
    KernelSpec { name: "adm_decouple", family: "adm", workgroup: [PIXELS_WG, 1, 1], buffers: 3, scalars: 11 };

/// `adm_cm` (kernels/adm.cl, shaders/adm_cm.wgsl): a work group of 64 per
/// row `top + g` of a scale's score rectangle (launch `[rows, 1, 1]`); its
/// work items take every 64th column from `left` to `right`, summing the
/// masked cubes of the restored bands (`adm_cm`/`i4_adm_cm`, thresholds
/// from F and T of the CSF of a), of the additive bands (AIM, from the CSF
/// of r) and the reference's cubes (`adm_csf_den_scale`/`_s123`): the
/// row's [`integer::RowSums`], written after one barrier as (lo, hi) u32
/// words at `rows[2 * (9 * (rows_base + g) + k)]`. Integer sums: any order
/// gives the CPU's. Buffers: bands, work, rows. Scalars: bw, bh, base,
/// top, left, right, scale, i_rfactor x 3, the cube shifts x 3, the
/// denominator's cube shift, rows_base.
pub static ADM_CM: KernelSpec =
    KernelSpec { name: "adm_cm", family: "adm", workgroup: [64, 1, 1], buffers: 3, scalars: 15 };

/// `float_adm_dwt0` (kernels/float_adm.cl, shaders/float_adm_dwt0.wgsl):
/// `adm_dwt2_s` (or `adm_dwt2_lo_s` with `lo_only`) at scale 0 of both
/// lumas, each sample first `v * inv_scaler - 128` (picture_copy; exact,
/// the scaler being a power of two); the layout of [`ADM_DWT0`] in f32.
/// Every sum starts at 0 and adds its four products in order. Buffers:
/// reference, distorted, bands (f32). Scalars: width, height, bytes per
/// sample, inv_scaler (f32), out_base, lo_only.
pub static FLOAT_ADM_DWT0: KernelSpec =
    KernelSpec { name: "float_adm_dwt0", family: "float_adm", workgroup: [PIXELS_WG, 1, 1], buffers: 3, scalars: 6 };

/// `float_adm_dwt` (kernels/float_adm.cl, shaders/float_adm_dwt.wgsl):
/// `adm_dwt2_s` at scales 1-3, as [`ADM_DWT`] in f32. Buffers: bands.
/// Scalars: width, height, in_base, in_plane, out_base.
pub static FLOAT_ADM_DWT: KernelSpec =
    KernelSpec { name: "float_adm_dwt", family: "float_adm", workgroup: [PIXELS_WG, 1, 1], buffers: 1, scalars: 5 };

/// `float_adm_decouple` (kernels/float_adm.cl,
/// shaders/float_adm_decouple.wgsl): a work item per pixel of a scale's
/// decouple rectangle, as [`ADM_DECOUPLE`]: `adm_decouple_s` (t / (o +
/// 1e-30) through the host's rcpss table, or a division where libvmaf
/// divides: `exact_div`), then `adm_csf_s` of a and of r. 18 planes of
/// `work`: r h, v, d; a h, v, d; csf(a) h, v, d; flt(a) h, v, d; csf(r) h,
/// v, d; flt(r) h, v, d; with `csf_only` the two CSF triples alone (all
/// that [`FLOAT_ADM_CM_ROWS`] reads: on a CPU driver every store is a
/// scatter). Buffers: bands, work, the rcpss table (4096 u32), params (f64:
/// the gain limit). Scalars: bw, bh, base, top, left, right, the three CSF
/// factors (f32), cos²(1°) (f32), exact_div, csf_only.
pub static FLOAT_ADM_DECOUPLE: KernelSpec = KernelSpec {
    name: "float_adm_decouple",
    family: "float_adm",
    workgroup: [PIXELS_WG, 1, 1],
    buffers: 4,
    scalars: 12,
};

/// `float_adm_cm` (kernels/float_adm.cl, shaders/float_adm_cm.wgsl): a
/// work group of 128 per row of a scale's score rectangle (launch `[rows,
/// 1, 1]`). 256 pixels at a time, its work items compute each pixel's nine
/// terms (the masked p-th powers of the restored and additive bands, the
/// reference's CSF-weighted p-th powers: `adm_cm_s`, `adm_csf_den_scale_s`)
/// into local memory; after a barrier work item 0 adds them in pixel order
/// (libvmaf's sequential f32 sums, so the same bits), then a second barrier
/// frees the chunk. Writes the row's [`float::RowSums`] at
/// `rows[9 * (rows_base + g) + k]`. p = 3 takes products, other p the
/// shared powf port (`float::powf`). Buffers: bands, work, rows (f32).
/// Scalars: bw, bh, base, top, left, right, the three CSF factors (f32),
/// bypass_cm, cubes, p (f32), rows_base.
pub static FLOAT_ADM_CM: KernelSpec =
    KernelSpec { name: "float_adm_cm", family: "float_adm", workgroup: [128, 1, 1], buffers: 3, scalars: 13 };

/// `float_adm_cm_rows` (kernels/float_adm.cl, shaders/float_adm_cm_rows.wgsl):
/// [`FLOAT_ADM_CM`]'s CPU-driver shape ([`Shape::Rows`]), the same row sums
/// bit for bit. Work item `g < rows` (launch `[ceil(rows / 8), 1, 1]`) takes
/// row `top + g` and walks it from `left` to `right`, adding each pixel's
/// nine terms to its sums in pixel order, with the 3x3 threshold windows
/// sliding along the row in registers (one new column of three rows per
/// plane and step): no local memory, no barrier. It reads the two CSF
/// triples of `work` and the reference's bands alone: flt is recomputed
/// from the CSF (the same operations as the decouple's, so the same bits),
/// and |r * rf| is |csf(r)| (a product's two orders round alike). Buffers
/// and scalars as [`FLOAT_ADM_CM`]'s, then the number of rows. It takes
/// p = 3 (the default: products of three) and ignores `cubes`;
/// [`FLOAT_ADM_CM_ROWS_POWF`] takes any other p. One walk a kernel, not a
/// branch on p: lavapipe runs both sides of every branch and builds a
/// kernel's NIR again every run (the two walks in one kernel cost 30 ms
/// a run there).
pub static FLOAT_ADM_CM_ROWS: KernelSpec =
    KernelSpec { name: "float_adm_cm_rows", family: "float_adm", workgroup: [8, 1, 1], buffers: 3, scalars: 14 };

/// `float_adm_cm_rows_powf` (kernels/float_adm.cl,
/// shaders/float_adm_cm_rows_powf.wgsl): [`FLOAT_ADM_CM_ROWS`] for p other
/// than 3, each power through the powf port; the same contract.
pub static FLOAT_ADM_CM_ROWS_POWF: KernelSpec =
    KernelSpec { name: "float_adm_cm_rows_powf", family: "float_adm", workgroup: [8, 1, 1], buffers: 3, scalars: 14 };

/// `adm_cm_rows` (kernels/adm.cl, shaders/adm_cm_rows.wgsl): [`ADM_CM`]'s
/// CPU-driver shape ([`Shape::Rows`]), the same row sums. Work item
/// `g < rows` (launch `[ceil(rows / 8), 1, 1]`) takes row `top + g` and
/// walks it from `left` to `right`, the thresholds' 3x3 sums sliding along
/// the row as three column sums: no local memory, no barrier. Buffers and
/// scalars as [`ADM_CM`]'s, then the number of rows.
pub static ADM_CM_ROWS: KernelSpec =
    KernelSpec { name: "adm_cm_rows", family: "adm", workgroup: [8, 1, 1], buffers: 3, scalars: 16 };

/// Outputs a work item of the `*_strips` wavelets walks along a band row.
const STRIP: usize = 16;

/// `adm_dwt0_strips` (kernels/adm.cl, shaders/adm_dwt0_strips.wgsl):
/// [`ADM_DWT0`]'s CPU-driver shape ([`Shape::Rows`]), the same bands. With
/// `strips = ceil(bw / 16)` a row, launch `[ceil(strips * bh / 8), 1, 2]`:
/// work item x of image z walks outputs `(i, 16k)` to `(i, 16k + 15)`
/// (those below bw) of row `i = x / strips`, strip `k = x % strips`,
/// computing each column's vertical pass once (an output's last two
/// columns are the next one's first two). Buffers and scalars as
/// [`ADM_DWT0`]'s, then `edges`: when not 0, each row's first and last
/// strip alone (work item x: row `x / 2`, strip 0 or `strips - 1`; launch
/// `[ceil(2 * bh / 8), 1, 2]`), the rest being [`ADM_DWT0_WORDS`]'s.
pub static ADM_DWT0_STRIPS: KernelSpec =
    KernelSpec { name: "adm_dwt0_strips", family: "adm", workgroup: [8, 1, 1], buffers: 3, scalars: 7 };

/// `adm_dwt0_words` (kernels/adm.cl, shaders/adm_dwt0_words.wgsl):
/// [`ADM_DWT0_STRIPS`] for the inner strips `1 ..= strips - 2` of each row
/// (work item x: row `x / (strips - 2)`, strip `1 + x % (strips - 2)`;
/// launch `[ceil((strips - 2) * bh / 8), 1, 2]`), run only on 8-bit
/// pictures whose width is a multiple of 4 ([`words_apply`]): no column of
/// an inner strip is mirrored and its rows start on 32-bit words, so the
/// WGSL dialect reads a word a row for two outputs (the C dialect runs the
/// strip body). A kernel of its own, not a branch: lavapipe runs both sides
/// of every branch, and the general path beside the word path was 40% of
/// the wavelet's time there. Buffers and scalars as [`ADM_DWT0_STRIPS`]'s
/// (`edges` unused).
pub static ADM_DWT0_WORDS: KernelSpec =
    KernelSpec { name: "adm_dwt0_words", family: "adm", workgroup: [8, 1, 1], buffers: 3, scalars: 7 };

/// Whether [`ADM_DWT0_WORDS`] (and [`FLOAT_ADM_DWT0_WORDS`]) take the inner
/// strips of `geometry`'s scale 0: 8-bit samples, a width that is a
/// multiple of 4 (rows start on words), and at least three strips a row.
fn words_apply(geometry: &Geometry) -> bool {
    let bw = (geometry.width as usize).div_ceil(2);
    geometry.bytes_per_sample() == 1 && geometry.width.is_multiple_of(4) && bw.div_ceil(STRIP) >= 3
}

/// `adm_dwt_strips` (kernels/adm.cl, shaders/adm_dwt_strips.wgsl):
/// [`ADM_DWT`]'s CPU-driver shape, strips as [`ADM_DWT0_STRIPS`]'s.
pub static ADM_DWT_STRIPS: KernelSpec =
    KernelSpec { name: "adm_dwt_strips", family: "adm", workgroup: [8, 1, 1], buffers: 1, scalars: 6 };

/// `float_adm_dwt0_strips` (kernels/float_adm.cl,
/// shaders/float_adm_dwt0_strips.wgsl): [`FLOAT_ADM_DWT0`]'s CPU-driver
/// shape, the same bits, strips as [`ADM_DWT0_STRIPS`]'s.
pub static FLOAT_ADM_DWT0_STRIPS: KernelSpec =
    KernelSpec { name: "float_adm_dwt0_strips", family: "float_adm", workgroup: [8, 1, 1], buffers: 3, scalars: 7 };

/// `float_adm_dwt0_words` (kernels/float_adm.cl,
/// shaders/float_adm_dwt0_words.wgsl): [`FLOAT_ADM_DWT0_STRIPS`] for the
/// inner strips, as [`ADM_DWT0_WORDS`] for [`ADM_DWT0_STRIPS`].
pub static FLOAT_ADM_DWT0_WORDS: KernelSpec =
    KernelSpec { name: "float_adm_dwt0_words", family: "float_adm", workgroup: [8, 1, 1], buffers: 3, scalars: 7 };

/// `float_adm_dwt_strips` (kernels/float_adm.cl,
/// shaders/float_adm_dwt_strips.wgsl): [`FLOAT_ADM_DWT`]'s CPU-driver
/// shape, the same bits, strips as [`ADM_DWT0_STRIPS`]'s.
pub static FLOAT_ADM_DWT_STRIPS: KernelSpec =
    KernelSpec { name: "float_adm_dwt_strips", family: "float_adm", workgroup: [8, 1, 1], buffers: 1, scalars: 5 };

pub static INTEGER_KERNELS: &[&KernelSpec] =
    &[&ADM_DWT0, &ADM_DWT, &ADM_DECOUPLE, &ADM_CM, &ADM_CM_ROWS, &ADM_DWT0_STRIPS, &ADM_DWT0_WORDS, &ADM_DWT_STRIPS];
pub static FLOAT_KERNELS: &[&KernelSpec] = &[
    &FLOAT_ADM_DWT0,
    &FLOAT_ADM_DWT,
    &FLOAT_ADM_DECOUPLE,
    &FLOAT_ADM_CM,
    &FLOAT_ADM_CM_ROWS,
    &FLOAT_ADM_CM_ROWS_POWF,
    &FLOAT_ADM_DWT0_STRIPS,
    &FLOAT_ADM_DWT0_WORDS,
    &FLOAT_ADM_DWT_STRIPS,
];

/// The kernels' two shapes, one contract and the same bits:
/// [`Shape::Groups`] for GPUs (a work group per band row, local memory and
/// barriers), [`Shape::Rows`] for CPU implementations of a GPU API (Mesa
/// lavapipe, PoCL), where a barrier costs microseconds and a work item
/// walking its row with its windows in registers is fastest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Groups,
    Rows,
}

/// The environment variable that overrides [`Shape`]: `rows` or `groups`
/// (a testing and diagnostic switch; unset or empty, the device type
/// decides, see [`crate::features::gpu::shape_for_driver`]).
pub const SHAPE_VAR: &str = "ULPGATE_ADM_SHAPE";

/// The [`Shape`] for `gpu`'s device, or [`SHAPE_VAR`]'s choice.
pub fn shape_for(gpu: &dyn Gpu) -> Result<Shape> {
    crate::features::gpu::shape_for_driver(
        gpu.device(),
        SHAPE_VAR,
        std::env::var_os(SHAPE_VAR).as_deref(),
        ("rows", "a work item per band row", Shape::Rows),
        ("groups", "a work group per band row", Shape::Groups),
    )
}

/// Where each scale's data lie in the slot's buffers (elements of 4 bytes).
#[derive(Debug, Clone)]
struct Layout {
    scales: [Scale; 4],
    /// Offset of each scale's eight band planes.
    band_base: [usize; 4],
    bands: usize,
    /// Work planes (all scales reuse scale 0's size).
    work: usize,
    /// First row of each scale in the row sums.
    rows_base: [usize; 4],
    rows: usize,
}

impl Layout {
    fn new(geometry: &Geometry, work_planes: usize, skip_scale0: bool) -> Self {
        let scales = scales(geometry.width as usize, geometry.height as usize);
        let mut band_base = [0; 4];
        let mut rows_base = [0; 4];
        let (mut bands, mut rows) = (0, 0);
        for (s, scale) in scales.iter().enumerate() {
            let (bw, bh) = scale.band();
            band_base[s] = bands;
            bands += 8 * bw * bh;
            rows_base[s] = rows;
            if !(s == 0 && skip_scale0) {
                rows += scale.cm().rows();
            }
        }
        let (bw0, bh0) = scales[0].band();
        Layout { scales, band_base, bands, work: work_planes * bw0 * bh0, rows_base, rows }
    }

    fn plane(&self, s: usize) -> usize {
        let (bw, bh) = self.scales[s].band();
        bw * bh
    }

    /// The rows of scale `s` among all rows.
    fn scale_rows(&self, s: usize, skip_scale0: bool) -> std::ops::Range<usize> {
        let n = if s == 0 && skip_scale0 { 0 } else { self.scales[s].cm().rows() };
        self.rows_base[s]..self.rows_base[s] + n
    }
}

/// The buffers of one frame in flight.
pub struct Slot {
    reference: Buffer,
    distorted: Buffer,
    bands: Buffer,
    work: Buffer,
    rows: Buffer,
    params: Buffer,
    table: Option<Buffer>,
}

/// The two features' kernels and constants.
enum Variant {
    Integer { config: integer::Config, params: [integer::ScaleParams; 4] },
    Float { config: float::Config, params: [float::ScaleParams; 4], exact_div: bool },
}

struct AdmGpu {
    geometry: Geometry,
    layout: Layout,
    variant: Variant,
    kernels: [Kernel; 4],
    /// The inner strips' wavelet ([`ADM_DWT0_WORDS`]), where it applies.
    words: Option<Kernel>,
    shape: Shape,
    skip_scale0: bool,
    gain_limit: f64,
}

pub fn integer_extractor(gpu: Arc<dyn Gpu>, geometry: &Geometry, options: &Options) -> Result<Box<dyn Extractor>> {
    let shape = shape_for(gpu.as_ref())?;
    integer_extractor_shaped(gpu, geometry, options, shape)
}

pub fn float_extractor(gpu: Arc<dyn Gpu>, geometry: &Geometry, options: &Options) -> Result<Box<dyn Extractor>> {
    let shape = shape_for(gpu.as_ref())?;
    float_extractor_shaped(gpu, geometry, options, shape)
}

/// [`integer_extractor`] with the kernels of `shape` (tests run both).
pub fn integer_extractor_shaped(
    gpu: Arc<dyn Gpu>,
    geometry: &Geometry,
    options: &Options,
    shape: Shape,
) -> Result<Box<dyn Extractor>> {
    // The guard `FeatureImpl::gpu_extractor` puts in front of the factory,
    // for the tests that call this one directly.
    super::ADM.ensure_takes(geometry, options)?;
    let config = integer::Config::new(options)?;
    let params = integer::ScaleParams::all(&config, geometry.width as usize, geometry.height as usize);
    let specs = match shape {
        Shape::Groups => [&ADM_DWT0, &ADM_DWT, &ADM_DECOUPLE, &ADM_CM],
        Shape::Rows => [&ADM_DWT0_STRIPS, &ADM_DWT_STRIPS, &ADM_DECOUPLE, &ADM_CM_ROWS],
    };
    let kernels = load(gpu.as_ref(), specs)?;
    let words = load_words(gpu.as_ref(), geometry, shape, &ADM_DWT0_WORDS)?;
    let (skip_scale0, gain_limit) = (config.skip_scale0, config.enhn_gain_limit);
    let pipeline = AdmGpu {
        geometry: *geometry,
        layout: Layout::new(geometry, 10, skip_scale0),
        variant: Variant::Integer { config, params },
        kernels,
        words,
        shape,
        skip_scale0,
        gain_limit,
    };
    GpuExtractor::boxed(gpu, pipeline)
}

/// [`float_extractor`] with the kernels of `shape` (tests run both).
pub fn float_extractor_shaped(
    gpu: Arc<dyn Gpu>,
    geometry: &Geometry,
    options: &Options,
    shape: Shape,
) -> Result<Box<dyn Extractor>> {
    super::FLOAT_ADM.ensure_takes(geometry, options)?;
    let config = float::Config::new(options)?;
    // x86 libvmaf divides through rcpss: the kernels need this host's table.
    let exact_div = float::rcp::check_gpu_division()?.is_none();
    let params = float::ScaleParams::all(&config, geometry.width as usize, geometry.height as usize);
    let specs = match shape {
        Shape::Groups => [&FLOAT_ADM_DWT0, &FLOAT_ADM_DWT, &FLOAT_ADM_DECOUPLE, &FLOAT_ADM_CM],
        Shape::Rows => {
            let cm = if config.cubes() { &FLOAT_ADM_CM_ROWS } else { &FLOAT_ADM_CM_ROWS_POWF };
            [&FLOAT_ADM_DWT0_STRIPS, &FLOAT_ADM_DWT_STRIPS, &FLOAT_ADM_DECOUPLE, cm]
        }
    };
    let kernels = load(gpu.as_ref(), specs)?;
    let words = load_words(gpu.as_ref(), geometry, shape, &FLOAT_ADM_DWT0_WORDS)?;
    let (skip_scale0, gain_limit) = (config.skip_scale0, config.enhn_gain_limit);
    let pipeline = AdmGpu {
        geometry: *geometry,
        layout: Layout::new(geometry, 18, skip_scale0),
        variant: Variant::Float { config, params, exact_div },
        kernels,
        words,
        shape,
        skip_scale0,
        gain_limit,
    };
    GpuExtractor::boxed(gpu, pipeline)
}

/// The inner strips' wavelet for the rows shape, where [`words_apply`].
fn load_words(gpu: &dyn Gpu, geometry: &Geometry, shape: Shape, spec: &'static KernelSpec) -> Result<Option<Kernel>> {
    match shape {
        Shape::Rows if words_apply(geometry) => Ok(Some(gpu.load_kernel(spec)?)),
        _ => Ok(None),
    }
}

fn load(gpu: &dyn Gpu, specs: [&'static KernelSpec; 4]) -> Result<[Kernel; 4]> {
    Ok([gpu.load_kernel(specs[0])?, gpu.load_kernel(specs[1])?, gpu.load_kernel(specs[2])?, gpu.load_kernel(specs[3])?])
}

fn u(v: usize) -> Arg<'static> {
    Arg::U32(v as u32)
}

impl AdmGpu {
    fn is_float(&self) -> bool {
        matches!(self.variant, Variant::Float { .. })
    }

    /// The per-pixel launch over a rectangle: 64 columns a group, a row of
    /// groups per row.
    fn pixels(region: Region) -> [u32; 3] {
        [groups_for(region.cols(), PIXELS_WG), region.rows() as u32, 1]
    }

    /// The wavelets' launch for bands of bw x bh: a work item per output
    /// (64 a group), or per strip of [`STRIP`] outputs (8 a group).
    fn wavelet(&self, bw: usize, bh: usize) -> [u32; 3] {
        match self.shape {
            Shape::Groups => [groups_for(bw, PIXELS_WG), bh as u32, 2],
            Shape::Rows => [groups_for(bw.div_ceil(STRIP) * bh, ADM_DWT_STRIPS.workgroup[0]), 1, 2],
        }
    }

    fn row_bytes(&self) -> usize {
        if self.is_float() { 9 * 4 } else { 9 * 8 }
    }
}

impl GpuPipeline for AdmGpu {
    type Slot = Slot;

    fn new_slot(&self, gpu: &dyn Gpu) -> Result<Slot> {
        let luma = planes_bytes(&self.geometry, 1);
        let table = match &self.variant {
            Variant::Float { exact_div: false, .. } => Some(Reciprocal::get()?),
            _ => None,
        };
        let slot = Slot {
            reference: word_buffer(gpu, luma)?,
            distorted: word_buffer(gpu, luma)?,
            bands: gpu.create_buffer(4 * self.layout.bands)?,
            work: gpu.create_buffer(4 * self.layout.work)?,
            rows: gpu.create_buffer((self.row_bytes() * self.layout.rows).max(4))?,
            params: gpu.create_buffer(8)?,
            table: table.map(|t| gpu.create_buffer(4 * t.table.len())).transpose()?,
        };
        let mut stream = gpu.create_stream()?;
        stream.upload(&slot.params, 0, &self.gain_limit.to_le_bytes())?;
        if let (Some(buffer), Some(t)) = (&slot.table, table) {
            let bytes: Vec<u8> = t.table.iter().flat_map(|v| v.to_le_bytes()).collect();
            stream.upload(buffer, 0, &bytes)?;
        }
        stream.wait()?;
        Ok(slot)
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    fn planes(&self) -> usize {
        1
    }

    fn inputs<'a>(&self, slot: &'a Slot) -> [&'a Buffer; 2] {
        [&slot.reference, &slot.distorted]
    }

    fn compute(&self, b: &Slot, stream: &mut dyn Stream) -> Result<()> {
        let l = &self.layout;
        let g = &self.geometry;
        let [dwt0, dwt, decouple, cm] = &self.kernels;
        let s0 = l.scales[0];
        let (bw0, bh0) = s0.band();
        let lo_only = u32::from(self.skip_scale0);
        let groups0 = self.wavelet(bw0, bh0);
        let (reference, distorted, bands) =
            (Arg::Buffer(&b.reference), Arg::Buffer(&b.distorted), Arg::Buffer(&b.bands));
        let (w, h, bps) = (Arg::U32(g.width), Arg::U32(g.height), u(g.bytes_per_sample()));
        let depth = match &self.variant {
            Variant::Integer { .. } => Arg::U32(u32::from(g.bit_depth)),
            Variant::Float { .. } => Arg::F32(1.0 / scaler(g.bit_depth)),
        };
        let args = [reference, distorted, bands, w, h, bps, depth, u(0), Arg::U32(lo_only)];
        match (self.shape, &self.words) {
            (Shape::Groups, _) => stream.dispatch(dwt0, groups0, &args)?,
            (Shape::Rows, None) => stream.dispatch(dwt0, groups0, &[&args[..], &[u(0)]].concat())?,
            // Each row's first and last strip, then the inner ones.
            (Shape::Rows, Some(words)) => {
                let edges = [groups_for(2 * bh0, ADM_DWT0_STRIPS.workgroup[0]), 1, 2];
                stream.dispatch(dwt0, edges, &[&args[..], &[u(1)]].concat())?;
                let inner = (bw0.div_ceil(STRIP) - 2) * bh0;
                let launch = [groups_for(inner, ADM_DWT0_WORDS.workgroup[0]), 1, 2];
                stream.dispatch(words, launch, &[&args[..], &[u(0)]].concat())?;
            }
        }
        for s in 0..4 {
            let scale = l.scales[s];
            let (bw, bh) = scale.band();
            if s > 0 {
                let groups = self.wavelet(bw, bh);
                let mut args = vec![bands, u(scale.w), u(scale.h), u(l.band_base[s - 1]), u(l.plane(s - 1))];
                args.push(u(l.band_base[s]));
                if !self.is_float() {
                    args.push(u(s));
                }
                stream.dispatch(dwt, groups, &args)?;
            }
            if s == 0 && self.skip_scale0 {
                continue;
            }
            let (d, c) = (scale.decouple(), scale.cm());
            let work = Arg::Buffer(&b.work);
            let rows = Arg::Buffer(&b.rows);
            let base = u(l.band_base[s]);
            let rows_base = u(l.rows_base[s]);
            match &self.variant {
                Variant::Integer { params, .. } => {
                    let p = &params[s];
                    let cos1 = Arg::F32(integer::decouple::cos_1deg_sq());
                    let [r0, r1, r2] = p.i_rfactor.map(Arg::U32);
                    let args = [bands, work, Arg::Buffer(&b.params), u(bw), u(bh), base, u(d.top), u(d.left)];
                    let args = [&args[..], &[u(d.right), u(s), r0, r1, r2, cos1]].concat();
                    stream.dispatch(decouple, Self::pixels(d), &args)?;
                    let [c0, c1, c2] = p.cm_shift_cub.map(Arg::U32);
                    let args = [bands, work, rows, u(bw), u(bh), base, u(c.top), u(c.left), u(c.right), u(s)];
                    let args = [&args[..], &[r0, r1, r2, c0, c1, c2, Arg::U32(p.den_shift_cub), rows_base]].concat();
                    match self.shape {
                        Shape::Groups => stream.dispatch(cm, [c.rows() as u32, 1, 1], &args)?,
                        Shape::Rows => {
                            let launch = [groups_for(c.rows(), ADM_CM_ROWS.workgroup[0]), 1, 1];
                            stream.dispatch(cm, launch, &[&args[..], &[u(c.rows())]].concat())?
                        }
                    }
                }
                Variant::Float { config, params, exact_div } => {
                    let p = &params[s];
                    let cos1 = Arg::F32(float::decouple::cos_1deg_sq());
                    let [f0, f1, f2] = p.rfactor.map(Arg::F32);
                    // Without a table (exact division) the kernel reads none:
                    // bind the params buffer in its place.
                    let table = Arg::Buffer(b.table.as_ref().unwrap_or(&b.params));
                    let args = [bands, work, table, Arg::Buffer(&b.params), u(bw), u(bh), base, u(d.top), u(d.left)];
                    let csf_only = Arg::U32(u32::from(self.shape == Shape::Rows));
                    let args = [&args[..], &[u(d.right), f0, f1, f2, cos1, Arg::U32(u32::from(*exact_div)), csf_only]]
                        .concat();
                    stream.dispatch(decouple, Self::pixels(d), &args)?;
                    let flags = [Arg::U32(u32::from(config.bypass_cm)), Arg::U32(u32::from(config.cubes()))];
                    let args = [bands, work, rows, u(bw), u(bh), base, u(c.top), u(c.left), u(c.right), f0, f1, f2];
                    let args = [&args[..], &flags, &[Arg::F32(config.p_norm as f32), rows_base]].concat();
                    match self.shape {
                        Shape::Groups => stream.dispatch(cm, [c.rows() as u32, 1, 1], &args)?,
                        Shape::Rows => {
                            let launch = [groups_for(c.rows(), FLOAT_ADM_CM_ROWS.workgroup[0]), 1, 1];
                            stream.dispatch(cm, launch, &[&args[..], &[u(c.rows())]].concat())?
                        }
                    }
                }
            }
        }
        stream.download(&b.rows, 0, self.row_bytes() * l.rows)
    }

    fn finish(&self, index: usize, downloads: &[Vec<u8>], out: &mut Scores) -> Result<()> {
        let l = &self.layout;
        let bytes = &downloads[0];
        ensure!(
            bytes.len() == self.row_bytes() * l.rows,
            "expected {} rows of sums, got {} bytes",
            l.rows,
            bytes.len()
        );
        let (w, h) = (self.geometry.width as usize, self.geometry.height as usize);
        match &self.variant {
            Variant::Integer { config, params } => {
                let v: Vec<u32> = words(bytes).collect();
                let rows: Vec<integer::RowSums> = v
                    .chunks_exact(18)
                    .map(|r| std::array::from_fn(|k| (u64::from(r[2 * k]) | (u64::from(r[2 * k + 1]) << 32)) as i64))
                    .collect();
                let per = |s: usize| &rows[l.scale_rows(s, self.skip_scale0)];
                let o = integer::finish(config, params, [per(0), per(1), per(2), per(3)], w, h);
                config.record(index, &o, out);
            }
            Variant::Float { config, params, .. } => {
                let v: Vec<f32> = crate::features::gpu::floats(bytes).collect();
                let rows: Vec<float::RowSums> = v.chunks_exact(9).map(|r| std::array::from_fn(|k| r[k])).collect();
                let per = |s: usize| &rows[l.scale_rows(s, self.skip_scale0)];
                let o = float::finish(config, params, [per(0), per(1), per(2), per(3)], w, h);
                config.record(index, &o, out);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_groups_match_the_kernels_constants() {
        // adm_cm and float_adm_cm size their local arrays by a constant.
        let adm = crate::backend::kernels::source("adm").unwrap();
        assert!(adm.contains(&format!("#define ADM_WG {}\n", ADM_CM.workgroup[0])));
        let fadm = crate::backend::kernels::source("float_adm").unwrap();
        assert!(fadm.contains(&format!("#define FADM_WG {}\n", FLOAT_ADM_CM.workgroup[0])));
        // The strip wavelets walk STRIP outputs (the WGSL dialect's STRIP).
        assert!(adm.contains(&format!("#define ADM_STRIP {STRIP}\n")));
        assert!(fadm.contains(&format!("#define FADM_STRIP {STRIP}\n")));
    }

    #[test]
    fn the_word_wavelet_takes_8_bit_widths_of_4k_with_an_inner_strip() {
        let g = |width: u32, bit_depth: u8| Geometry {
            width,
            height: 36,
            bit_depth,
            chroma: crate::fixture::Chroma::Yuv420,
        };
        // 576: 18 strips a row; 68: 3 strips, one inner; 132: 5.
        assert!(words_apply(&g(576, 8)) && words_apply(&g(68, 8)) && words_apply(&g(132, 8)));
        // 64: two strips, none inner; 66 and 70: rows not on words; 10 bits.
        assert!(!words_apply(&g(64, 8)) && !words_apply(&g(66, 8)) && !words_apply(&g(70, 8)));
        assert!(!words_apply(&g(576, 10)));
    }

    #[test]
    fn the_layout_packs_every_scale() {
        let g = Geometry { width: 1920, height: 1080, bit_depth: 8, chroma: crate::fixture::Chroma::Yuv420 };
        let l = Layout::new(&g, 10, false);
        assert_eq!(l.band_base[1], 8 * 960 * 540);
        assert_eq!(l.rows, 434 + 218 + 109 + 56);
        assert_eq!(l.scale_rows(3, false), 434 + 218 + 109..l.rows);
        let skip = Layout::new(&g, 10, true);
        assert_eq!(skip.rows, 218 + 109 + 56);
        assert_eq!(skip.scale_rows(0, true), 0..0);
    }
}
