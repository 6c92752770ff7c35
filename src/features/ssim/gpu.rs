//! The GPU pipeline of both features, written once against the `Gpu`
//! trait: the lumas converted to floats, decimated into levels (float_ssim:
//! one box-filter level at its scale; float_ms_ssim: four 9x9 low-pass
//! halvings), and on each level that gets an SSIM map the Gaussian's two
//! passes, each pixel's terms, the rows' sums and the totals
//! (`sums.rs`). Every kernel keeps the CPU reference's per-pixel
//! operations, so every term is bit-identical; the totals are libvmaf's
//! sequential sums, bit for bit, by the argument in `sums.rs`.
//!
//! Per frame and map: ssim_horizontal and ssim_vertical (or, on CPU
//! drivers, ssim_vertical_strips), which also writes the terms' partial
//! sums; per frame: ssim_convert, one ssim_decimate per level, one
//! ssim_total for every metric of every map, on GPUs the three dispatches of
//! `exact.rs` (which return at once unless a mean needs libvmaf's
//! sequential sum), and one download of 40 bytes per metric. Every buffer
//! is allocated once per slot.

use super::core::{Sums, map_dims, mean};
use super::exact::{self, Exact};
use super::sums::{DeviceSum, resolve};
use super::tables::{GAUSSIAN, constants};
use crate::backend::gpu::{Arg, Buffer, Gpu, Kernel, KernelSpec, Stream, groups_for};
use crate::features::gpu::{Division, GpuPipeline, Redo, planes_bytes, word_buffer};
use crate::features::picture::scaler;
use crate::fixture::Geometry;
use crate::scores::Scores;
use anyhow::{Result, bail, ensure};
use std::sync::{Arc, OnceLock};

/// `ssim_convert` (kernels/ssim.cl, shaders/ssim_convert.comp): picture_copy
/// of both lumas, `v * (1 / scaler)` (= `v / scaler`, the scaler being a
/// power of two) into a pair of float planes, reference first. One work
/// item per pixel, launch `[⌈w/16⌉, ⌈h/16⌉, 1]`. Buffers: reference,
/// distorted (samples), pictures (2 w h f32). Scalars: width, height, bytes
/// per sample, 1 / scaler (f32).
pub static SSIM_CONVERT: KernelSpec =
    KernelSpec { name: "ssim_convert", family: "ssim", workgroup: [16, 16, 1], buffers: 3, scalars: 4 };

/// `ssim_convert_quads`: [`SSIM_CONVERT`]'s outputs in the CPU drivers'
/// shape ([`Shape::Strips`]): work item `(x, y)` converts samples `4k .. 4k
/// + 3` (below `w h`) of each plane, `k = y ⌈w/4⌉ + x` (raster order, in
/// and out); launch `[⌈⌈w/4⌉/16⌉, ⌈h/16⌉, 1]`. The Vulkan dialect reads them
/// as one word of 8-bit samples or two of 16-bit ones: lavapipe loads a
/// storage buffer lane by lane, so a load a sample was the kernel's cost
/// (43-48 -> 27-35 ms over issue 14's anchor). On GPUs the per-pixel
/// kernel's stores coalesce (this one's cost NVIDIA a quarter of
/// float_ssim's 1080p fps). Buffers and scalars as [`SSIM_CONVERT`].
pub static SSIM_CONVERT_QUADS: KernelSpec =
    KernelSpec { name: "ssim_convert_quads", family: "ssim", workgroup: [16, 16, 1], buffers: 3, scalars: 4 };

/// `ssim_decimate`: iqa `_iqa_decimate` of both pictures of a pair (z = 0
/// reference, 1 distorted): output `(x, y)` is the k x k window at `(x f,
/// y f)` from `-k/2`, mirrored (KBND_SYMMETRIC), `sum += (double)(sample *
/// tap)` over rows then columns, `(float)sum`. Launch `[⌈sw/16⌉, ⌈sh/16⌉,
/// 2]`. Buffers: source pair (w x h), destination pair (sw x sh), taps
/// (k x k f32, row-major). Scalars: w, h, sw, sh, factor f, k.
pub static SSIM_DECIMATE: KernelSpec =
    KernelSpec { name: "ssim_decimate", family: "ssim", workgroup: [16, 16, 1], buffers: 3, scalars: 6 };

/// `ssim_decimate_strips`: [`SSIM_DECIMATE`]'s outputs for ms_ssim's
/// filter only (k = 9, f = 2, `taps` = [`super::tables::LPF`], which the
/// Vulkan dialect holds as constants: shaders/include/ms_ssim_lpf.glsl),
/// in the CPU drivers' shape ([`Shape`]): work
/// item `(x, i, z)` writes rows `y = strip i + j`, `j < strip`, of column
/// x, the window moving down two rows a step. Launch `[⌈sw/16⌉,
/// ⌈⌈sh/strip⌉/16⌉, 2]`. Buffers as `ssim_decimate`; scalars as it, then
/// strip.
pub static SSIM_DECIMATE_STRIPS: KernelSpec =
    KernelSpec { name: "ssim_decimate_strips", family: "ssim", workgroup: [16, 16, 1], buffers: 3, scalars: 7 };

/// `ssim_horizontal`: `_iqa_convolve`'s horizontal pass over the five
/// pictures r, d, r r, d d, r d (products rounded to f32) of a pair: plane
/// p, row y < h, column x < w - 10 is `(float)Σ_t (double)(pic[y][x + t] *
/// taps[t])`, t = 0..11 in order. Work item `(i, y)` writes columns `x =
/// strip i + j`, `j < strip`, left to right ([`Shape`]: 1 on GPUs).
/// Launch `[⌈⌈(w-10)/strip⌉/64⌉, ⌈h/4⌉, 1]`. Buffers: pair (w x h), taps
/// (11 f32), planes (5 x h x (w - 10) f32). Scalars: w, h, strip.
pub static SSIM_HORIZONTAL: KernelSpec =
    KernelSpec { name: "ssim_horizontal", family: "ssim", workgroup: [64, 4, 1], buffers: 3, scalars: 3 };

/// `ssim_vertical` (the GPUs' shape): the vertical pass over the five
/// horizontal planes (`(float)Σ_t (double)(plane[y + t][x] * taps[t])`),
/// then the pixel's terms exactly as [`super::core::pixel_terms`]
/// (divisions and square root correctly rounded on every device: the WGSL
/// dialect corrects the device's own), written for each metric of `mask`
/// (bit 0: l c s, 1: l, 2: c, 3: s), the k-th at `terms[offset + k n + y
/// width + x]`; and the partial sums ssim_total adds: for each metric, the
/// sum of terms, of magnitudes and of `(n - raster index) |term|` (f64),
/// the k-th metric's j-th triple at `partials[partials_offset + 3 (k
/// count + j)]`. Work item `(x, y)` computes one pixel; its group adds
/// each of its rows' 64 pixels with a fixed tree (strides 32 .. 1) into
/// partial `j = y ⌈width/64⌉ + group x` (`count = rows ⌈width/64⌉`). Launch
/// `[⌈width/64⌉, ⌈rows/4⌉, 1]`. Buffers: planes (5 x (rows + 10) x width
/// f32), taps (11 f32), terms, partials (f64). Scalars: width, rows (the
/// map's), mask, offset, C1, C2, C3 (f32), strip (1; unused),
/// partials_offset, count.
pub static SSIM_VERTICAL: KernelSpec =
    KernelSpec { name: "ssim_vertical", family: "ssim", workgroup: [64, 4, 1], buffers: 4, scalars: 10 };

/// `ssim_vertical_strips` (the CPU drivers' shape, [`Shape`]):
/// [`SSIM_VERTICAL`]'s terms, bit for bit, from work item `(x, i)` walking
/// rows `y = strip i + j`, `j < strip`, of column x top to bottom, each
/// plane value read once into a sliding window; its partial `j = i width +
/// x` adds its terms top to bottom (`count = ⌈rows/strip⌉ width`). Launch
/// `[⌈width/64⌉, ⌈⌈rows/strip⌉/4⌉, 1]`; buffers and scalars as
/// [`SSIM_VERTICAL`].
pub static SSIM_VERTICAL_STRIPS: KernelSpec =
    KernelSpec { name: "ssim_vertical_strips", family: "ssim", workgroup: [64, 4, 1], buffers: 4, scalars: 10 };

/// `ssim_vertical_strips_ieee`: [`SSIM_VERTICAL_STRIPS`] with the device's
/// own double division and square root where that kernel corrects them
/// (shaders/include/ieee_rounding.wgsl), for drivers that compute them as
/// IEEE 754 does ([`crate::features::gpu::Division`]); the CUDA/OpenCL dialects' are
/// correctly rounded by their specs, so there it runs as
/// `ssim_vertical_strips` ([`KernelSpec::c_entry`]).
pub static SSIM_VERTICAL_STRIPS_IEEE: KernelSpec =
    KernelSpec { name: "ssim_vertical_strips_ieee", family: "ssim", workgroup: [64, 4, 1], buffers: 4, scalars: 10 };

/// `ssim_vertical_strips_ieee_unstored`: [`SSIM_VERTICAL_STRIPS_IEEE`]
/// writing no term (shaders/include/ssim_term_skip.wgsl), only the
/// partial sums: llvmpipe's first pass, where the terms serve only the
/// rare sequential fallback and their stores were a third of the kernel
/// (docs/features/ssim.md). A frame whose mean needs that fallback is scored again with
/// the terms stored ([`crate::features::gpu::Redo`]).
pub static SSIM_VERTICAL_STRIPS_IEEE_UNSTORED: KernelSpec = KernelSpec {
    name: "ssim_vertical_strips_ieee_unstored",
    family: "ssim",
    workgroup: [64, 4, 1],
    buffers: 4,
    scalars: 10,
};

/// Partial triples per metric of a `width x rows` map (the `count` of
/// [`SSIM_VERTICAL`] / [`SSIM_VERTICAL_STRIPS`]), and the depth of the
/// device's sum: the adds a term goes through, in its partial, in a
/// ssim_total work item's loop over partials, and in its 8-level tree.
fn partials_of(width: usize, rows: usize, strip: usize) -> (usize, usize) {
    let (count, inner) =
        if strip == 1 { (rows * width.div_ceil(64), 6) } else { (rows.div_ceil(strip) * width, strip.min(rows)) };
    (count, inner + count.div_ceil(256) + 8)
}

/// How many adjacent outputs one work item of `ssim_horizontal`,
/// `ssim_vertical_strips` and (ms_ssim's 9x9 filter,
/// `ssim_decimate_strips`) `ssim_decimate` writes. On GPUs one (parallel over pixels, coalesced
/// reads); on CPU drivers (lavapipe, PoCL), which run 8 work items per SIMD
/// op and read storage buffers lane by lane, a strip that reads each input
/// once into a sliding window (11x fewer reads per output in the
/// horizontal pass, 10x in the vertical). Every output's operations are the
/// same in both shapes, so are its bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Pixels,
    Strips,
}

/// The strip length of the CPU drivers' shape.
const STRIP: usize = 32;

impl Shape {
    fn strip(self) -> usize {
        match self {
            Shape::Pixels => 1,
            Shape::Strips => STRIP,
        }
    }
}

/// Environment variable that forces a [`Shape`] (`pixels` or `strips`;
/// unset: by the driver).
pub const SHAPE_VAR: &str = "ULPGATE_SSIM_SHAPE";

/// The shape for a device: strips on CPU drivers, pixels elsewhere, unless
/// `choice` (the value of [`SHAPE_VAR`]) names one.
pub fn shape_for(device: &crate::backend::DeviceInfo, choice: Option<&std::ffi::OsStr>) -> Result<Shape> {
    crate::features::gpu::shape_for_driver(
        device,
        SHAPE_VAR,
        choice,
        ("strips", "a strip of 32 outputs per work item", Shape::Strips),
        ("pixels", "one output per work item", Shape::Pixels),
    )
}

/// `ssim_total`: work group e takes entry e of the layout (its metric's
/// first term, first partial triple, width, rows, count of partials, and
/// first record of `exact.rs`'s kernels), adds the partials (each work
/// item its partials in order, then a tree) into sum T, magnitudes A and
/// weighted W, and writes `results[5 e ..] = T, A, W, S, flag`: when the
/// float mean is not the same for every sum within 2 x [`super::sums::
/// error_bound`] of T, the flag is 1 and, with `inline_exact`, S is the
/// terms added one after the other in raster order, libvmaf's sum, staged
/// 1024 at a time in local memory for the first work item ([`Exact::
/// Inline`]; else `exact.rs`'s kernels write S); otherwise S is 0 and the
/// flag 0. Launch `[entries, 1, 1]`. Buffers: terms, partials, layout (6
/// u32 per entry), results (f64). Scalars: entries, `sequential` (non-zero:
/// set the flag for every entry, whatever the check says;
/// [`Totals::Sequential`]), `inline_exact`.
pub static SSIM_TOTAL: KernelSpec =
    KernelSpec { name: "ssim_total", family: "ssim", workgroup: [256, 1, 1], buffers: 4, scalars: 3 };

/// u32 words of an entry of `ssim_total`'s layout.
const ENTRY_WORDS: usize = 6;

/// How the totals reach libvmaf's sequential sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Totals {
    /// From the parallel sum where the error bound decides the float
    /// mean, from the device's sequential sum elsewhere, made the way
    /// [`exact::exact_for`] picks for the device (what runs).
    Decide,
    /// Always from the device's sequential sum, made the given way (tests:
    /// the fallback paths give the same bits).
    Sequential(Exact),
    /// As [`Totals::Decide`], with every frame of llvmpipe's unstored first
    /// pass scored again with the terms stored (tests: the redo gives the
    /// same bits). Only where that first pass runs.
    Redone,
}

/// Environment variable that makes every mean come from the device's
/// sequential sum (`sequential`; unset or `decide`: only where the
/// parallel sum cannot decide it): a diagnostic, which puts the fallback
/// (inline or [`exact`]'s kernels, by [`exact::EXACT_VAR`] or the driver)
/// under a gate run on any device.
pub const TOTALS_VAR: &str = "ULPGATE_SSIM_TOTALS";

/// `totals`, or with [`TOTALS_VAR`] set to `sequential` (`choice`) and
/// `totals` [`Totals::Decide`], the sequential sums made the way `exact`
/// is.
fn forced_totals(totals: Totals, choice: Option<&std::ffi::OsStr>, exact: Exact) -> Result<Totals> {
    let sequential = crate::features::gpu::env_switch(
        TOTALS_VAR,
        choice,
        ("sequential", "every mean from the device's sequential sum", true),
        ("decide", "the sequential sum only where the parallel one cannot decide", false),
        false,
    )?;
    Ok(if sequential && totals == Totals::Decide { Totals::Sequential(exact) } else { totals })
}

/// Every kernel of the pipeline.
pub static KERNELS: [&KernelSpec; 12] = [
    &SSIM_CONVERT,
    &SSIM_CONVERT_QUADS,
    &SSIM_DECIMATE,
    &SSIM_HORIZONTAL,
    &SSIM_VERTICAL,
    &SSIM_VERTICAL_STRIPS,
    &SSIM_VERTICAL_STRIPS_IEEE,
    &SSIM_VERTICAL_STRIPS_IEEE_UNSTORED,
    &SSIM_TOTAL,
    &SSIM_DECIMATE_STRIPS,
    &exact::SSIM_EXACT_SEGMENTS,
    &exact::SSIM_EXACT_WALK,
];

/// The metrics of a map, in the order the terms are laid out (`mask` bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Ssim,
    L,
    C,
    S,
}

const ALL: [Metric; 4] = [Metric::Ssim, Metric::L, Metric::C, Metric::S];

/// What the pipeline computes: picture levels and the SSIM maps on them.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Level 0 is the luma; level k + 1 is level k decimated.
    pub levels: Vec<(usize, usize)>,
    /// The decimation between consecutive levels: factor, kernel size and
    /// the kernel (k x k taps).
    pub factor: usize,
    pub k: usize,
    pub taps: Vec<f32>,
    /// For each map: its level and its metrics.
    pub maps: Vec<(usize, Vec<Metric>)>,
}

/// One map's place in the slot's buffers.
#[derive(Debug, Clone)]
struct MapLayout {
    level: usize,
    metrics: Vec<Metric>,
    /// Map width and rows (both positive, else the map is empty).
    width: usize,
    rows: usize,
    /// The map's size as C computes it (w - 10) * (h - 10).
    pixels: i64,
    terms_at: usize,
    partials_at: usize,
    /// Partial triples per metric.
    count: usize,
    /// Index of its first metric among the total's entries.
    first_entry: usize,
    /// Its first metric's first record of `exact.rs`'s kernels (each
    /// metric has one a segment of its terms).
    first_record: usize,
}

/// A slot's buffers.
pub struct Slot {
    reference: Buffer,
    distorted: Buffer,
    levels: Vec<Buffer>,
    gaussian: Buffer,
    decimation: Buffer,
    planes: Buffer,
    terms: Buffer,
    partials: Buffer,
    entries: Buffer,
    results: Buffer,
    /// `exact.rs`'s segment records ([`Exact::Parallel`]).
    records: Option<Buffer>,
}

/// Turns one frame's means, per map `[l c s, l, c, s]` (those of its
/// metrics), into the feature's scores.
pub type Record = Box<dyn Fn(&[[Option<f32>; 4]], usize, &mut Scores) -> Result<()> + Send>;

/// The pipeline, for a plan.
pub struct SsimGpu {
    geometry: Geometry,
    plan: Plan,
    maps: Vec<MapLayout>,
    entries: usize,
    terms_len: usize,
    partials_len: usize,
    planes_len: usize,
    /// ssim_convert(_quads), ssim_horizontal, ssim_total.
    kernels: [Kernel; 3],
    /// The map kernel that stores its terms (ssim_vertical(_strips)):
    /// loaded with the pipeline, or, where `unstored` runs, at the first
    /// frame that is redone (on lavapipe building a pipeline is a NIR
    /// translation every run, 6 ms for this one, and most runs redo no
    /// frame).
    vertical: OnceLock<Kernel>,
    vertical_spec: &'static KernelSpec,
    gpu: Arc<dyn Gpu>,
    /// [`SSIM_VERTICAL_STRIPS_IEEE_UNSTORED`], the first pass where it
    /// runs: llvmpipe's strips (division `Device`) with the inline exact
    /// sum and totals decided; each frame's means then come from the
    /// partial sums, and a frame that needs a sequential sum is redone
    /// with `vertical`, which stores the terms.
    unstored: Option<Kernel>,
    /// ssim_decimate, loaded where a level uses it (each kernel a process
    /// loads costs a driver compile: on lavapipe an LLVM JIT).
    decimate: Option<Kernel>,
    /// `ssim_decimate_strips`, loaded in the strip shape only.
    decimate_strips: Option<Kernel>,
    strip: usize,
    totals: Totals,
    /// `exact.rs`'s kernels (segments, walk), and the groups of the first
    /// ([`Exact::Parallel`]).
    exact: Option<([Kernel; 2], usize)>,
    records: usize,
    record: Record,
}

impl SsimGpu {
    pub fn new(
        gpu: &Arc<dyn Gpu>,
        geometry: &Geometry,
        plan: Plan,
        totals: Totals,
        shape: Option<Shape>,
        record: Record,
    ) -> Result<Self> {
        let shape = match shape {
            Some(shape) => shape,
            None => shape_for(gpu.device(), std::env::var_os(SHAPE_VAR).as_deref())?,
        };
        let strip = shape.strip();
        let division = crate::features::gpu::division_for(gpu.device())?;
        let vertical = match shape {
            Shape::Strips if division == Division::Device => &SSIM_VERTICAL_STRIPS_IEEE,
            Shape::Strips => &SSIM_VERTICAL_STRIPS,
            Shape::Pixels => &SSIM_VERTICAL,
        };
        let convert = if shape == Shape::Strips { &SSIM_CONVERT_QUADS } else { &SSIM_CONVERT };
        let kernels = [gpu.load_kernel(convert)?, gpu.load_kernel(&SSIM_HORIZONTAL)?, gpu.load_kernel(&SSIM_TOTAL)?];
        let decimates = plan.levels.len() > 1;
        let strips = shape == Shape::Strips && plan.factor == 2 && plan.taps == super::ms_ssim::lpf_taps();
        let decimate_strips = if decimates && strips { Some(gpu.load_kernel(&SSIM_DECIMATE_STRIPS)?) } else { None };
        let decimate = if decimates && !strips { Some(gpu.load_kernel(&SSIM_DECIMATE)?) } else { None };
        let (mut terms_len, mut partials_len, mut planes_len, mut entries, mut records) = (0, 0, 0, 0, 0);
        let (mut most_segments, mut largest_map) = (0, 0);
        let mut maps = Vec::new();
        for (level, metrics) in &plan.maps {
            let (w, h) = plan.levels[*level];
            let (mw, mh) = map_dims(w, h);
            let (width, rows) = if mw > 0 && mh > 0 { (mw as usize, mh as usize) } else { (0, 0) };
            let (count, depth) = partials_of(width, rows, strip);
            // sums.rs's bound assumes a sum of depth at most width + rows +
            // 16; every map of a frame the kernels take has it.
            ensure!(
                width == 0 || depth <= width + rows + 16,
                "a {width}x{rows} SSIM map is too large for the device's sums"
            );
            maps.push(MapLayout {
                level: *level,
                metrics: metrics.clone(),
                width,
                rows,
                pixels: mw * mh,
                terms_at: terms_len,
                partials_at: partials_len,
                count,
                first_entry: entries,
                first_record: records,
            });
            if width > 0 {
                let segments = (width * rows).div_ceil(exact::SEGMENT);
                records += metrics.len() * segments;
                most_segments = most_segments.max(segments);
                largest_map = largest_map.max(width * rows);
                terms_len += metrics.len() * width * rows;
                partials_len += 3 * metrics.len() * count;
                planes_len = planes_len.max(5 * width * h);
                entries += metrics.len();
            }
        }
        // The kernels index with 32-bit integers.
        ensure!(terms_len < u32::MAX as usize / 2, "a {geometry} frame is too large for the SSIM kernels");
        exact::check_records(records)?;
        let exact = match totals {
            Totals::Sequential(exact) => exact,
            Totals::Decide | Totals::Redone => {
                let choice = std::env::var_os(exact::EXACT_VAR);
                exact::exact_for(gpu.device(), choice.as_deref(), largest_map)?
            }
        };
        let totals = forced_totals(totals, std::env::var_os(TOTALS_VAR).as_deref(), exact)?;
        let unstored_runs = std::ptr::eq(vertical, &SSIM_VERTICAL_STRIPS_IEEE)
            && exact == Exact::Inline
            && matches!(totals, Totals::Decide | Totals::Redone);
        if totals == Totals::Redone && !unstored_runs {
            bail!(
                "ssim: frames are redone only after llvmpipe's unstored first pass (the strips shape, inline exact sums)"
            );
        }
        let unstored = if unstored_runs { Some(gpu.load_kernel(&SSIM_VERTICAL_STRIPS_IEEE_UNSTORED)?) } else { None };
        let vertical_kernel = if unstored_runs { OnceLock::new() } else { OnceLock::from(gpu.load_kernel(vertical)?) };
        let exact = match exact {
            Exact::Inline => None,
            Exact::Parallel => Some((
                [gpu.load_kernel(&exact::SSIM_EXACT_SEGMENTS)?, gpu.load_kernel(&exact::SSIM_EXACT_WALK)?],
                most_segments.clamp(1, exact::MAX_GROUPS),
            )),
        };
        Ok(SsimGpu {
            geometry: *geometry,
            plan,
            maps,
            entries,
            terms_len,
            partials_len,
            planes_len,
            kernels,
            vertical: vertical_kernel,
            vertical_spec: vertical,
            gpu: gpu.clone(),
            unstored,
            decimate,
            decimate_strips,
            strip,
            totals,
            exact,
            records,
            record,
        })
    }
}

/// A buffer of at least 4 bytes (no empty buffers).
fn buffer(gpu: &dyn Gpu, bytes: usize) -> Result<Buffer> {
    gpu.create_buffer(bytes.max(4))
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|t| t.to_le_bytes()).collect()
}

impl GpuPipeline for SsimGpu {
    type Slot = Slot;

    fn new_slot(&self, gpu: &dyn Gpu) -> Result<Slot> {
        let luma = planes_bytes(&self.geometry, 1);
        let levels = self.plan.levels.iter().map(|&(w, h)| buffer(gpu, 2 * w * h * 4)).collect::<Result<Vec<_>>>()?;
        let mut layout = Vec::new();
        for m in self.maps.iter().filter(|m| m.width > 0) {
            for k in 0..m.metrics.len() {
                let terms_at = m.terms_at + k * m.width * m.rows;
                let partials_at = m.partials_at + 3 * k * m.count;
                let first_record = m.first_record + k * (m.width * m.rows).div_ceil(exact::SEGMENT);
                let entry: [usize; ENTRY_WORDS] = [terms_at, partials_at, m.width, m.rows, m.count, first_record];
                layout.extend(entry.map(|v| v as u32));
            }
        }
        let slot = Slot {
            reference: word_buffer(gpu, luma)?,
            distorted: word_buffer(gpu, luma)?,
            levels,
            gaussian: buffer(gpu, 4 * GAUSSIAN.len())?,
            decimation: buffer(gpu, 4 * self.plan.taps.len())?,
            planes: buffer(gpu, 4 * self.planes_len)?,
            terms: buffer(gpu, 8 * self.terms_len)?,
            partials: buffer(gpu, 8 * self.partials_len)?,
            entries: buffer(gpu, 4 * layout.len())?,
            results: buffer(gpu, 8 * 5 * self.entries)?,
            records: match self.exact {
                Some(_) => Some(buffer(gpu, 4 * exact::RECORD_WORDS * self.records)?),
                None => None,
            },
        };
        // The tables are uploaded once, from the CPU reference's own f32s.
        let mut stream = gpu.create_stream()?;
        stream.upload(&slot.gaussian, 0, &f32_bytes(&GAUSSIAN))?;
        if !self.plan.taps.is_empty() {
            stream.upload(&slot.decimation, 0, &f32_bytes(&self.plan.taps))?;
        }
        if !layout.is_empty() {
            let bytes: Vec<u8> = layout.iter().flat_map(|v| v.to_le_bytes()).collect();
            stream.upload(&slot.entries, 0, &bytes)?;
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
        let sequential = matches!(self.totals, Totals::Sequential(_));
        match &self.unstored {
            Some(unstored) => self.record_frame(b, stream, unstored, false, sequential),
            None => self.record_frame(b, stream, self.storing_vertical()?, self.exact.is_none(), sequential),
        }
    }

    fn redo(&self, b: &Slot, stream: &mut dyn Stream) -> Result<()> {
        // The terms stored and added in order where a mean needs it; every
        // mean from that sum when the test redoes every frame.
        self.record_frame(b, stream, self.storing_vertical()?, true, self.totals == Totals::Redone)
    }

    fn finish(&self, index: usize, downloads: &[Vec<u8>], out: &mut Scores) -> Result<()> {
        self.finish_pass(index, downloads, out, self.unstored.is_some())
    }

    fn finish_redone(&self, index: usize, downloads: &[Vec<u8>], out: &mut Scores) -> Result<()> {
        self.finish_pass(index, downloads, out, false)
    }
}

impl SsimGpu {
    /// The map kernel that stores its terms, loaded on first use where the
    /// unstored first pass runs.
    fn storing_vertical(&self) -> Result<&Kernel> {
        if let Some(kernel) = self.vertical.get() {
            return Ok(kernel);
        }
        let kernel = self.gpu.load_kernel(self.vertical_spec)?;
        Ok(self.vertical.get_or_init(|| kernel))
    }

    /// Records one frame's kernels with `vertical` as the map kernel and
    /// `ssim_total` adding the stored terms in order where a mean needs
    /// it (`inline_exact`; for every mean with `sequential`).
    fn record_frame(
        &self,
        b: &Slot,
        stream: &mut dyn Stream,
        vertical: &Kernel,
        inline_exact: bool,
        sequential: bool,
    ) -> Result<()> {
        let [convert, horizontal, total] = &self.kernels;
        let (w, h) = self.plan.levels[0];
        let inv_scaler = 1.0 / scaler(self.geometry.bit_depth);
        stream.dispatch(
            convert,
            // ssim_convert_quads (four samples an item) in the strip shape.
            [groups_for(if self.strip > 1 { w.div_ceil(4) } else { w }, 16), groups_for(h, 16), 1],
            &[
                Arg::Buffer(&b.reference),
                Arg::Buffer(&b.distorted),
                Arg::Buffer(&b.levels[0]),
                Arg::U32(w as u32),
                Arg::U32(h as u32),
                Arg::U32(self.geometry.bytes_per_sample() as u32),
                Arg::F32(inv_scaler),
            ],
        )?;
        for k in 1..self.plan.levels.len() {
            let ((pw, ph), (sw, sh)) = (self.plan.levels[k - 1], self.plan.levels[k]);
            if sw == 0 || sh == 0 {
                continue;
            }
            // The strip kernel is written for ms_ssim's filter (loaded for
            // it only).
            let strips = self.decimate_strips.as_ref();
            let strip = if strips.is_some() { self.strip } else { 1 };
            let kernel = strips
                .or(self.decimate.as_ref())
                .ok_or_else(|| anyhow::anyhow!("ssim: no decimation kernel loaded"))?;
            let mut args = vec![
                Arg::Buffer(&b.levels[k - 1]),
                Arg::Buffer(&b.levels[k]),
                Arg::Buffer(&b.decimation),
                Arg::U32(pw as u32),
                Arg::U32(ph as u32),
                Arg::U32(sw as u32),
                Arg::U32(sh as u32),
                Arg::U32(self.plan.factor as u32),
                Arg::U32(self.plan.k as u32),
            ];
            if strips.is_some() {
                args.push(Arg::U32(strip as u32));
            }
            stream.dispatch(kernel, [groups_for(sw, 16), groups_for(sh.div_ceil(strip), 16), 2], &args)?;
        }
        let (c1, c2, c3) = constants();
        for m in self.maps.iter().filter(|m| m.width > 0) {
            let (lw, lh) = self.plan.levels[m.level];
            stream.dispatch(
                horizontal,
                [groups_for(m.width.div_ceil(self.strip), 64), groups_for(lh, 4), 1],
                &[
                    Arg::Buffer(&b.levels[m.level]),
                    Arg::Buffer(&b.gaussian),
                    Arg::Buffer(&b.planes),
                    Arg::U32(lw as u32),
                    Arg::U32(lh as u32),
                    Arg::U32(self.strip as u32),
                ],
            )?;
            let mask = m.metrics.iter().map(|x| 1u32 << ALL.iter().position(|a| a == x).unwrap_or(0)).sum();
            stream.dispatch(
                vertical,
                [groups_for(m.width, 64), groups_for(m.rows.div_ceil(self.strip), 4), 1],
                &[
                    Arg::Buffer(&b.planes),
                    Arg::Buffer(&b.gaussian),
                    Arg::Buffer(&b.terms),
                    Arg::Buffer(&b.partials),
                    Arg::U32(m.width as u32),
                    Arg::U32(m.rows as u32),
                    Arg::U32(mask),
                    Arg::U32(m.terms_at as u32),
                    Arg::F32(c1),
                    Arg::F32(c2),
                    Arg::F32(c3),
                    Arg::U32(self.strip as u32),
                    Arg::U32(m.partials_at as u32),
                    Arg::U32(m.count as u32),
                ],
            )?;
        }
        if self.entries > 0 {
            stream.dispatch(
                total,
                [self.entries as u32, 1, 1],
                &[
                    Arg::Buffer(&b.terms),
                    Arg::Buffer(&b.partials),
                    Arg::Buffer(&b.entries),
                    Arg::Buffer(&b.results),
                    Arg::U32(self.entries as u32),
                    Arg::U32(u32::from(sequential)),
                    Arg::U32(u32::from(inline_exact)),
                ],
            )?;
            if let (Some(([segments, walk], groups)), Some(records)) = (&self.exact, &b.records) {
                let buffers = [&b.terms, &b.entries, &b.results, records].map(Arg::Buffer);
                let entries = Arg::U32(self.entries as u32);
                for phase in 0..2 {
                    let args = [&buffers[..], &[entries, Arg::U32(*groups as u32), Arg::U32(phase)]].concat();
                    stream.dispatch(segments, [*groups as u32, 1, 1], &args)?;
                }
                stream.dispatch(walk, [self.entries as u32, 1, 1], &[&buffers[..], &[entries]].concat())?;
            }
            stream.download(&b.results, 0, 8 * 5 * self.entries)?;
        }
        Ok(())
    }

    /// One pass's means into the feature's scores. After the unstored
    /// first pass (`unstored`) the device made no sequential sum: a mean
    /// the partial sums cannot decide asks for the frame again ([`Redo`]).
    fn finish_pass(&self, index: usize, downloads: &[Vec<u8>], out: &mut Scores, unstored: bool) -> Result<()> {
        if unstored && self.totals == Totals::Redone {
            return Err(Redo("every frame redone (a test)".into()).into());
        }
        let results: Vec<f64> = match downloads.first() {
            Some(bytes) => bytes.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect(),
            None => Vec::new(),
        };
        ensure!(results.len() == 5 * self.entries, "expected {} SSIM totals, got {}", 5 * self.entries, results.len());
        let mut means = Vec::with_capacity(self.maps.len());
        for m in &self.maps {
            let mut mean_of = [None; 4];
            for (k, metric) in m.metrics.iter().enumerate() {
                let slot = ALL.iter().position(|a| a == metric).unwrap_or(0);
                mean_of[slot] = Some(if m.width == 0 {
                    // No map (a picture below the window): C's 0 / (w * h).
                    mean(Sums::default().ssim, m.pixels)
                } else {
                    let r = &results[5 * (m.first_entry + k)..5 * (m.first_entry + k + 1)];
                    let d = DeviceSum {
                        sum: r[0],
                        magnitudes: r[1],
                        weighted: r[2],
                        sequential: (!unstored && r[4] != 0.0).then_some(r[3]),
                    };
                    match self.totals {
                        Totals::Decide | Totals::Redone if unstored => match resolve(&d, m.width, m.rows) {
                            Ok(mean) => mean,
                            Err(_) => {
                                let why = format!("a mean of {}x{} terms needs the sequential sum", m.width, m.rows);
                                return Err(Redo(why).into());
                            }
                        },
                        Totals::Decide => resolve(&d, m.width, m.rows)?,
                        // The redone pass took every mean from the sum.
                        Totals::Redone | Totals::Sequential(_) => {
                            let s = d.sequential.ok_or_else(|| anyhow::anyhow!("no sequential sum"))?;
                            (s / (m.width * m.rows) as f64) as f32
                        }
                    }
                });
            }
            means.push(mean_of);
        }
        (self.record)(&means, index, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    /// The Vulkan dialect of ssim_decimate_strips holds ms_ssim's filter as
    /// constants (shaders/include/ms_ssim_lpf.glsl): they must be LPF's
    /// bits, every tap at its row and column.
    #[test]
    fn the_vulkan_lpf_holds_the_cpu_taps() {
        let source = include_str!("../../../shaders/include/ms_ssim_lpf.glsl");
        let mut seen = [[None; 9]; 9];
        for line in source.lines().filter(|l| l.starts_with("t[")) {
            let parse = |s: &str| s.parse::<usize>().expect("an index");
            let (at, value) = line.split_once(" = uintBitsToFloat(0x").expect("an assignment");
            let (v, u) = at.trim_start_matches("t[").trim_end_matches(']').split_once("][").expect("two indices");
            let bits = u32::from_str_radix(value.trim_end_matches("u);"), 16).expect("a hex constant");
            seen[parse(v)][parse(u)] = Some(bits);
        }
        let expected = super::super::tables::LPF.map(|row| row.map(|t| Some(t.to_bits())));
        assert_eq!(seen, expected);
    }

    #[test]
    fn the_totals_variable_forces_the_sequential_sums_or_says_what_it_takes() {
        let decide = Totals::Decide;
        assert_eq!(forced_totals(decide, None, Exact::Parallel).unwrap(), Totals::Decide);
        assert_eq!(forced_totals(decide, Some(OsStr::new("decide")), Exact::Parallel).unwrap(), Totals::Decide);
        let forced = forced_totals(decide, Some(OsStr::new("sequential")), Exact::Parallel).unwrap();
        assert_eq!(forced, Totals::Sequential(Exact::Parallel));
        // A test's own choice stands.
        let inline = Totals::Sequential(Exact::Inline);
        assert_eq!(forced_totals(inline, Some(OsStr::new("decide")), Exact::Parallel).unwrap(), inline);
        let err = forced_totals(decide, Some(OsStr::new("seq")), Exact::Inline).unwrap_err().to_string();
        assert!(err.contains("ULPGATE_SSIM_TOTALS=\"seq\"") && err.contains("`sequential`"), "{err}");
    }
}
