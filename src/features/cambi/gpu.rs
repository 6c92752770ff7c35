//! cambi's pipeline on every GPU backend (kernels/cambi.cl, shaders/
//! cambi_*.comp), written once against [`Gpu`]. Per image (the distorted
//! picture at the encoding size, with `full_ref` the reference at the
//! source size):
//!
//! 1. `cambi_preprocess`: luma to 10 bits at the scored size, anti-dithered
//!    below 10-bit encodes, samples checked against the bit depth;
//! 2. `cambi_mask`: the spatial mask of the full-size picture;
//! 3. `cambi_mode` per scale: decimation and the mode filter, each pixel's
//!    level and whether it is counted (in the mask and the band);
//!
//! then for every scale of every image at once:
//!
//! 4. `cambi_cvalues`: the c-values, from per-thread sliding histograms;
//! 5. `cambi_topk_hist` / `cambi_topk_scan` three times: a radix select of
//!    the k-th largest c-value on its float bits (11, 11, 10 bits);
//! 6. `cambi_topk_sum`: the exact fixed-point sum of the larger ones.
//!
//! The host adds the partial sums (integers) and the copies of the k-th
//! value, and finishes each score as the CPU reference does.

use super::params::{ImagePlan, Plan};
use super::pooling::{FIXED_ONE, fixed};
use super::tables::{NUM_SCALES, reciprocal_lut};
use super::{Names, cpu::weight_scales, final_scores};
use crate::backend::gpu::{Arg, Buffer, Gpu, Kernel, KernelSpec, Stream, groups_for};
use crate::features::gpu::{GpuPipeline, planes_bytes, word_buffer, words};
use crate::fixture::Geometry;
use crate::scores::Scores;
use anyhow::{Result, bail, ensure};

/// `cambi_preprocess` (kernels/cambi.cl, shaders/cambi_preprocess.wgsl):
/// cambi.c `cambi_preprocessing`. Work item (x, y) writes pixel (x, y) of
/// the `out_w` x `out_h` 10-bit picture at `img[img_off..]`: the input
/// sample at (`tables[y_off + y]`, `tables[x_off + x]`) brought to 10 bits,
/// and with `dither` the anti-dithering mean over its 2x2 block (computed
/// from the converted neighbours, as libvmaf's in-place loop sees them).
/// With `validate`, each work item inside the input also checks its sample
/// against `max_value` and sets bit 0 of `state[0]` if it is larger.
/// Buffers: input luma, tables, img, state. Scalars: in_w, in_h, out_w,
/// out_h, bytes_per_sample, bit_depth, dither, x_off, y_off, img_off,
/// max_value, validate.
pub static CAMBI_PREPROCESS: KernelSpec =
    KernelSpec { name: "cambi_preprocess", family: "cambi", workgroup: [16, 16, 1], buffers: 4, scalars: 12 };

/// `cambi_mask_columns`: cambi.c `get_spatial_mask`, pass 1 of 2. Work
/// item (x, y) writes to `sums[y * w + x]` how many pixels of column x, rows
/// y - 3 ..= y + 3 (clipped), of the picture at `img[off..]` have a zero
/// derivative (equal their right and lower neighbours; the last column and
/// row count as equal). Buffers: img, sums (the c-value buffer, free until
/// the c-values). Scalars: w, h, off.
pub static CAMBI_MASK_COLUMNS: KernelSpec =
    KernelSpec { name: "cambi_mask_columns", family: "cambi", workgroup: [16, 16, 1], buffers: 2, scalars: 3 };

/// `cambi_mask`: pass 2 of 2. Work item (x, y) adds the column sums of
/// columns x - 3 ..= x + 3 (clipped) and writes `count > mask_index` to
/// `mask[off + y * w + x]`. Buffers: sums, mask. Scalars: w, h, off,
/// mask_index.
pub static CAMBI_MASK: KernelSpec =
    KernelSpec { name: "cambi_mask", family: "cambi", workgroup: [16, 16, 1], buffers: 2, scalars: 4 };

/// `cambi_mode`: cambi.c `decimate` + `filter_mode` for one scale. Work
/// item (x, y) reads the previous picture (`src[src_off..]`, `src_w` wide,
/// low 16 bits of each word) at every `step`-th sample (1 or 2), takes the
/// mode filter there, and writes `v | 0x10000` to `cells[out_off + y * w +
/// x]`, or `v` alone when the pixel counts: the full-size mask at
/// (`y << mask_shift`, `x << mask_shift`) is set and `(v - band_base) mod
/// 2^16 < band_size`. Buffers: src, mask, tables, cells. Scalars: src_w,
/// src_off, step, mask_w, mask_off, mask_shift, w, h, out_off.
pub static CAMBI_MODE: KernelSpec =
    KernelSpec { name: "cambi_mode", family: "cambi", workgroup: [16, 16, 1], buffers: 4, scalars: 9 };

/// `cambi_cvalues`: cambi.c `calculate_c_values` for every set (scale of an
/// image) at once. Work group g (counted over `GROUP_ID(0) + GROUP_ID(1) *
/// NUM_GROUPS(0)`) belongs to the set whose `cv_first` is the largest not
/// above g and covers 64 columns and 16 rows of it; each work item walks
/// one column down those rows with its own 128-level histogram of the
/// window in local memory. Buffers: cells, tables, lut (floats), cvals.
/// Scalars: n_sets, groups.
pub static CAMBI_CVALUES: KernelSpec =
    KernelSpec { name: "cambi_cvalues", family: "cambi", workgroup: [64, 1, 1], buffers: 4, scalars: 2 };

/// `cambi_topk_hist`: one level of the radix select. Work group g covers
/// elements [4096 (g - el_first), +4096) of its set; it counts the non-zero
/// c-values whose key (float bits) matches the set's prefix so far into a
/// local histogram of 2048 bins (key bits 31..21, 20..10 or 9..0) and adds
/// it to `hist[(level * n_sets + set) * 2048..]`. Buffers: cvals, tables,
/// state, hist. Scalars: level, n_sets, groups.
pub static CAMBI_TOPK_HIST: KernelSpec =
    KernelSpec { name: "cambi_topk_hist", family: "cambi", workgroup: [256, 1, 1], buffers: 4, scalars: 3 };

/// `cambi_topk_scan`: work group s finds, from the top of set s's histogram
/// at `level`, the bin holding the set's k-th largest non-zero c-value and
/// appends it to the prefix in `state[4 + 4s..]` (prefix, rank left, mode);
/// at level 0, a set with k above its non-zero count takes mode 1 (the k
/// largest are every non-zero value and zeros). Buffers: tables, state,
/// hist. Scalars: level, n_sets.
pub static CAMBI_TOPK_SCAN: KernelSpec =
    KernelSpec { name: "cambi_topk_scan", family: "cambi", workgroup: [256, 1, 1], buffers: 3, scalars: 2 };

/// `cambi_topk_sum`: work group g sums, over the same elements as
/// `cambi_topk_hist`, the c-values above the set's k-th largest (mode 0)
/// or above 0 (mode 1), each split exactly into integer part, high and low
/// 12 bits of its fraction in units of 2^-24; it writes (integer sum, high
/// sum, low sum, flags) to `partials[4 g..]` (flag 1: a value outside
/// [0.5, 16384), which has no exact split). Buffers: cvals, tables, state,
/// partials. Scalars: n_sets, groups.
pub static CAMBI_TOPK_SUM: KernelSpec =
    KernelSpec { name: "cambi_topk_sum", family: "cambi", workgroup: [256, 1, 1], buffers: 4, scalars: 2 };

pub static KERNELS: [&KernelSpec; 8] = [
    &CAMBI_PREPROCESS,
    &CAMBI_MASK_COLUMNS,
    &CAMBI_MASK,
    &CAMBI_MODE,
    &CAMBI_CVALUES,
    &CAMBI_TOPK_HIST,
    &CAMBI_TOPK_SCAN,
    &CAMBI_TOPK_SUM,
];

/// The `tables` buffer (u32 words): header, per-set records, index tables.
pub mod table {
    pub const NUM_DIFFS: usize = 0;
    pub const VLT_LUMA: usize = 1;
    pub const BAND_BASE: usize = 2;
    pub const BAND_SIZE: usize = 3;
    pub const TVI: usize = 8;
    pub const WEIGHTS: usize = 40;
    pub const SETS: usize = 96;
    pub const SET_WORDS: usize = 16;
    pub const MAX_SETS: usize = 10;
    /// The resampling index tables follow the sets.
    pub const INDICES: usize = SETS + SET_WORDS * MAX_SETS;
    // Fields of a set record.
    pub const W: usize = 0;
    pub const H: usize = 1;
    pub const OFF: usize = 2;
    pub const PAD: usize = 3;
    pub const CV_GROUPS_X: usize = 4;
    pub const CV_FIRST: usize = 5;
    pub const N: usize = 7;
    pub const K: usize = 8;
    pub const EL_FIRST: usize = 9;
}

/// Columns and rows of one `cambi_cvalues` work group.
pub const CV_COLUMNS: usize = 64;
pub const CV_ROWS: usize = 16;
/// Elements of one `cambi_topk_hist` / `cambi_topk_sum` work group.
pub const POOL_ELEMENTS: usize = 4096;
pub const HIST_BINS: usize = 2048;
/// A pixel that does not count (`cambi_mode`'s flag).
pub const NOT_COUNTED: u32 = 0x10000;
/// The largest group count a dispatch puts in one grid dimension (Vulkan
/// guarantees 65535).
const GRID_X: usize = 32768;

/// One scale of one image: what its kernels read and write.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Set {
    pub width: usize,
    pub height: usize,
    /// Offset of its cells and c-values.
    pub offset: usize,
    pub pad: usize,
    pub cv_groups_x: usize,
    pub cv_first: usize,
    pub k: usize,
    pub el_first: usize,
    pub el_groups: usize,
}

/// Where everything lives, from the plan alone.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The images scored: the distorted one, then with full_ref the reference.
    pub images: Vec<ImagePlan>,
    /// Offset of each image's full-size picture and mask.
    pub img_offsets: Vec<usize>,
    pub img_words: usize,
    pub sets: Vec<Set>,
    pub cells_words: usize,
    pub cv_groups: usize,
    pub el_groups: usize,
    pub tables: Vec<u32>,
    /// (x, y) index-table offsets per image.
    pub index_offsets: Vec<(usize, usize)>,
}

impl Layout {
    pub fn new(plan: &Plan) -> Result<Self> {
        let mut images = vec![plan.enc.clone()];
        if plan.settings.full_ref {
            images.push(plan.src.clone());
        }
        let c = &plan.contrast;
        let mut tables = vec![0u32; table::INDICES];
        tables[table::NUM_DIFFS] = u32::from(c.num_diffs);
        tables[table::VLT_LUMA] = u32::from(c.vlt_luma);
        tables[table::BAND_BASE] = u32::from(c.band_base);
        tables[table::BAND_SIZE] = u32::from(c.band_size);
        for (d, (&t, &w)) in c.tvi.iter().zip(&c.weights).enumerate() {
            tables[table::TVI + d] = u32::from(t);
            tables[table::WEIGHTS + d] = w as u32;
        }
        let (mut img_offsets, mut index_offsets, mut sets) = (Vec::new(), Vec::new(), Vec::new());
        let (mut img_words, mut cells_words, mut cv_groups, mut el_groups) = (0, 0, 0, 0);
        for image in &images {
            img_offsets.push(img_words);
            img_words += image.width * image.height;
            let identity = |n: usize| (0..n as u32).collect::<Vec<u32>>();
            let xs = if image.x_src.is_empty() { identity(image.width) } else { image.x_src.clone() };
            let ys = if image.y_src.is_empty() { identity(image.height) } else { image.y_src.clone() };
            index_offsets.push((tables.len(), tables.len() + xs.len()));
            tables.extend(xs);
            tables.extend(ys);
            for scale in 0..NUM_SCALES {
                let (w, h) = image.scales[scale];
                let cv_groups_x = w.div_ceil(CV_COLUMNS);
                let set = Set {
                    width: w,
                    height: h,
                    offset: cells_words,
                    pad: image.pad(),
                    cv_groups_x,
                    cv_first: cv_groups,
                    k: image.topk_counts[scale],
                    el_first: el_groups,
                    el_groups: (w * h).div_ceil(POOL_ELEMENTS),
                };
                cells_words += w * h;
                cv_groups += cv_groups_x * h.div_ceil(CV_ROWS);
                el_groups += set.el_groups;
                sets.push(set);
            }
        }
        ensure!(sets.len() <= table::MAX_SETS, "cambi: {} sets, the tables hold {}", sets.len(), table::MAX_SETS);
        ensure!(cells_words < (1 << 31), "cambi: {cells_words} pixels over all scales do not fit 31-bit offsets");
        for (s, set) in sets.iter().enumerate() {
            let r = &mut tables[table::SETS + s * table::SET_WORDS..][..table::SET_WORDS];
            r[table::W] = set.width as u32;
            r[table::H] = set.height as u32;
            r[table::OFF] = set.offset as u32;
            r[table::PAD] = set.pad as u32;
            r[table::CV_GROUPS_X] = set.cv_groups_x as u32;
            r[table::CV_FIRST] = set.cv_first as u32;
            r[table::N] = (set.width * set.height) as u32;
            r[table::K] = set.k as u32;
            r[table::EL_FIRST] = set.el_first as u32;
        }
        Ok(Layout { images, img_offsets, img_words, sets, cells_words, cv_groups, el_groups, tables, index_offsets })
    }

    /// Pixels of the largest full-size picture.
    pub fn largest_image(&self) -> usize {
        self.images.iter().map(|i| i.width * i.height).max().unwrap_or(0)
    }

    /// Words of the state buffer: the status word, padding, 4 per set.
    pub fn state_words(&self) -> usize {
        4 + 4 * self.sets.len()
    }
}

/// A 1-D count of work groups as a grid no wider than [`GRID_X`]; kernels
/// number their groups `GROUP_ID(0) + GROUP_ID(1) * NUM_GROUPS(0)`.
fn grid(groups: usize) -> [u32; 3] {
    [groups.min(GRID_X) as u32, groups.div_ceil(GRID_X) as u32, 1]
}

pub struct CambiGpu {
    plan: Plan,
    names: Names,
    geometry: Geometry,
    layout: Layout,
    kernels: Vec<Kernel>,
}

impl CambiGpu {
    pub fn new(gpu: &dyn Gpu, plan: Plan, names: Names, geometry: Geometry) -> Result<Self> {
        let layout = Layout::new(&plan)?;
        let kernels = KERNELS.iter().map(|&spec| gpu.load_kernel(spec)).collect::<Result<Vec<_>>>()?;
        Ok(CambiGpu { plan, names, geometry, layout, kernels })
    }
}

pub struct CambiSlot {
    reference: Buffer,
    distorted: Buffer,
    tables: Buffer,
    lut: Buffer,
    img: Buffer,
    mask: Buffer,
    cells: Buffer,
    cvals: Buffer,
    hist: Buffer,
    state: Buffer,
    partials: Buffer,
}

impl GpuPipeline for CambiGpu {
    type Slot = CambiSlot;

    fn new_slot(&self, gpu: &dyn Gpu) -> Result<Self::Slot> {
        let l = &self.layout;
        let luma = planes_bytes(&self.geometry, 1);
        let slot = CambiSlot {
            reference: word_buffer(gpu, luma)?,
            distorted: word_buffer(gpu, luma)?,
            tables: gpu.create_buffer(4 * l.tables.len())?,
            lut: gpu.create_buffer(4 * super::tables::RECIPROCAL_LUT_SIZE)?,
            img: gpu.create_buffer(4 * l.img_words)?,
            mask: gpu.create_buffer(4 * l.img_words)?,
            cells: gpu.create_buffer(4 * l.cells_words)?,
            // Also the mask's column sums of the largest full-size picture,
            // larger than every scale together with the high-res speed-up.
            cvals: gpu.create_buffer(4 * l.cells_words.max(l.largest_image()))?,
            hist: gpu.create_buffer(4 * 3 * l.sets.len() * HIST_BINS)?,
            state: gpu.create_buffer(4 * l.state_words())?,
            partials: gpu.create_buffer(4 * 4 * l.el_groups)?,
        };
        // The constant tables go up once: the very LUT and thresholds the
        // CPU reference uses.
        let tables: Vec<u8> = l.tables.iter().flat_map(|w| w.to_le_bytes()).collect();
        let lut: Vec<u8> = reciprocal_lut().iter().flat_map(|f| f.to_le_bytes()).collect();
        let mut stream = gpu.create_stream()?;
        stream.upload(&slot.tables, 0, &tables)?;
        stream.upload(&slot.lut, 0, &lut)?;
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

    /// The reference only with `full_ref` (cambi scores the distorted picture).
    fn uploads(&self) -> [bool; 2] {
        [self.plan.settings.full_ref, true]
    }

    fn compute(&self, b: &Self::Slot, stream: &mut dyn Stream) -> Result<()> {
        let l = &self.layout;
        let [preprocess, mask_columns, mask, mode, cvalues, hist, scan, sum] = &self.kernels[..] else {
            bail!("cambi: {} kernels loaded, expected {}", self.kernels.len(), KERNELS.len());
        };
        let g = &self.geometry;
        let (in_w, in_h) = (g.width as usize, g.height as usize);
        let validate = (9..16).contains(&g.bit_depth);
        stream.zero(&b.state)?;
        stream.zero(&b.hist)?;
        for (image_index, image) in l.images.iter().enumerate() {
            let input = if image_index == 0 { &b.distorted } else { &b.reference };
            let img_off = l.img_offsets[image_index];
            let (x_off, y_off) = l.index_offsets[image_index];
            let (w, h) = (image.width, image.height);
            let span = [in_w.max(w), in_h.max(h)];
            let u = |v: usize| Arg::U32(v as u32);
            stream.dispatch(
                preprocess,
                [groups_for(span[0], 16), groups_for(span[1], 16), 1],
                &[
                    Arg::Buffer(input),
                    Arg::Buffer(&b.tables),
                    Arg::Buffer(&b.img),
                    Arg::Buffer(&b.state),
                    u(in_w),
                    u(in_h),
                    u(w),
                    u(h),
                    u(g.bytes_per_sample()),
                    u(usize::from(g.bit_depth)),
                    u(usize::from(self.plan.enc_bitdepth < 10)),
                    u(x_off),
                    u(y_off),
                    u(img_off),
                    Arg::U32(g.max_value()),
                    u(usize::from(validate)),
                ],
            )?;
            let tiles = [groups_for(w, 16), groups_for(h, 16), 1];
            // The c-value buffer holds the column sums until the c-values.
            stream.dispatch(
                mask_columns,
                tiles,
                &[Arg::Buffer(&b.img), Arg::Buffer(&b.cvals), u(w), u(h), u(img_off)],
            )?;
            stream.dispatch(
                mask,
                tiles,
                &[
                    Arg::Buffer(&b.cvals),
                    Arg::Buffer(&b.mask),
                    u(w),
                    u(h),
                    u(img_off),
                    u(usize::from(image.mask_index)),
                ],
            )?;
            let (mut src, mut src_w, mut src_off) = (&b.img, w, img_off);
            for scale in 0..NUM_SCALES {
                let set = &l.sets[image_index * NUM_SCALES + scale];
                let step = if scale > 0 || image.high_res_speedup { 2 } else { 1 };
                stream.dispatch(
                    mode,
                    [groups_for(set.width, 16), groups_for(set.height, 16), 1],
                    &[
                        Arg::Buffer(src),
                        Arg::Buffer(&b.mask),
                        Arg::Buffer(&b.tables),
                        Arg::Buffer(&b.cells),
                        u(src_w),
                        u(src_off),
                        u(step),
                        u(w),
                        u(img_off),
                        u(image.decimations(scale)),
                        u(set.width),
                        u(set.height),
                        u(set.offset),
                    ],
                )?;
                (src, src_w, src_off) = (&b.cells, set.width, set.offset);
            }
        }
        let n_sets = Arg::U32(l.sets.len() as u32);
        stream.dispatch(
            cvalues,
            grid(l.cv_groups),
            &[
                Arg::Buffer(&b.cells),
                Arg::Buffer(&b.tables),
                Arg::Buffer(&b.lut),
                Arg::Buffer(&b.cvals),
                n_sets,
                Arg::U32(l.cv_groups as u32),
            ],
        )?;
        for level in 0..3u32 {
            stream.dispatch(
                hist,
                grid(l.el_groups),
                &[
                    Arg::Buffer(&b.cvals),
                    Arg::Buffer(&b.tables),
                    Arg::Buffer(&b.state),
                    Arg::Buffer(&b.hist),
                    Arg::U32(level),
                    n_sets,
                    Arg::U32(l.el_groups as u32),
                ],
            )?;
            stream.dispatch(
                scan,
                [l.sets.len() as u32, 1, 1],
                &[Arg::Buffer(&b.tables), Arg::Buffer(&b.state), Arg::Buffer(&b.hist), Arg::U32(level), n_sets],
            )?;
        }
        stream.dispatch(
            sum,
            grid(l.el_groups),
            &[
                Arg::Buffer(&b.cvals),
                Arg::Buffer(&b.tables),
                Arg::Buffer(&b.state),
                Arg::Buffer(&b.partials),
                n_sets,
                Arg::U32(l.el_groups as u32),
            ],
        )?;
        stream.download(&b.state, 0, 4 * l.state_words())?;
        stream.download(&b.partials, 0, 16 * l.el_groups)
    }

    fn finish(&self, index: usize, downloads: &[Vec<u8>], out: &mut Scores) -> Result<()> {
        let l = &self.layout;
        let state: Vec<u32> = words(&downloads[0]).collect();
        let partials: Vec<u32> = words(&downloads[1]).collect();
        ensure!(state.len() == l.state_words(), "cambi: {} state words, expected {}", state.len(), l.state_words());
        ensure!(
            partials.len() == 4 * l.el_groups,
            "cambi: {} partial words, expected {}",
            partials.len(),
            4 * l.el_groups
        );
        if state[0] & 1 != 0 {
            let bit_depth = self.geometry.bit_depth;
            bail!(
                "Invalid input. The input contains values greater than {}, which exceeds the maximum value for a \
                 {bit_depth}-bit depth format (libvmaf's cambi refuses the frame)",
                self.geometry.max_value()
            );
        }
        let pooled = l
            .sets
            .iter()
            .enumerate()
            .map(|(s, set)| {
                pooled_set(set, &state[4 + 4 * s..8 + 4 * s], &partials[4 * set.el_first..][..4 * set.el_groups])
            })
            .collect::<Result<Vec<f64>>>()?;
        let score = |image: usize| {
            let mut per_scale = [0.0; NUM_SCALES];
            per_scale.copy_from_slice(&pooled[image * NUM_SCALES..(image + 1) * NUM_SCALES]);
            weight_scales(&per_scale, l.images[image].pixels_in_window())
        };
        let dist = score(0);
        let src = self.plan.settings.full_ref.then(|| score(1));
        final_scores(&self.names, self.plan.settings.max_val, dist, src, index, out);
        Ok(())
    }
}

/// One set's pooled c-value from the select state (prefix, rank left, mode)
/// and its sum groups' partials: the exact sum of its k largest c-values,
/// over k, as [`super::pooling::spatial_pooling`] computes it.
///
/// Equal to the CPU's while that sum stays below 2^29 (every recorded and
/// tested input). Above it libvmaf's double sum rounds in quick_select's
/// order, which the CPU replays and this exact sum does not. A c-value is
/// at most 9 W / 4 for a window of W pixels (see [`fixed`]), so each of the
/// k - 1 additions rounds by at most 2^-53 of a sum below 9 W k / 4 and a
/// scale's mean moves by at most 2.25 W k 2^-53; the score (the scales
/// weighted 16, 8, 4, 2, 1, over W) by at most 2.25 2^-53 (16 k0 + 8 k1 +
/// ...) < 4.6e-15 k0: 1e-8 at 1080p (k0 <= 2^21), 4e-8 at 2160p, far
/// inside 1e-6 and cambi's registry tolerance (5e-3). Reaching it takes a
/// mean above 2^29 / k over the k largest c-values (256 for k = 2^21).
pub fn pooled_set(set: &Set, state: &[u32], partials: &[u32]) -> Result<f64> {
    let mut total = 0u64;
    for p in partials.chunks_exact(4) {
        ensure!(p[3] == 0, "cambi: a c-value outside [0.5, 16384) has no exact fixed-point form");
        total += (u64::from(p[0]) << 24) + (u64::from(p[1]) << 12) + u64::from(p[2]);
    }
    let (prefix, rank, mode) = (state[0], state[1], state[2]);
    if mode == 0 {
        // The k-th largest value itself, `rank` times.
        let kth = fixed(f32::from_bits(prefix)).ok_or_else(|| anyhow::anyhow!("cambi: k-th value {prefix:#x}"))?;
        total += u64::from(rank) * kth;
    }
    Ok(total as f64 / FIXED_ONE / set.k as f64)
}
