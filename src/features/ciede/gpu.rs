//! ciede on a GPU: [`CIEDE_TERMS`] computes every pixel's ΔE00 in
//! parallel, bit for bit as the CPU reference does (the same math
//! functions, [`super::math`]); [`crate::features::seqsum`] then adds them
//! as ciede.c does, into one double in raster order, exactly. The scores
//! are bit-identical to the CPU reference's.

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
use anyhow::Result;
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

struct CiedeGpu {
    kernel: Kernel,
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
}

/// The GPU pipeline for frames of `geometry` (refused as the CPU
/// reference refuses them).
pub fn extractor(gpu: Arc<dyn Gpu>, geometry: &Geometry) -> Result<Box<dyn Extractor>> {
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
    let pipeline = CiedeGpu {
        kernel: gpu.load_kernel(spec)?,
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
        Ok(Slot {
            reference: word_buffer(gpu, frame)?,
            distorted: word_buffer(gpu, frame)?,
            terms: gpu.create_buffer(self.seqsum.terms() * 4)?,
            sums: self.seqsum.buffers(gpu)?,
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
        let args = [
            Arg::Buffer(&b.reference),
            Arg::Buffer(&b.distorted),
            Arg::Buffer(&self.table),
            Arg::Buffer(&b.terms),
            Arg::U32(m.width as u32),
            Arg::U32(m.height as u32),
            Arg::U32(m.cw as u32),
            Arg::U32(m.ch as u32),
            Arg::U32(m.stride as u32),
            Arg::U32(chroma),
            Arg::U32(self.geometry.bytes_per_sample() as u32),
            Arg::U32(u32::from(self.geometry.bit_depth) - 8),
            Arg::I32(self.margin),
        ];
        stream.dispatch(&self.kernel, [groups_for(m.width, TERMS_WG), m.height as u32, 1], &args)?;
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
    fn the_estimates_switch_reads_on_and_off_only() {
        assert_eq!(estimate_margin(None).unwrap(), ESTIMATE_MARGIN);
        assert_eq!(estimate_margin(Some("on".as_ref())).unwrap(), ESTIMATE_MARGIN);
        assert_eq!(estimate_margin(Some("off".as_ref())).unwrap(), ESTIMATES_OFF);
        assert_eq!(estimate_margin(Some("".as_ref())).unwrap(), ESTIMATE_MARGIN);
        let e = estimate_margin(Some("of".as_ref())).unwrap_err().to_string();
        assert!(e.contains("ULPGATE_CIEDE_ESTIMATES=\"of\"") && e.contains("`on`") && e.contains("`off`"), "{e}");
    }
}
