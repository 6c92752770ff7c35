//! `float_ansnr` (libvmaf float_ansnr.c + ansnr.c + ansnr_tools.c): the
//! reference filtered by a 3x3 kernel, the distorted by a 5x5 kernel, then
//! signal and noise energies. Every sum runs in f32 in libvmaf's order so
//! the result is bit-identical to its C path.

use super::gpu::{GpuExtractor, GpuPipeline, floats, planes_bytes, word_buffer};
use super::picture::{float_peak, float_plane_into, scaler};
use super::{Extractor, FeatureImpl, Options, options};
use crate::backend::DeviceInfo;
use crate::backend::gpu::{Arg, Buffer, Gpu, Kernel, KernelSpec, Stream, groups_for};
use crate::fixture::{Frame, Geometry};
use crate::scores::Scores;
use anyhow::{Result, ensure};
use std::ffi::OsStr;
use std::sync::Arc;

pub static FLOAT_ANSNR: FeatureImpl = FeatureImpl {
    name: "float_ansnr",
    options: &[],
    metrics: |options| {
        options::check("float_ansnr", options, &[])?;
        Ok(vec!["float_ansnr".into(), "float_anpsnr".into()])
    },
    cpu: |geometry, options| {
        options::check("float_ansnr", options, &[])?;
        Ok(Box::new(AnsnrCpu { bit_depth: geometry.bit_depth, planes: Default::default() }))
    },
    gpu: Some(|gpu, geometry, options| {
        options::check("float_ansnr", options, &[])?;
        let spec = kernel_for(gpu.device(), std::env::var_os(KERNEL_VAR).as_deref())?;
        gpu_extractor(gpu, geometry, spec)
    }),
    kernels: &[&ANSNR_FILTER_ROWS, &ANSNR_ROW_GROUPS],
    temporal: false,
    chroma_metrics: &[],
    refuses,
};

/// ansnr_tools.c's `ansnr_filter2d_s` mirrors an index once (-k to k, h + k
/// to h - k - 1): with the distorted picture's 5x5 filter, a luma below 3
/// in either dimension is read outside the picture (valgrind: invalid
/// reads; libvmaf prints null or a number from memory past the plane), so
/// there is no score to match.
fn refuses(geometry: &Geometry, _: &Options) -> Option<String> {
    let (w, h) = (geometry.width, geometry.height);
    (w < 3 || h < 3).then(|| {
        format!(
            "frame {w}x{h} is below 3x3, where ansnr_filter2d_s's 5x5 mirror reads outside \
             the frame (undefined behaviour; libvmaf has no score to match)"
        )
    })
}

/// The GPU pipeline with a given kernel, [`ANSNR_FILTER_ROWS`] or
/// [`ANSNR_ROW_GROUPS`] (the factory asks [`kernel_for`]; tests take both).
pub fn gpu_extractor(gpu: Arc<dyn Gpu>, geometry: &Geometry, spec: &'static KernelSpec) -> Result<Box<dyn Extractor>> {
    ensure!(*spec == ANSNR_FILTER_ROWS || *spec == ANSNR_ROW_GROUPS, "{} is not a float_ansnr kernel", spec.name);
    // The guard `FeatureImpl::gpu_extractor` puts in front of the factory,
    // for the tests that call this one directly.
    FLOAT_ANSNR.ensure_takes(geometry, &Options::default())?;
    let pipeline = AnsnrGpu { kernel: gpu.load_kernel(spec)?, geometry: *geometry };
    GpuExtractor::boxed(gpu, pipeline)
}

/// The environment variable that overrides which `float_ansnr` kernel runs:
/// `rows` ([`ANSNR_FILTER_ROWS`]) or `groups` ([`ANSNR_ROW_GROUPS`]). A
/// testing and diagnostic switch (both kernels give the same bits); unset or
/// empty, [`kernel_for`] chooses by device type.
pub const KERNEL_VAR: &str = "ULPGATE_ANSNR_KERNEL";

/// The `float_ansnr` kernel for `device`: [`ANSNR_FILTER_ROWS`] on CPU
/// implementations (`device_type` `cpu`: Mesa lavapipe, PoCL), where a
/// work-group barrier costs microseconds and a thread walking its row with
/// the windows in registers is fastest; [`ANSNR_ROW_GROUPS`] on everything
/// else (GPUs), where one thread per row leaves the chip idle. `choice` is
/// [`KERNEL_VAR`]'s value, which overrides the device type; anything but
/// `rows`, `groups` or empty is an error.
pub fn kernel_for(device: &DeviceInfo, choice: Option<&OsStr>) -> Result<&'static KernelSpec> {
    let rows: &'static KernelSpec = &ANSNR_FILTER_ROWS;
    let groups: &'static KernelSpec = &ANSNR_ROW_GROUPS;
    super::gpu::shape_for_driver(device, KERNEL_VAR, choice, ("rows", rows.name, rows), ("groups", groups.name, groups))
}

/// `ansnr_filter_rows` (kernels/ansnr.cl, shaders/ansnr_filter_rows.comp):
/// one thread per luma row `y < height`. For each pixel of the row, left to
/// right, it filters the reference through the 3x3 and the distorted through
/// the 5x5 kernel exactly as [`filter2d`] does (samples to float as
/// `v / scaler - 128`, the same mirror rule, each filter row summed in f32
/// then the rows, no fused multiply-add), and sums in f32 `r * r` and
/// `(r - d) * (r - d)` in pixel order ([`signal_noise`]'s row sums), writing
/// them to `rows[2y]` and `rows[2y + 1]`. Buffers: reference, distorted,
/// taps (9 reference taps then 25 distorted taps, f32), rows (2 x height
/// f32). Scalars: width, height, bytes per sample, scaler (f32).
///
/// One pass, no filtered planes: a thread walks its row with the filter
/// windows in registers, reading each sample once per window row, where a
/// thread per pixel would read 34 (what decides the speed on CPU drivers
/// such as lavapipe). The row sums are sequential anyway: float addition in
/// libvmaf's order is what makes the result bit-identical.
pub static ANSNR_FILTER_ROWS: KernelSpec =
    KernelSpec { name: "ansnr_filter_rows", family: "ansnr", workgroup: [64, 1, 1], buffers: 4, scalars: 4 };

/// `ansnr_row_groups` (kernels/ansnr.cl, shaders/ansnr_row_groups.comp):
/// the [`ANSNR_FILTER_ROWS`] contract (same buffers, scalars and results,
/// bit for bit) with one work group of 128 per luma row, for GPUs: launch
/// `[height, 1, 1]` groups; group `y` writes `rows[2y]` and `rows[2y + 1]`.
/// The scaler must be a power of two, as every bit depth's is: the kernel
/// computes `v / scaler` as `v * (1 / scaler)`, the same bits then, without
/// a correctly rounded division per sample.
///
/// The group cuts its row into chunks of 1024 pixels. Its work items filter
/// a chunk's pixels in parallel (work item `i` takes pixels `i`, `i + 128`,
/// ...: consecutive work items read consecutive samples), each pixel exactly
/// as [`filter2d`] does, and store `r * r` and `(r - d) * (r - d)` in local
/// (CUDA: shared) memory, 2 x 4 KiB; after a barrier, work item 0 alone
/// adds them to the row's sums in pixel order, carrying the sums from chunk
/// to chunk, and a second barrier keeps the next chunk from overwriting what
/// it has not read. Only the adds are sequential, and a product is the same
/// wherever it is computed, so the row sums are [`signal_noise`]'s bits, at
/// any width.
///
/// Why 128 and 1024: an NVIDIA SM holds at most 2048 threads, so with 256
/// a group at most 8 groups fit, 1056 rows on a 132-SM H100/H200: 24 short
/// of 1080, and a second wave for them. With 128, 9 groups a SM (at up to
/// 56 registers a thread) hold every row of a 1080p frame at once, so one
/// group's serial adds overlap other groups' filtering; 64 would fill each
/// row in twice as many steps for nothing. A 1024-pixel chunk is 8 pixels a
/// work item and 8 KiB a group, so local memory never limits how many
/// groups an SM holds (16 x 8 KiB); a 1080p row takes two chunks.
///
/// The serial part is the floor: two chains of `width` dependent f32 adds,
/// one per energy, run side by side. Work item 0 loads the next 8 pixels'
/// energies before adding the current 8, so the loads' latency hides behind
/// the adds; at about 4 cycles an add that is some 7,700 cycles (about 4 us
/// at 1.98 GHz) for a 1920-pixel row, every row at once.
///
/// [`kernel_for`] runs it on devices that are not CPU implementations;
/// `ULPGATE_ANSNR_KERNEL=groups` forces it anywhere (the tests run it on
/// lavapipe and PoCL).
pub static ANSNR_ROW_GROUPS: KernelSpec =
    KernelSpec { name: "ansnr_row_groups", family: "ansnr", workgroup: [128, 1, 1], buffers: 4, scalars: 4 };

struct AnsnrGpu {
    kernel: Kernel,
    geometry: Geometry,
}

struct AnsnrSlot {
    reference: Buffer,
    distorted: Buffer,
    taps: Buffer,
    rows: Buffer,
}

impl GpuPipeline for AnsnrGpu {
    type Slot = AnsnrSlot;

    fn new_slot(&self, gpu: &dyn Gpu) -> Result<Self::Slot> {
        let h = self.geometry.plane_dims(0).1;
        let luma = planes_bytes(&self.geometry, 1);
        let slot = AnsnrSlot {
            reference: word_buffer(gpu, luma)?,
            distorted: word_buffer(gpu, luma)?,
            taps: gpu.create_buffer(34 * 4)?,
            rows: gpu.create_buffer(h * 8)?,
        };
        // The taps are computed once, here, so every dialect uses the very
        // same f32 values as the CPU reference.
        let taps: Vec<u8> = ref_filter().iter().chain(dis_filter().iter()).flat_map(|t| t.to_le_bytes()).collect();
        let mut stream = gpu.create_stream()?;
        stream.upload(&slot.taps, 0, &taps)?;
        stream.wait()?;
        Ok(slot)
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
        let (w, h) = self.geometry.plane_dims(0);
        let row_groups = *self.kernel.spec == ANSNR_ROW_GROUPS;
        let scaler = scaler(self.geometry.bit_depth);
        // ansnr_row_groups multiplies by 1 / scaler: exact for powers of two only.
        ensure!(!row_groups || scaler.to_bits() & 0x007f_ffff == 0, "ansnr_row_groups needs a power-of-two scaler");
        let args = [
            Arg::Buffer(&b.reference),
            Arg::Buffer(&b.distorted),
            Arg::Buffer(&b.taps),
            Arg::Buffer(&b.rows),
            Arg::U32(w as u32),
            Arg::U32(h as u32),
            Arg::U32(self.geometry.bytes_per_sample() as u32),
            Arg::F32(scaler),
        ];
        // ansnr_filter_rows: a work item per row; ansnr_row_groups: a group.
        let groups = if row_groups { h as u32 } else { groups_for(h, self.kernel.spec.workgroup[0]) };
        stream.dispatch(&self.kernel, [groups, 1, 1], &args)?;
        stream.download(&b.rows, 0, h * 8)
    }

    fn finish(&self, index: usize, downloads: &[Vec<u8>], out: &mut Scores) -> Result<()> {
        let (w, h) = self.geometry.plane_dims(0);
        let rows: Vec<f32> = floats(&downloads[0]).collect();
        ensure!(rows.len() == 2 * h, "expected {} row sums, got {}", 2 * h, rows.len());
        // The rows in order, in f32, as ansnr_mse_s adds them.
        let (mut sig, mut noise) = (0.0f32, 0.0f32);
        for pair in rows.chunks_exact(2) {
            sig += pair[0];
            noise += pair[1];
        }
        let (ansnr, anpsnr) = ansnr_scores(sig, noise, w * h, self.geometry.bit_depth);
        out.record("float_ansnr", index, ansnr);
        out.record("float_anpsnr", index, anpsnr);
        Ok(())
    }
}

/// ansnr_filter2d_ref_s: a 3x3 binomial kernel (exact in f32).
pub fn ref_filter() -> [f32; 9] {
    [1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0].map(|v: f64| (v / 16.0) as f32)
}

/// ansnr_filter2d_dis_s: a 5x5 kernel over 571, each tap rounded to f32.
pub fn dis_filter() -> [f32; 25] {
    [
        2.0, 7.0, 12.0, 7.0, 2.0, 7.0, 31.0, 52.0, 31.0, 7.0, 12.0, 52.0, 127.0, 52.0, 12.0, 7.0, 31.0, 52.0, 31.0,
        7.0, 2.0, 7.0, 12.0, 7.0, 2.0,
    ]
    .map(|v: f64| (v / 571.0) as f32)
}

/// ansnr_tools.c's border rule: -i above the top, 2n - i - 1 below the bottom.
pub fn mirror(i: isize, n: isize) -> usize {
    if i < 0 {
        (-i) as usize
    } else if i >= n {
        (2 * n - i - 1) as usize
    } else {
        i as usize
    }
}

/// ansnr_filter2d_s: each filter row summed in f32, then the rows in f32.
///
/// Per pixel the operations are libvmaf's, in its order: `accum = 0`; for
/// each filter row `fi`, `inner = 0; inner += f[fi][fj] * src[..]` for `fj`
/// left to right, then `accum += inner`. The interior, which needs no
/// mirror, runs [`LANES`] pixels at a time, each pixel with its own `inner`
/// and `accum` (lanes of vector registers): the same operations on each
/// pixel, so the results are bit-identical to the pixel-at-a-time loop.
pub fn filter2d(filter: &[f32], width: usize, src: &[f32], w: usize, h: usize) -> Vec<f32> {
    let mut dst = Vec::new();
    filter2d_into(filter, width, src, w, h, &mut dst);
    dst
}

/// [`filter2d`] into `dst`, which the caller keeps from frame to frame
/// (every element is written: no clearing, no allocation once it has the
/// size).
pub fn filter2d_into(filter: &[f32], width: usize, src: &[f32], w: usize, h: usize, dst: &mut Vec<f32>) {
    assert_eq!(filter.len(), width * width, "a {width}x{width} filter");
    assert_eq!(src.len(), w * h, "a {w}x{h} plane");
    dst.resize(w * h, 0.0);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { filter_plane_avx2(filter, width, src, w, h, dst) };
        return;
    }
    filter_plane(filter, width, src, w, h, dst);
}

/// [`filter_plane`] compiled for AVX2: 8 pixels per instruction instead of
/// 4, the same IEEE multiplies and adds (AVX2 brings no FMA), so the same
/// bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn filter_plane_avx2(filter: &[f32], width: usize, src: &[f32], w: usize, h: usize, dst: &mut [f32]) {
    filter_plane(filter, width, src, w, h, dst)
}

#[inline(always)]
fn filter_plane(filter: &[f32], width: usize, src: &[f32], w: usize, h: usize, dst: &mut [f32]) {
    match width {
        3 => filter_rows::<3>(filter, src, w, h, dst),
        5 => filter_rows::<5>(filter, src, w, h, dst),
        _ => {
            for (i, out) in dst.chunks_exact_mut(w).enumerate() {
                for (j, o) in out.iter_mut().enumerate() {
                    *o = filter_pixel(filter, width, |fi| source_row(src, w, h, i, fi, width), j, w);
                }
            }
        }
    }
}

/// Pixels of the interior filtered side by side (4 AVX2 registers).
const LANES: usize = 32;

/// Row `i - width / 2 + fi` of `src`, mirrored at the top and bottom.
#[inline(always)]
fn source_row(src: &[f32], w: usize, h: usize, i: usize, fi: usize, width: usize) -> &[f32] {
    let ii = mirror(i as isize - (width / 2) as isize + fi as isize, h as isize);
    &src[ii * w..(ii + 1) * w]
}

/// One output pixel, libvmaf's loop as it is (mirrored columns).
#[inline(always)]
fn filter_pixel<'a>(filter: &[f32], width: usize, rows: impl Fn(usize) -> &'a [f32], j: usize, w: usize) -> f32 {
    let half = (width / 2) as isize;
    let mut accum = 0.0f32;
    for fi in 0..width {
        let row = rows(fi);
        let mut inner = 0.0f32;
        for fj in 0..width {
            inner += filter[fi * width + fj] * row[mirror(j as isize - half + fj as isize, w as isize)];
        }
        accum += inner;
    }
    accum
}

#[inline(always)]
fn filter_rows<const W: usize>(filter: &[f32], src: &[f32], w: usize, h: usize, dst: &mut [f32]) {
    let half = W / 2;
    let filter = &filter[..W * W];
    // The interior: pixels whose window needs no mirrored column.
    let interior_end = w.saturating_sub(half).max(half);
    for (i, out) in dst.chunks_exact_mut(w).enumerate() {
        let rows: [&[f32]; W] = std::array::from_fn(|fi| source_row(src, w, h, i, fi, W));
        let mut j = 0;
        while j < w {
            if j >= half && j + LANES <= interior_end {
                let mut accum = [0.0f32; LANES];
                for (fi, row) in rows.iter().enumerate() {
                    let mut inner = [0.0f32; LANES];
                    for fj in 0..W {
                        let tap = filter[fi * W + fj];
                        let start = j - half + fj;
                        for (acc, &v) in inner.iter_mut().zip(&row[start..start + LANES]) {
                            *acc += tap * v;
                        }
                    }
                    for (a, v) in accum.iter_mut().zip(inner) {
                        *a += v;
                    }
                }
                out[j..j + LANES].copy_from_slice(&accum);
                j += LANES;
            } else {
                out[j] = filter_pixel(filter, W, |fi| rows[fi], j, w);
                j += 1;
            }
        }
    }
}

/// ansnr_mse_s: (signal, noise) energies, per-row f32 sums added in f32.
///
/// Each row's sums run in pixel order and the rows' sums are added in row
/// order, as libvmaf does; [`ROWS`] rows' chains run side by side (they
/// are independent), so the adds are not one long chain of dependent
/// operations.
pub fn signal_noise(reference: &[f32], distorted: &[f32], w: usize) -> (f32, f32) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { signal_noise_avx2(reference, distorted, w) };
    }
    signal_noise_rows(reference, distorted, w)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn signal_noise_avx2(reference: &[f32], distorted: &[f32], w: usize) -> (f32, f32) {
    signal_noise_rows(reference, distorted, w)
}

/// Rows whose energy sums run side by side.
const ROWS: usize = 8;

#[inline(always)]
fn signal_noise_rows(reference: &[f32], distorted: &[f32], w: usize) -> (f32, f32) {
    let (mut sig, mut noise) = (0.0f32, 0.0f32);
    if w == 0 {
        return (sig, noise);
    }
    for (r_block, d_block) in reference.chunks(ROWS * w).zip(distorted.chunks(ROWS * w)) {
        let (mut sig_rows, mut noise_rows) = ([0.0f32; ROWS], [0.0f32; ROWS]);
        if r_block.len() == ROWS * w && d_block.len() == ROWS * w {
            let r: [&[f32]; ROWS] = std::array::from_fn(|k| &r_block[k * w..(k + 1) * w]);
            let d: [&[f32]; ROWS] = std::array::from_fn(|k| &d_block[k * w..(k + 1) * w]);
            for j in 0..w {
                for k in 0..ROWS {
                    let (r, d) = (r[k][j], d[k][j]);
                    sig_rows[k] += r * r;
                    noise_rows[k] += (r - d) * (r - d);
                }
            }
        } else {
            for (k, (r_row, d_row)) in r_block.chunks_exact(w).zip(d_block.chunks_exact(w)).enumerate() {
                for (&r, &d) in r_row.iter().zip(d_row) {
                    sig_rows[k] += r * r;
                    noise_rows[k] += (r - d) * (r - d);
                }
            }
        }
        let rows = r_block.len() / w;
        for k in 0..rows {
            sig += sig_rows[k];
            noise += noise_rows[k];
        }
    }
    (sig, noise)
}

/// (float_ansnr, float_anpsnr) from the energies (ansnr.c `compute_ansnr`).
pub fn ansnr_scores(sig: f32, noise: f32, samples: usize, bit_depth: u8) -> (f64, f64) {
    let (peak, psnr_max) = float_peak(bit_depth);
    // `sig / noise` is a float division, widened for log10.
    let ansnr = if noise == 0.0 { psnr_max } else { 10.0 * f64::from(sig / noise).log10() };
    let anpsnr = (10.0 * (peak * peak * samples as f64 / f64::from(noise).max(1e-10)).log10()).min(psnr_max);
    (ansnr, anpsnr)
}

struct AnsnrCpu {
    bit_depth: u8,
    /// Float reference, float distorted, and their filtered planes, kept
    /// from frame to frame.
    planes: [Vec<f32>; 4],
}

impl Extractor for AnsnrCpu {
    fn extract(&mut self, index: usize, reference: &Frame, distorted: &Frame, out: &mut Scores) -> Result<()> {
        let (w, h) = reference.geometry.plane_dims(0);
        let [src_r, src_d, r, d] = &mut self.planes;
        float_plane_into(reference, 0, -128, src_r);
        float_plane_into(distorted, 0, -128, src_d);
        filter2d_into(&ref_filter(), 3, src_r, w, h, r);
        filter2d_into(&dis_filter(), 5, src_d, w, h, d);
        let (sig, noise) = signal_noise(r, d, w);
        let (ansnr, anpsnr) = ansnr_scores(sig, noise, w * h, self.bit_depth);
        out.record("float_ansnr", index, ansnr);
        out.record("float_anpsnr", index, anpsnr);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Below 3x3 the 5x5 mirror reads outside the picture: refused, by the
    /// CPU reference too (it used to panic on a 216x2 frame).
    #[test]
    fn frames_below_3x3_are_refused() {
        use crate::fixture::Chroma;
        let none = Options::new();
        let g = |width, height| Geometry { width, height, bit_depth: 8, chroma: Chroma::Yuv420 };
        for (w, h) in [(216, 2), (2, 64), (2, 2), (1, 9)] {
            let why = (FLOAT_ANSNR.refuses)(&g(w, h), &none).unwrap();
            assert!(why.contains("below 3x3"), "{why}");
            let err = FLOAT_ANSNR.cpu_extractor(&g(w, h), &none).err().unwrap();
            assert_eq!(err.to_string(), FLOAT_ANSNR.refusal(&g(w, h), &none).unwrap());
            assert!(err.to_string().starts_with(&format!("float_ansnr does not take {w}x{h} 8-bit")), "{err}");
        }
        for (w, h) in [(3, 3), (3, 64), (216, 3)] {
            assert!((FLOAT_ANSNR.refuses)(&g(w, h), &none).is_none(), "{w}x{h}");
            let (r, d) = (super::super::sums::random_frame(g(w, h), 1), super::super::sums::random_frame(g(w, h), 2));
            let mut scores = Scores::default();
            let mut ext = FLOAT_ANSNR.cpu_extractor(&g(w, h), &none).unwrap();
            ext.extract(0, &r, &d, &mut scores).unwrap();
        }
    }

    #[test]
    fn mirror_follows_libvmaf_asymmetry() {
        // -1 reflects to 1 (no edge repeat), n reflects to n-1 (edge repeat).
        assert_eq!([mirror(-2, 5), mirror(-1, 5), mirror(5, 5), mirror(6, 5)], [2, 1, 4, 3]);
    }

    /// libvmaf's loop, pixel at a time: the oracle for [`filter2d`].
    fn filter2d_pixelwise(filter: &[f32], width: usize, src: &[f32], w: usize, h: usize) -> Vec<f32> {
        let mut dst = vec![0.0f32; w * h];
        let half = (width / 2) as isize;
        for i in 0..h {
            for j in 0..w {
                let mut accum = 0.0f32;
                for fi in 0..width {
                    let mut inner = 0.0f32;
                    let ii = mirror(i as isize - half + fi as isize, h as isize);
                    for fj in 0..width {
                        let jj = mirror(j as isize - half + fj as isize, w as isize);
                        inner += filter[fi * width + fj] * src[ii * w + jj];
                    }
                    accum += inner;
                }
                dst[i * w + j] = accum;
            }
        }
        dst
    }

    #[test]
    fn row_at_a_time_filtering_is_bit_identical() {
        for (w, h) in [(37, 23), (5, 4), (4, 3), (3, 3), (2, 5), (101, 9), (68, 17), (36, 2)] {
            let src: Vec<f32> = (0..w * h).map(|k| ((k * 7919 % 1021) as f32) / 4.0 - 128.0).collect();
            for (taps, width) in [(&ref_filter()[..], 3), (&dis_filter()[..], 5)] {
                if w < width / 2 + 1 || h < width / 2 + 1 {
                    continue;
                }
                let slow = filter2d_pixelwise(taps, width, &src, w, h);
                // What this CPU runs (AVX2 where it has it), and the portable code.
                let fast = filter2d(taps, width, &src, w, h);
                let mut portable = vec![0.0; w * h];
                filter_plane(taps, width, &src, w, h, &mut portable);
                for out in [&fast, &portable] {
                    assert!(out.iter().zip(&slow).all(|(a, b)| a.to_bits() == b.to_bits()), "{w}x{h}, {width}x{width}");
                }
            }
        }
    }

    #[test]
    fn a_kept_buffer_is_overwritten_whole() {
        let (w, h) = (70, 9);
        let src: Vec<f32> = (0..w * h).map(|k| ((k * 31 % 509) as f32) - 200.0).collect();
        let mut dst = vec![f32::NAN; w * h];
        filter2d_into(&dis_filter(), 5, &src, w, h, &mut dst);
        let fresh = filter2d(&dis_filter(), 5, &src, w, h);
        assert!(dst.iter().zip(&fresh).all(|(a, b)| a.to_bits() == b.to_bits()));
    }

    #[test]
    fn energies_add_in_libvmafs_order() {
        // ansnr_mse_s as it is: per row in pixel order, then the rows.
        fn sequential(r: &[f32], d: &[f32], w: usize) -> (f32, f32) {
            let (mut sig, mut noise) = (0.0f32, 0.0f32);
            for (r_row, d_row) in r.chunks_exact(w).zip(d.chunks_exact(w)) {
                let (mut s, mut n) = (0.0f32, 0.0f32);
                for (&a, &b) in r_row.iter().zip(d_row) {
                    s += a * a;
                    n += (a - b) * (a - b);
                }
                sig += s;
                noise += n;
            }
            (sig, noise)
        }
        for (w, h) in [(37, 23), (1, 1), (5, 8), (64, 17), (3, 7)] {
            let r: Vec<f32> = (0..w * h).map(|k| ((k * 7919 % 1021) as f32) / 7.0 - 70.0).collect();
            let d: Vec<f32> = (0..w * h).map(|k| ((k * 104_729 % 977) as f32) / 3.0 - 150.0).collect();
            let want = sequential(&r, &d, w);
            for got in [signal_noise(&r, &d, w), signal_noise_rows(&r, &d, w)] {
                assert_eq!((got.0.to_bits(), got.1.to_bits()), (want.0.to_bits(), want.1.to_bits()), "{w}x{h}");
            }
        }
    }

    #[test]
    fn cpu_drivers_run_the_row_walker_and_gpus_the_row_groups() {
        let device = crate::features::gpu::device_of_type;
        let (cpu, gpu, unknown) = (device(Some("cpu")), device(Some("discrete-gpu")), device(None));
        let pick = |d: &DeviceInfo, v: Option<&str>| kernel_for(d, v.map(OsStr::new)).map(|s| s.name);
        assert_eq!(pick(&cpu, None).unwrap(), "ansnr_filter_rows");
        assert_eq!(pick(&cpu, Some("")).unwrap(), "ansnr_filter_rows");
        assert_eq!(pick(&gpu, None).unwrap(), "ansnr_row_groups");
        assert_eq!(pick(&unknown, None).unwrap(), "ansnr_row_groups");
        // The variable overrides the device type, both ways.
        assert_eq!(pick(&cpu, Some("groups")).unwrap(), "ansnr_row_groups");
        assert_eq!(pick(&gpu, Some("rows")).unwrap(), "ansnr_filter_rows");
        for bad in ["Groups", "row", " rows", "ansnr_row_groups"] {
            let err = pick(&gpu, Some(bad)).unwrap_err().to_string();
            assert!(err.contains(KERNEL_VAR) && err.contains("`rows`") && err.contains("`groups`"), "{err}");
            assert!(err.contains(&format!("{bad:?}")), "{err}");
        }
    }

    #[test]
    fn every_scaler_is_a_power_of_two() {
        // ansnr_row_groups multiplies by 1 / scaler, the same bits only then.
        for bit_depth in 8..=16 {
            let s = scaler(bit_depth);
            assert!(s >= 1.0 && s.to_bits() & 0x007f_ffff == 0, "{bit_depth}: {s}");
            assert!((0..=u16::MAX).all(|v| f32::from(v) / s == f32::from(v) * (1.0 / s)));
        }
    }

    #[test]
    fn filters_sum_to_about_one() {
        let s: f32 = dis_filter().iter().sum();
        assert!((s - 1.0).abs() < 1e-6);
        assert_eq!(ref_filter().iter().sum::<f32>(), 1.0);
    }
}
