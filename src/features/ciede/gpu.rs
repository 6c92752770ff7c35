//! ciede on a GPU: every pixel's ΔE00 in parallel, bit for bit as the CPU
//! reference computes it (the same math functions, [`super::math`]);
//! [`crate::features::seqsum`] then adds them as ciede.c does, into one
//! double in raster order, exactly. The scores are bit-identical to the
//! CPU reference's.
//!
//! Two shapes ([`Shape`]) compute the same terms. GPUs score every pixel
//! ([`CIEDE_TERMS`]). CPU drivers score each distinct colour pair of a
//! frame once, as the CPU reference's caches do ([`CIEDE_CLAIM`],
//! [`CIEDE_PAIR_TERMS`], [`CIEDE_SCATTER`]): a CPU driver runs a kernel's
//! every statement for all the lanes of a SIMD vector whatever each lane
//! decides, so the pixels kernel costs as much on a frame of equal colours
//! as on any other, where a frame of video repeats most of its pairs.

use super::ChromaMap;
use super::cpu::{rgb_maps_8bit, score};
use super::math::{ESTIMATE_MARGIN, Own};
use super::tables::{TABLE_LEN, table_words};
use crate::backend::gpu::{Arg, Buffer, Gpu, Kernel, KernelSpec, Stream, groups_for};
use crate::features::Extractor;
use crate::features::gpu::{GpuExtractor, GpuPipeline, planes_bytes, word_buffer};
use crate::features::seqsum::{Accumulator, SeqSum, SeqSumBuffers};
use crate::fixture::{Chroma, Geometry};
use crate::scores::Scores;
use anyhow::{Result, bail};
use std::sync::{Arc, OnceLock};

/// Pixels per work group of [`CIEDE_TERMS`] (along a row).
pub const TERMS_WG: u32 = 64;

/// `ciede_terms` (kernels/ciede.cl, shaders/ciede_terms.wgsl): work item
/// `x` of group `(gx, i)` scores pixel `(i, 64 gx + x)` if inside the
/// frame, writing its ΔE00 to `terms[i * width + j]`: ciede.c's
/// `get_lab_color` of both pixels (chroma by [`ChromaMap`]'s rule) and
/// `ciede2000`, statement for statement as [`super::cpu`] computes them,
/// with [`super::math`]'s functions and constants (a generated block in
/// each dialect) and tables. Buffers: reference and distorted frames (every
/// plane), table ([`table_words`], f64), terms (out, f32). Scalars: width,
/// height, chroma width, chroma height, chroma stride (4:2:2's walk),
/// chroma (0: 4:4:4, 1: 4:2:0, 2: 4:2:2), bytes per sample, bit depth - 8,
/// and the estimates' margin (i32: `math::ESTIMATE_MARGIN`, or
/// [`ESTIMATES_VAR`]'s off).
pub static CIEDE_TERMS: KernelSpec =
    KernelSpec { name: "ciede_terms", family: "ciede", workgroup: [TERMS_WG, 1, 1], buffers: 4, scalars: 9 };

/// [`CIEDE_TERMS`] with the table in a storage buffer instead of a uniform
/// block (shaders/ciede_terms_storage.wgsl; in the C dialect the table is
/// global memory in both): the table's lookups take per-invocation
/// indices, which a uniform block serves one address at a time on NVIDIA,
/// while a CPU driver such as lavapipe turns a storage load into a gather.
/// For 8-bit frames the table goes on with [`rgb_maps`], which the kernel
/// looks up instead of computing two of a pixel's six `rgb_to_xyz_map`
/// pows. Same arguments, same bits.
pub static CIEDE_TERMS_STORAGE: KernelSpec =
    KernelSpec { name: "ciede_terms_storage", family: "ciede", workgroup: [TERMS_WG, 1, 1], buffers: 4, scalars: 9 };

/// The pairs shape's first pass (shaders/ciede_claim.wgsl, kernels/ciede.cl):
/// work item `x` of group `(gx, i)` takes pixel `p = i * width + 64 gx + x`
/// if inside the frame. Equal colours within the bit depth score +0.0 in
/// `terms[p]` (as in [`CIEDE_TERMS`]) and link to `p`. Any other pixel
/// claims its pair of colours (the six samples) in a hash table of linear
/// probes: the first to claim an empty slot owns the pair, appends `p` to
/// `owners` and links to itself; one that meets its pair in a slot links
/// to that slot's owner. Buffers: reference and distorted frames, claims
/// (u32: word 0 the owners listed, then [`slots`] slots of 1 + an owner's
/// pixel or 0, zeroed before the pass), owners (u32, out), links (u32 a
/// pixel, out), terms (f32, out). Scalars: width, height, chroma width,
/// chroma height, chroma stride, chroma, bytes per sample, bit depth - 8
/// (as [`CIEDE_TERMS`]), and the slots - 1.
pub static CIEDE_CLAIM: KernelSpec =
    KernelSpec { name: "ciede_claim", family: "ciede", workgroup: [TERMS_WG, 1, 1], buffers: 6, scalars: 9 };

/// The pairs shape's second pass: work item `n` of a one-dimensional grid
/// of `N` items scores the pixels `owners[n]`, `owners[n + N]`, ... below
/// the count in `claims[0]`, writing each one's ΔE00 to `terms` at that
/// pixel, as [`CIEDE_TERMS`] would. Buffers: reference and distorted
/// frames, table (as [`CIEDE_TERMS`]'s: a uniform block), claims and owners
/// ([`CIEDE_CLAIM`]'s), terms (out). Scalars: [`CIEDE_TERMS`]'s.
pub static CIEDE_PAIR_TERMS: KernelSpec =
    KernelSpec { name: "ciede_pair_terms", family: "ciede", workgroup: [TERMS_WG, 1, 1], buffers: 6, scalars: 9 };

/// [`CIEDE_PAIR_TERMS`] with its table as [`CIEDE_TERMS_STORAGE`]'s.
pub static CIEDE_PAIR_TERMS_STORAGE: KernelSpec = KernelSpec {
    name: "ciede_pair_terms_storage",
    family: "ciede",
    workgroup: [TERMS_WG, 1, 1],
    buffers: 6,
    scalars: 9,
};

/// The pairs shape's last pass: work item `x` of group `(gx, i)` takes
/// pixel `p = i * width + 64 gx + x` if inside the frame and, where
/// `links[p]` is another pixel, copies that pixel's term to `terms[p]`.
/// Buffers: links (in), terms (in and out). Scalars: width, height.
pub static CIEDE_SCATTER: KernelSpec =
    KernelSpec { name: "ciede_scatter", family: "ciede", workgroup: [TERMS_WG, 1, 1], buffers: 2, scalars: 2 };

/// How a GPU computes the terms (see the module's comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One item per pixel ([`CIEDE_TERMS`]): GPUs.
    Pixels,
    /// One item per distinct colour pair ([`CIEDE_CLAIM`],
    /// [`CIEDE_PAIR_TERMS`], [`CIEDE_SCATTER`]): CPU drivers.
    Pairs,
}

/// Overrides the [`Shape`]: `pairs` or `pixels`.
pub const SHAPE_VAR: &str = "ULPGATE_CIEDE_SHAPE";

/// The [`Shape`] for `device`, or `choice` (the value of [`SHAPE_VAR`]).
pub fn shape_for(device: &crate::backend::DeviceInfo, choice: Option<&std::ffi::OsStr>) -> Result<Shape> {
    crate::features::gpu::shape_for_driver(
        device,
        SHAPE_VAR,
        choice,
        ("pairs", "score each distinct colour pair once", Shape::Pairs),
        ("pixels", "score every pixel", Shape::Pixels),
    )
}

/// Work groups of [`CIEDE_PAIR_TERMS`] on a CPU driver: two per host thread
/// (the driver's threads), each item looping over many pairs. A SIMD
/// vector of items runs its loop's body until every lane is past the
/// count, so more groups only add partly idle passes (16 groups against 4
/// cost 10% more on issue 11's anchor, lavapipe on 2 threads). GPUs take a
/// group per 64 pixels, at most one pair an item.
fn pair_groups_cpu() -> u32 {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    (2 * threads).clamp(2, 64) as u32
}

/// The claims table's slots for `pixels`: a power of two at least twice
/// the pixels, so at most half of them are ever taken.
fn slots(pixels: usize) -> usize {
    (2 * pixels.max(1)).next_power_of_two()
}

/// Overrides the choice of [`CIEDE_TERMS`] (`uniform`, CPU drivers) or
/// [`CIEDE_TERMS_STORAGE`] (`storage`, GPUs).
pub const TABLE_VAR: &str = "ULPGATE_CIEDE_TABLE";

/// `off` makes the terms kernels compute every cube root and T with the
/// exact functions instead of rounding their estimates (`math::cbrt_f32`,
/// `math::upcase_t_f32`): the same bits, slower; for tests and for
/// measuring what the estimates save. `on` (the default) takes them.
pub const ESTIMATES_VAR: &str = "ULPGATE_CIEDE_ESTIMATES";

/// The margin that refuses every estimate: no double's 29 low bits lie
/// further than 2^28 from the midpoint's.
const ESTIMATES_OFF: i32 = 1 << 29;

/// The kernels' `margin` scalar for [`ESTIMATES_VAR`]'s value.
fn estimate_margin(value: Option<&std::ffi::OsStr>) -> Result<i32> {
    crate::features::gpu::env_switch(
        ESTIMATES_VAR,
        value,
        ("on", "round the estimates where they round alike", ESTIMATE_MARGIN),
        ("off", "the exact functions everywhere", ESTIMATES_OFF),
        ESTIMATE_MARGIN,
    )
}

/// The terms kernel for `device` (see [`TABLE_VAR`]).
fn terms_kernel(device: &crate::backend::DeviceInfo) -> Result<&'static KernelSpec> {
    let (uniform, storage): (&'static KernelSpec, &'static KernelSpec) = (&CIEDE_TERMS, &CIEDE_TERMS_STORAGE);
    crate::features::gpu::shape_for_driver(
        device,
        TABLE_VAR,
        std::env::var_os(TABLE_VAR).as_deref(),
        ("uniform", uniform.name, uniform),
        ("storage", storage.name, storage),
    )
}

/// [`rgb_maps_8bit`] with the GPU's own math ([`Own`]: the same bits as
/// the kernels' pow), computed once a process, at the table's end
/// ([`TABLE_LEN`]: `RGB_MAPS_AT` in both dialects).
fn rgb_maps() -> &'static [f64] {
    static MAPS: OnceLock<Vec<f64>> = OnceLock::new();
    MAPS.get_or_init(|| rgb_maps_8bit(&Own(&table_words())))
}

/// The kernels of a [`Shape`].
enum Kernels {
    Pixels(Kernel),
    Pairs { claim: Kernel, pair: Kernel, scatter: Kernel, groups: u32 },
}

struct CiedeGpu {
    kernels: Kernels,
    /// The kernel's table ([`table_words`], then [`rgb_maps`] where the
    /// kernel reads them), uploaded once: every slot reads it.
    table: Buffer,
    seqsum: SeqSum,
    geometry: Geometry,
    map: ChromaMap,
    /// The kernel's `margin` ([`ESTIMATES_VAR`]).
    margin: i32,
}

struct Slot {
    reference: Buffer,
    distorted: Buffer,
    terms: Buffer,
    sums: SeqSumBuffers,
    /// The pairs shape's claims, owners and links ([`CIEDE_CLAIM`]).
    pairs: Option<[Buffer; 3]>,
}

/// The GPU pipeline for frames of `geometry` (refused as the CPU
/// reference refuses them), in the [`Shape`] for the device.
pub fn extractor(gpu: Arc<dyn Gpu>, geometry: &Geometry) -> Result<Box<dyn Extractor>> {
    let shape = shape_for(gpu.device(), std::env::var_os(SHAPE_VAR).as_deref())?;
    extractor_in(shape, gpu, geometry)
}

/// [`extractor`] in a given [`Shape`] (the tests hold both to the CPU).
pub fn extractor_in(shape: Shape, gpu: Arc<dyn Gpu>, geometry: &Geometry) -> Result<Box<dyn Extractor>> {
    let map = ChromaMap::new(geometry)?;
    let spec = terms_kernel(gpu.device())?;
    let margin = estimate_margin(std::env::var_os(ESTIMATES_VAR).as_deref())?;
    let mut words = table_words();
    debug_assert_eq!(words.len(), TABLE_LEN);
    if std::ptr::eq(spec, &CIEDE_TERMS_STORAGE) && geometry.bit_depth == 8 {
        words.extend_from_slice(rgb_maps());
    }
    let bytes: Vec<u8> = words.iter().flat_map(|v| v.to_le_bytes()).collect();
    let table = gpu.create_buffer(bytes.len())?;
    let mut stream = gpu.create_stream()?;
    stream.upload(&table, 0, &bytes)?;
    stream.wait()?;
    let kernels = match shape {
        Shape::Pixels => Kernels::Pixels(gpu.load_kernel(spec)?),
        Shape::Pairs => {
            let pair =
                if std::ptr::eq(spec, &CIEDE_TERMS_STORAGE) { &CIEDE_PAIR_TERMS_STORAGE } else { &CIEDE_PAIR_TERMS };
            let on_cpu = gpu.device().device_type.as_deref() == Some("cpu");
            let per_pixel = groups_for(map.width * map.height, TERMS_WG).min(u32::from(u16::MAX));
            Kernels::Pairs {
                claim: gpu.load_kernel(&CIEDE_CLAIM)?,
                pair: gpu.load_kernel(pair)?,
                scatter: gpu.load_kernel(&CIEDE_SCATTER)?,
                groups: if on_cpu { pair_groups_cpu() } else { per_pixel },
            }
        }
    };
    let pipeline = CiedeGpu {
        kernels,
        table,
        seqsum: SeqSum::new(gpu.as_ref(), Accumulator::F64, &[map.width * map.height])?,
        geometry: *geometry,
        map,
        margin,
    };
    GpuExtractor::boxed(gpu, pipeline)
}

impl GpuPipeline for CiedeGpu {
    type Slot = Slot;

    fn new_slot(&self, gpu: &dyn Gpu) -> Result<Slot> {
        let frame = planes_bytes(&self.geometry, 3);
        let pixels = self.seqsum.terms();
        let pairs = match self.kernels {
            Kernels::Pixels(_) => None,
            Kernels::Pairs { .. } => Some([
                gpu.create_buffer(4 * (1 + slots(pixels)))?,
                gpu.create_buffer(4 * pixels)?,
                gpu.create_buffer(4 * pixels)?,
            ]),
        };
        Ok(Slot {
            reference: word_buffer(gpu, frame)?,
            distorted: word_buffer(gpu, frame)?,
            terms: gpu.create_buffer(pixels * 4)?,
            sums: self.seqsum.buffers(gpu)?,
            pairs,
        })
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
        let m = &self.map;
        let chroma = match m.chroma {
            Chroma::Yuv420 => 1,
            Chroma::Yuv422 => 2,
            Chroma::Yuv444 | Chroma::Yuv400 => 0,
        };
        let frame = [
            Arg::U32(m.width as u32),
            Arg::U32(m.height as u32),
            Arg::U32(m.cw as u32),
            Arg::U32(m.ch as u32),
            Arg::U32(m.stride as u32),
            Arg::U32(chroma),
            Arg::U32(self.geometry.bytes_per_sample() as u32),
            Arg::U32(u32::from(self.geometry.bit_depth) - 8),
        ];
        let pixel_grid = [groups_for(m.width, TERMS_WG), m.height as u32, 1];
        let inputs = [Arg::Buffer(&b.reference), Arg::Buffer(&b.distorted)];
        match (&self.kernels, &b.pairs) {
            (Kernels::Pixels(kernel), _) => {
                let buffers = [Arg::Buffer(&self.table), Arg::Buffer(&b.terms)];
                let args: Vec<Arg> = [&inputs[..], &buffers, &frame, &[Arg::I32(self.margin)]].concat();
                stream.dispatch(kernel, pixel_grid, &args)?;
            }
            (Kernels::Pairs { claim, pair, scatter, groups }, Some([claims, owners, links])) => {
                stream.zero(claims)?;
                let slot_mask = (slots(self.seqsum.terms()) - 1) as u32;
                let buffers = [Arg::Buffer(claims), Arg::Buffer(owners), Arg::Buffer(links), Arg::Buffer(&b.terms)];
                let args: Vec<Arg> = [&inputs[..], &buffers, &frame, &[Arg::U32(slot_mask)]].concat();
                stream.dispatch(claim, pixel_grid, &args)?;
                let buffers =
                    [Arg::Buffer(&self.table), Arg::Buffer(claims), Arg::Buffer(owners), Arg::Buffer(&b.terms)];
                let args: Vec<Arg> = [&inputs[..], &buffers, &frame, &[Arg::I32(self.margin)]].concat();
                stream.dispatch(pair, [*groups, 1, 1], &args)?;
                let args = [Arg::Buffer(links), Arg::Buffer(&b.terms), frame[0], frame[1]];
                stream.dispatch(scatter, pixel_grid, &args)?;
            }
            (Kernels::Pairs { .. }, None) => bail!("ciede: a pairs-shape slot without its claims buffers"),
        }
        self.seqsum.record(&b.terms, &b.sums, stream)
    }

    fn finish(&self, index: usize, downloads: &[Vec<u8>], out: &mut Scores) -> Result<()> {
        let sum = self.seqsum.results(&downloads[0])?[0];
        out.record("ciede2000", index, score(sum, self.map.width * self.map.height));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both dialects read the maps where the host puts them: after the
    /// table.
    #[test]
    fn both_dialects_find_the_maps_at_the_tables_end() {
        let c = include_str!("../../../kernels/ciede.cl");
        assert!(c.contains(&format!("#define RGB_MAPS_AT {TABLE_LEN}u\n")), "kernels/ciede.cl");
        let wgsl = include_str!("../../../shaders/include/ciede_terms.wgsl");
        assert!(wgsl.contains(&format!("const RGB_MAPS_AT: u32 = {TABLE_LEN}u;\n")), "ciede_terms.wgsl");
        // The cube root's seed (math.rs `cbrt_estimate`).
        use super::super::math::CBRT_SEED;
        assert!(c.contains(&format!("#define CBRT_SEED 0x{CBRT_SEED:08X}u\n")), "kernels/ciede.cl");
        assert!(wgsl.contains(&format!("const CBRT_SEED: u32 = 0x{CBRT_SEED:08X}u;\n")), "ciede_terms.wgsl");
    }

    #[test]
    fn cpu_drivers_score_pairs_and_gpus_pixels() {
        use crate::features::gpu::device_of_type;
        use std::ffi::OsStr;
        let (cpu, gpu) = (device_of_type(Some("cpu")), device_of_type(Some("discrete-gpu")));
        assert_eq!(shape_for(&cpu, None).unwrap(), Shape::Pairs);
        assert_eq!(shape_for(&gpu, None).unwrap(), Shape::Pixels);
        assert_eq!(shape_for(&gpu, Some(OsStr::new("pairs"))).unwrap(), Shape::Pairs);
        assert_eq!(shape_for(&cpu, Some(OsStr::new("pixels"))).unwrap(), Shape::Pixels);
        let err = shape_for(&cpu, Some(OsStr::new("pair"))).unwrap_err().to_string();
        assert!(err.contains(SHAPE_VAR) && err.contains("`pairs`") && err.contains("`pixels`"), "{err}");
    }

    /// At most half the slots are ever taken (every pixel a distinct
    /// pair), so a probe always ends; a power of two, for the mask.
    #[test]
    fn the_claims_table_has_room_for_every_pixel() {
        for pixels in [0, 1, 2, 3, 97 * 61, 576 * 324, 1920 * 1080, 3840 * 2160] {
            let n = slots(pixels);
            assert!(n.is_power_of_two() && n >= 2 * pixels, "{pixels}: {n}");
        }
    }

    #[test]
    fn the_estimates_switch_reads_on_and_off_only() {
        assert_eq!(estimate_margin(None).unwrap(), ESTIMATE_MARGIN);
        assert_eq!(estimate_margin(Some("on".as_ref())).unwrap(), ESTIMATE_MARGIN);
        assert_eq!(estimate_margin(Some("off".as_ref())).unwrap(), ESTIMATES_OFF);
        assert_eq!(estimate_margin(Some("".as_ref())).unwrap(), ESTIMATE_MARGIN);
        let e = estimate_margin(Some("of".as_ref())).unwrap_err().to_string();
        assert!(e.contains("ULPGATE_CIEDE_ESTIMATES=\"of\"") && e.contains("`on`") && e.contains("`off`"), "{e}");
    }
}
