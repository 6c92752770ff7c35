//! The motion family's GPU pipelines, one per arithmetic (integer motion
//! for `motion` and `motion_v2`, float motion), written once against the
//! [`Gpu`] trait. Both are windowed (features/gpu.rs): a frame's slot holds
//! the earlier reference it compares with and its own reference, so frames
//! stay independent and several are in flight; the per-frame values come
//! back to the host, and the sequence rules ([`super::sequence`]) run once
//! after the last frame.

use super::float::{FloatMotion, RAW_SCORE, bilinear_axis, half};
use super::integer::{Integer, score};
use crate::backend::DeviceInfo;
use crate::backend::gpu::{Arg, Buffer, Gpu, Kernel, KernelSpec, Stream, groups_for};
use crate::features::gpu::{FrameInput, GpuExtractor, GpuPipeline, floats, planes_bytes, word_buffer, words};
use crate::features::picture::scaler;
use crate::features::{Extractor, Options};
use crate::fixture::Geometry;
use crate::scores::Scores;
use anyhow::{Context, Result, ensure};
use std::ffi::OsStr;
use std::sync::Arc;

/// `motion_sad` (kernels/motion.cl, shaders/motion_sad.comp): integer
/// motion's SAD (integer_motion.c `motion_score_pipeline_8/16`, bit for
/// bit) of the luma of `prev` against `cur`. Launch `[ceil(width / 1024),
/// ceil(height / 16), 1]` groups of 128: group `(gx, gy)` writes, at
/// `partials[gy * groups_x + gx]`, Σ |val| over columns `1024 gx ..
/// 1024 gx + 1023` and rows `16 gy .. 16 gy + 15` (clipped to the plane),
/// where `val` is the blurred difference at a pixel. Buffers: prev, cur
/// (luma samples, 1 or 2 bytes, little-endian), partials (u32). Scalars:
/// width, height, bytes per sample, bit depth.
///
/// Each work item owns 8 output columns of a 16-row band: it slides down
/// the band a window of the differences at the 12 columns those outputs
/// read, recomputing the vertical pass at neighbour columns rather than
/// sharing it (no barrier but the one before the group's sum), and reads
/// a row's 12 samples of a frame as 4 (8-bit) or 7 (16-bit) whole 32-bit
/// words away from the plane's edges: 1.25 loads an output at 8 bits (a
/// CPU driver such as lavapipe pays per load, about 13 cycles a lane in
/// Mesa 22; a GPU gets coalesced words). The C sums
/// products in 64 bits where they can exceed 32; the kernel splits them
/// into exact 32-bit halves (`integer::round_shift_split`). The sum of
/// |val| is an integer, so how the work is cut cannot change it; libvmaf's
/// per-row 32-bit sums cannot wrap below 65538 columns (the pipeline
/// refuses wider planes), so Σ over groups is its Σ over rows.
pub static MOTION_SAD: KernelSpec =
    KernelSpec { name: "motion_sad", family: "motion", workgroup: [128, 1, 1], buffers: 3, scalars: 4 };

/// `motion_sad_bytes`: [`MOTION_SAD`] for 8-bit planes only
/// (`bytes_per_sample` 1, which the caller guarantees): the Vulkan
/// dialect reads no 16-bit words, which lavapipe would read beside the
/// 8-bit ones, and reads the edge columns from the same words
/// (shaders/include/motion_row_bytes.glsl).
pub static MOTION_SAD_BYTES: KernelSpec =
    KernelSpec { name: "motion_sad_bytes", family: "motion", workgroup: [128, 1, 1], buffers: 3, scalars: 4 };

/// Rows of a `motion_sad` band (`MOTION_ROWS` in the C dialect).
pub const MOTION_ROWS: usize = 16;
/// Output columns of a `motion_sad` work item (`MOTION_COLS`).
pub const MOTION_COLS: usize = 8;

/// Output rows of a `float_motion_rows` work item
/// (`FLOAT_MOTION_ROWS_PER_ITEM` in the C dialect, `ROWS` in GLSL).
pub const FLOAT_MOTION_ROWS_PER_ITEM: usize = 4;

/// `float_motion_rows` (kernels/motion.cl, shaders/float_motion_rows.comp):
/// float_motion's blur of one plane of both frames and each row's SAD. One
/// work item per [`FLOAT_MOTION_ROWS_PER_ITEM`] rows (launch
/// `[ceil(ceil(height / 4) / 64), 1, 1]`): it walks its rows left to
/// right, computing each pixel of both frames as `convolution_f32_c_s` does — the vertical pass (`convolution_y_c_s`:
/// from 0, `+= taps[k] * pixel(row k)` in tap order, on picture_copy's
/// `v / scaler - 128`), then the horizontal pass over the vertical values
/// (`convolution_x_c_s`), borders mirrored — and writes
/// `rows[row_offset + i]` = Σ |prev - cur| in f32 in pixel order
/// (`vmaf_image_sad_c`'s `accum_line`). With `store` not 0 it also writes
/// both blurred planes to `blur` (`[prev | cur]`, 2 x width x height f32),
/// which [`FLOAT_MOTION_SAD_SCALED_ROWS`] reads. Buffers: prev, cur (whole
/// frames' planes, samples), taps (the filter, f32), blur, rows. Scalars:
/// plane offset (samples), width, height, bytes per sample, 1 / scaler
/// (f32, exact: the scaler is a power of two), filter width (3 or 5), row
/// offset, store.
///
/// The row sum is sequential in libvmaf, and float addition is not
/// associative: keeping it sequential per row keeps the CPU's bits, and
/// then on a CPU driver a work item that slides a window of vertical
/// values along its rows (one new column a step, each picture sample read
/// once per filter row, no intermediate planes) is the cheapest way to get
/// the blurred values to it. Rows run in parallel; the host adds them in
/// order. GPUs run [`FLOAT_MOTION_BLUR_Y`]'s shape instead.
pub static FLOAT_MOTION_ROWS: KernelSpec =
    KernelSpec { name: "float_motion_rows", family: "motion", workgroup: [64, 1, 1], buffers: 5, scalars: 8 };

/// `float_motion_rows_bytes`: [`FLOAT_MOTION_ROWS`] for 8-bit planes only,
/// likewise (shaders/include/motion_quads_bytes.glsl).
pub static FLOAT_MOTION_ROWS_BYTES: KernelSpec =
    KernelSpec { name: "float_motion_rows_bytes", family: "motion", workgroup: [64, 1, 1], buffers: 5, scalars: 8 };

/// `float_motion_blur_y` (kernels/motion.cl, shaders/float_motion_blur_y.comp):
/// the vertical pass of `convolution_f32_c_s` (`convolution_y_c_s`) over one
/// plane of both frames, on picture_copy's floats (`v / scaler - 128`).
/// Launch `[ceil(n / 256), 1, 2]`, n = width x height: work item `p` of
/// z-layer 0 (prev) or 1 (cur) writes `tmp[z * n + p]` = Σ taps[k] *
/// pixel(row mirror(i - r + k), column j), summed in f32 from 0 in tap
/// order. Buffers: prev, cur (whole frames' planes, samples), taps (f32),
/// tmp (2n f32). Scalars: plane offset (samples), width, height, bytes per
/// sample, 1 / scaler (f32, exact: the scaler is a power of two), filter
/// width (3 or 5).
///
/// With [`FLOAT_MOTION_BLUR_X`] and [`FLOAT_MOTION_SAD_ROWS`] this is the
/// GPU shape of [`FLOAT_MOTION_ROWS`]'s contract (the same `rows`, the same
/// bits, and the same `blur` planes): every pixel of the blur is its own
/// work item, and only the sequential row sum runs a work item per row.
/// [`FLOAT_MOTION_ROWS`] (a work item per 4 rows: 270 at 1080p) would leave
/// a GPU nearly idle; on a CPU driver, where every load costs, its fused
/// walk is faster. [`float_shape_for`] chooses.
pub static FLOAT_MOTION_BLUR_Y: KernelSpec =
    KernelSpec { name: "float_motion_blur_y", family: "motion", workgroup: [256, 1, 1], buffers: 4, scalars: 6 };

/// `float_motion_blur_x` (kernels/motion.cl, shaders/float_motion_blur_x.comp):
/// the horizontal pass (`convolution_x_c_s`) of both frames' `tmp` into
/// `blur` (`[prev | cur]`), launched and laid out as
/// [`FLOAT_MOTION_BLUR_Y`]. Buffers: taps, tmp, blur. Scalars: width,
/// height, filter width.
pub static FLOAT_MOTION_BLUR_X: KernelSpec =
    KernelSpec { name: "float_motion_blur_x", family: "motion", workgroup: [256, 1, 1], buffers: 3, scalars: 3 };

/// `float_motion_sad_rows` (kernels/motion.cl, shaders/float_motion_sad_rows.comp):
/// one work item per row `i < height` writes `rows[row_offset + i]` = Σ
/// |blur[i][j] - blur[n + i][j]| in f32, j left to right
/// (`vmaf_image_sad_c`'s `accum_line`). Buffers: blur (2n f32), rows.
/// Scalars: width, height, row offset.
pub static FLOAT_MOTION_SAD_ROWS: KernelSpec =
    KernelSpec { name: "float_motion_sad_rows", family: "motion", workgroup: [64, 1, 1], buffers: 2, scalars: 3 };

/// The two shapes of float_motion's blur and row sums (the same bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatShape {
    /// [`FLOAT_MOTION_ROWS`]: a work item walks 4 rows, blur fused.
    Rows,
    /// [`FLOAT_MOTION_BLUR_Y`], [`FLOAT_MOTION_BLUR_X`], [`FLOAT_MOTION_SAD_ROWS`].
    Planes,
}

/// The environment variable that overrides float_motion's shape: `rows`
/// or `planes`. A testing and diagnostic switch (both give the same bits);
/// unset or empty, [`float_shape_for`] chooses by device type.
pub const FLOAT_SHAPE_VAR: &str = "ULPGATE_FLOAT_MOTION_KERNEL";

/// float_motion's shape for `device`: [`FloatShape::Rows`] on CPU
/// implementations (`device_type` `cpu`: Mesa lavapipe, PoCL),
/// [`FloatShape::Planes`] on everything else (GPUs). `choice` is
/// [`FLOAT_SHAPE_VAR`]'s value, which overrides the device type; anything
/// but `rows`, `planes` or empty is an error.
pub fn float_shape_for(device: &DeviceInfo, choice: Option<&OsStr>) -> Result<FloatShape> {
    crate::features::gpu::shape_for_driver(
        device,
        FLOAT_SHAPE_VAR,
        choice,
        ("rows", "float_motion_rows", FloatShape::Rows),
        ("planes", "float_motion_blur_y, float_motion_blur_x, float_motion_sad_rows", FloatShape::Planes),
    )
}

/// `float_motion_sad_scaled_rows` (kernels/motion.cl,
/// shaders/float_motion_sad_scaled_rows.comp): with `motion_add_scale1`,
/// one work item per scaled row `y < scaled_height` writes
/// `rows[row_offset + y]` = Σ |a - b| over the scaled row in f32, left to
/// right, where `a` and `b` are the bilinear samples of the two blurred
/// planes (vif_tools.c `vif_scale_frame_bilinear_apply_s`, in its operation
/// order). Buffers: blur (2n f32), index (u32: x1, x2 per scaled column,
/// then y1, y2 per scaled row), weight (f32: dx per column, then dy per
/// row), rows. Scalars: width, height, scaled width, scaled height, row
/// offset.
pub static FLOAT_MOTION_SAD_SCALED_ROWS: KernelSpec = KernelSpec {
    name: "float_motion_sad_scaled_rows",
    family: "motion",
    workgroup: [64, 1, 1],
    buffers: 4,
    scalars: 5,
};

/// The previous reference (or the one two back), then this frame's.
fn inputs(back: usize) -> [FrameInput; 2] {
    [FrameInput { back, distorted: false }, FrameInput::REFERENCE]
}

/// The GPU extractor of `motion` (or with `v2` of `motion_v2`).
pub fn integer_extractor(
    gpu: Arc<dyn Gpu>,
    geometry: &Geometry,
    options: &Options,
    v2: bool,
) -> Result<Box<dyn Extractor>> {
    let motion = Integer::new(options, v2)?;
    // The CPU reference sums each row's |val| in a wrapping u32 as the C
    // does; the kernel's per-group partials are only that sum where no row
    // sum reaches 2^32 (|val| <= 65535, so up to 65537 columns).
    ensure!(
        u64::from(geometry.width) * 65535 < 1 << 32,
        "{} on a GPU: rows of {} samples could wrap libvmaf's 32-bit row sums (above 65537 columns), \
         which the kernel's per-group sums do not reproduce; the cpu backend scores it",
        if v2 { "motion_v2" } else { "motion" },
        geometry.width
    );
    let spec = if geometry.bytes_per_sample() == 1 { &MOTION_SAD_BYTES } else { &MOTION_SAD };
    let pipeline = IntegerGpu { kernel: gpu.load_kernel(spec)?, geometry: *geometry, motion };
    GpuExtractor::boxed(gpu, pipeline)
}

struct IntegerGpu {
    kernel: Kernel,
    geometry: Geometry,
    motion: Integer,
}

impl IntegerGpu {
    fn groups(&self) -> [u32; 3] {
        let (w, h) = (self.geometry.width as usize, self.geometry.height as usize);
        [groups_for(w, MOTION_SAD.workgroup[0] * MOTION_COLS as u32), groups_for(h, MOTION_ROWS as u32), 1]
    }

    fn partials(&self) -> usize {
        let [x, y, _] = self.groups();
        (x * y) as usize
    }
}

impl GpuPipeline for IntegerGpu {
    type Slot = [Buffer; 3];

    fn new_slot(&self, gpu: &dyn Gpu) -> Result<Self::Slot> {
        let luma = planes_bytes(&self.geometry, 1);
        Ok([word_buffer(gpu, luma)?, word_buffer(gpu, luma)?, gpu.create_buffer(self.partials() * 4)?])
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

    fn input_frames(&self) -> [FrameInput; 2] {
        inputs(self.motion.back())
    }

    fn compute(&self, b: &Self::Slot, stream: &mut dyn Stream) -> Result<()> {
        let g = &self.geometry;
        let args = [
            Arg::Buffer(&b[0]),
            Arg::Buffer(&b[1]),
            Arg::Buffer(&b[2]),
            Arg::U32(g.width),
            Arg::U32(g.height),
            Arg::U32(g.bytes_per_sample() as u32),
            Arg::U32(u32::from(g.bit_depth)),
        ];
        stream.dispatch(&self.kernel, self.groups(), &args)?;
        stream.download(&b[2], 0, self.partials() * 4)
    }

    fn finish(&self, index: usize, downloads: &[Vec<u8>], out: &mut Scores) -> Result<()> {
        let partials: Vec<u32> = words(&downloads[0]).collect();
        ensure!(partials.len() == self.partials(), "expected {} partial sums, got {}", self.partials(), partials.len());
        let mut value = 0.0;
        if self.motion.scores(index) {
            let sad: u64 = partials.iter().map(|&p| u64::from(p)).sum();
            let (w, h) = (self.geometry.width as usize, self.geometry.height as usize);
            value = score(sad, w, h, &self.motion.params);
        }
        self.motion.record(index, value, out);
        Ok(())
    }

    fn finish_sequence(&self, scores: &mut Scores, frames: usize) -> Result<()> {
        self.motion.finish_sequence(scores, frames)
    }
}

/// The GPU extractor of `float_motion`, in the shape [`float_shape_for`]
/// chooses for the device.
pub fn float_extractor(gpu: Arc<dyn Gpu>, geometry: &Geometry, options: &Options) -> Result<Box<dyn Extractor>> {
    let shape = float_shape_for(gpu.device(), std::env::var_os(FLOAT_SHAPE_VAR).as_deref())?;
    float_extractor_shaped(gpu, geometry, options, shape)
}

/// The GPU extractor of `float_motion` in a given shape (tests take both).
pub fn float_extractor_shaped(
    gpu: Arc<dyn Gpu>,
    geometry: &Geometry,
    options: &Options,
    shape: FloatShape,
) -> Result<Box<dyn Extractor>> {
    // The guard `FeatureImpl::gpu_extractor` puts in front of the factory,
    // for the tests that call this one directly.
    super::FLOAT_MOTION.ensure_takes(geometry, options)?;
    let motion = FloatMotion::new(options)?;
    let planes = motion.options.planes();
    // Per plane: its rows, then (with scale 1) its scaled rows.
    let mut row_offsets = Vec::new();
    let mut rows = 0;
    for p in 0..planes {
        let (_, h) = geometry.plane_dims(p);
        let scaled = if motion.options.add_scale1 { half(h) } else { 0 };
        row_offsets.push((rows, rows + h));
        rows += h + scaled;
    }
    let kernels = match shape {
        FloatShape::Rows => FloatKernels::Rows(gpu.load_kernel(if geometry.bytes_per_sample() == 1 {
            &FLOAT_MOTION_ROWS_BYTES
        } else {
            &FLOAT_MOTION_ROWS
        })?),
        FloatShape::Planes => FloatKernels::Planes {
            blur_y: gpu.load_kernel(&FLOAT_MOTION_BLUR_Y)?,
            blur_x: gpu.load_kernel(&FLOAT_MOTION_BLUR_X)?,
            sad_rows: gpu.load_kernel(&FLOAT_MOTION_SAD_ROWS)?,
        },
    };
    let pipeline = FloatGpu {
        kernels,
        // Built only where it runs (motion_add_scale1): on lavapipe building
        // a pipeline is a NIR translation in every run.
        sad_scaled_rows: if motion.options.add_scale1 {
            Some(gpu.load_kernel(&FLOAT_MOTION_SAD_SCALED_ROWS)?)
        } else {
            None
        },
        geometry: *geometry,
        motion,
        row_offsets,
        rows,
    };
    GpuExtractor::boxed(gpu, pipeline)
}

enum FloatKernels {
    Rows(Kernel),
    Planes { blur_y: Kernel, blur_x: Kernel, sad_rows: Kernel },
}

struct FloatGpu {
    kernels: FloatKernels,
    /// With `motion_add_scale1` only.
    sad_scaled_rows: Option<Kernel>,
    geometry: Geometry,
    motion: FloatMotion,
    /// Per plane: where its rows and its scaled rows start in `rows`.
    row_offsets: Vec<(usize, usize)>,
    rows: usize,
}

struct FloatSlot {
    prev: Buffer,
    cur: Buffer,
    taps: Buffer,
    /// Both frames' vertical pass (the planes shape only; else a word).
    tmp: Buffer,
    /// Both blurred planes (the planes shape, or scale 1; else a word).
    blur: Buffer,
    rows: Buffer,
    /// Per plane, the bilinear tables of scale 1 (index, weight).
    tables: Vec<(Buffer, Buffer)>,
}

impl GpuPipeline for FloatGpu {
    type Slot = FloatSlot;

    fn new_slot(&self, gpu: &dyn Gpu) -> Result<Self::Slot> {
        let g = &self.geometry;
        let planes = self.motion.options.planes();
        let bytes = planes_bytes(g, planes);
        let largest = (0..planes).map(|p| g.plane_samples(p)).max().unwrap_or(0);
        let taps = self.motion.options.taps();
        let planes_shape = matches!(self.kernels, FloatKernels::Planes { .. });
        let blurred = if self.motion.options.add_scale1 || planes_shape { 2 * largest } else { 1 };
        let slot = FloatSlot {
            prev: word_buffer(gpu, bytes)?,
            cur: word_buffer(gpu, bytes)?,
            taps: gpu.create_buffer(taps.len() * 4)?,
            tmp: gpu.create_buffer(if planes_shape { 2 * largest * 4 } else { 4 })?,
            blur: gpu.create_buffer(blurred * 4)?,
            rows: gpu.create_buffer(self.rows * 4)?,
            tables: Vec::new(),
        };
        // Taps and tables are computed once, here, on the host: every
        // dialect uses the CPU reference's very values.
        let mut stream = gpu.create_stream()?;
        let tap_bytes: Vec<u8> = taps.iter().flat_map(|t| t.to_le_bytes()).collect();
        stream.upload(&slot.taps, 0, &tap_bytes)?;
        let mut tables = Vec::new();
        if self.motion.options.add_scale1 {
            for p in 0..planes {
                let (w, h) = g.plane_dims(p);
                let axes: Vec<(usize, usize, f32)> =
                    bilinear_axis(w, half(w)).into_iter().chain(bilinear_axis(h, half(h))).collect();
                let index: Vec<u8> =
                    axes.iter().flat_map(|&(a, b, _)| [a as u32, b as u32]).flat_map(u32::to_le_bytes).collect();
                let weight: Vec<u8> = axes.iter().flat_map(|&(_, _, d)| d.to_le_bytes()).collect();
                let (ib, wb) = (gpu.create_buffer(index.len())?, gpu.create_buffer(weight.len())?);
                stream.upload(&ib, 0, &index)?;
                stream.upload(&wb, 0, &weight)?;
                tables.push((ib, wb));
            }
        }
        stream.wait()?;
        Ok(FloatSlot { tables, ..slot })
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    fn planes(&self) -> usize {
        self.motion.options.planes()
    }

    fn inputs<'a>(&self, slot: &'a Self::Slot) -> [&'a Buffer; 2] {
        [&slot.prev, &slot.cur]
    }

    fn input_frames(&self) -> [FrameInput; 2] {
        inputs(1)
    }

    fn compute(&self, b: &Self::Slot, stream: &mut dyn Stream) -> Result<()> {
        let g = &self.geometry;
        let filter_width = self.motion.options.taps().len() as u32;
        let inv_scaler = 1.0 / scaler(g.bit_depth);
        let store = u32::from(self.motion.options.add_scale1);
        for p in 0..self.motion.options.planes() {
            let (w, h) = g.plane_dims(p);
            let (w32, h32) = (w as u32, h as u32);
            let (rows_at, scaled_at) = self.row_offsets[p];
            let (offset, bytes) = (g.plane_offset(p) as u32, g.bytes_per_sample() as u32);
            match &self.kernels {
                FloatKernels::Rows(kernel) => {
                    let args = [
                        Arg::Buffer(&b.prev),
                        Arg::Buffer(&b.cur),
                        Arg::Buffer(&b.taps),
                        Arg::Buffer(&b.blur),
                        Arg::Buffer(&b.rows),
                        Arg::U32(offset),
                        Arg::U32(w32),
                        Arg::U32(h32),
                        Arg::U32(bytes),
                        Arg::F32(inv_scaler),
                        Arg::U32(filter_width),
                        Arg::U32(rows_at as u32),
                        Arg::U32(store),
                    ];
                    let items = h.div_ceil(FLOAT_MOTION_ROWS_PER_ITEM);
                    stream.dispatch(kernel, [groups_for(items, FLOAT_MOTION_ROWS.workgroup[0]), 1, 1], &args)?;
                }
                FloatKernels::Planes { blur_y, blur_x, sad_rows } => {
                    let groups = [groups_for(w * h, FLOAT_MOTION_BLUR_Y.workgroup[0]), 1, 2];
                    let y_args = [
                        Arg::Buffer(&b.prev),
                        Arg::Buffer(&b.cur),
                        Arg::Buffer(&b.taps),
                        Arg::Buffer(&b.tmp),
                        Arg::U32(offset),
                        Arg::U32(w32),
                        Arg::U32(h32),
                        Arg::U32(bytes),
                        Arg::F32(inv_scaler),
                        Arg::U32(filter_width),
                    ];
                    stream.dispatch(blur_y, groups, &y_args)?;
                    let x_args = [
                        Arg::Buffer(&b.taps),
                        Arg::Buffer(&b.tmp),
                        Arg::Buffer(&b.blur),
                        Arg::U32(w32),
                        Arg::U32(h32),
                        Arg::U32(filter_width),
                    ];
                    stream.dispatch(blur_x, groups, &x_args)?;
                    let row_groups = [groups_for(h, FLOAT_MOTION_SAD_ROWS.workgroup[0]), 1, 1];
                    let sad_args = [
                        Arg::Buffer(&b.blur),
                        Arg::Buffer(&b.rows),
                        Arg::U32(w32),
                        Arg::U32(h32),
                        Arg::U32(rows_at as u32),
                    ];
                    stream.dispatch(sad_rows, row_groups, &sad_args)?;
                }
            }
            if let Some((index, weight)) = b.tables.get(p) {
                let kernel =
                    self.sad_scaled_rows.as_ref().context("float_motion: the scale 1 kernel was not loaded")?;
                let (sw, sh) = (half(w), half(h));
                let args = [
                    Arg::Buffer(&b.blur),
                    Arg::Buffer(index),
                    Arg::Buffer(weight),
                    Arg::Buffer(&b.rows),
                    Arg::U32(w32),
                    Arg::U32(h32),
                    Arg::U32(sw as u32),
                    Arg::U32(sh as u32),
                    Arg::U32(scaled_at as u32),
                ];
                let groups = [groups_for(sh, FLOAT_MOTION_SAD_SCALED_ROWS.workgroup[0]), 1, 1];
                stream.dispatch(kernel, groups, &args)?;
            }
        }
        stream.download(&b.rows, 0, self.rows * 4)
    }

    fn finish(&self, index: usize, downloads: &[Vec<u8>], out: &mut Scores) -> Result<()> {
        let rows: Vec<f32> = floats(&downloads[0]).collect();
        ensure!(rows.len() == self.rows, "expected {} row sums, got {}", self.rows, rows.len());
        if self.motion.options.params.force_zero {
            return Ok(());
        }
        let mut value = 0.0f64;
        if index > 0 {
            // vmaf_image_sad_c per plane: rows added in order, in f32.
            let mean = |rows: &[f32], samples: usize| rows.iter().fold(0.0f32, |a, &r| a + r) / samples as f32;
            for (p, &(at, scaled_at)) in self.row_offsets.iter().enumerate() {
                let (w, h) = self.geometry.plane_dims(p);
                let mut s = mean(&rows[at..at + h], w * h);
                if self.motion.options.add_scale1 {
                    let (sw, sh) = (half(w), half(h));
                    s += mean(&rows[scaled_at..scaled_at + sh], sw * sh);
                }
                value += f64::from(s);
            }
        }
        out.record(RAW_SCORE, index, value);
        Ok(())
    }

    fn finish_sequence(&self, scores: &mut Scores, frames: usize) -> Result<()> {
        self.motion.finish_sequence(scores, frames)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_drivers_walk_rows_and_gpus_blur_planes() {
        let device = crate::features::gpu::device_of_type;
        let (cpu, gpu, unknown) = (device(Some("cpu")), device(Some("discrete-gpu")), device(None));
        let pick = |d: &DeviceInfo, v: Option<&str>| float_shape_for(d, v.map(OsStr::new));
        assert_eq!(pick(&cpu, None).unwrap(), FloatShape::Rows);
        assert_eq!(pick(&cpu, Some("")).unwrap(), FloatShape::Rows);
        assert_eq!(pick(&gpu, None).unwrap(), FloatShape::Planes);
        assert_eq!(pick(&unknown, None).unwrap(), FloatShape::Planes);
        // The variable overrides the device type, both ways.
        assert_eq!(pick(&cpu, Some("planes")).unwrap(), FloatShape::Planes);
        assert_eq!(pick(&gpu, Some("rows")).unwrap(), FloatShape::Rows);
        for bad in ["Planes", "row", " rows", "float_motion_rows"] {
            let err = pick(&gpu, Some(bad)).unwrap_err().to_string();
            assert!(err.contains(FLOAT_SHAPE_VAR) && err.contains("`rows`") && err.contains("`planes`"), "{err}");
            assert!(err.contains(&format!("{bad:?}")), "{err}");
        }
    }
}
