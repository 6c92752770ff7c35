//! ciede on a GPU: [`CIEDE_TERMS`] computes every pixel's ΔE00 in
//! parallel, bit for bit as the CPU reference does (the same math
//! functions, [`super::math`]); [`crate::features::seqsum`] then adds them
//! as ciede.c does, into one double in raster order, exactly. The scores
//! are bit-identical to the CPU reference's.

use super::ChromaMap;
use super::cpu::score;
use super::tables::table_words;
use crate::backend::gpu::{Arg, Buffer, Gpu, Kernel, KernelSpec, Stream, groups_for};
use crate::features::Extractor;
use crate::features::gpu::{GpuExtractor, GpuPipeline, planes_bytes, word_buffer};
use crate::features::seqsum::{Accumulator, SeqSum, SeqSumBuffers};
use crate::fixture::{Chroma, Geometry};
use crate::scores::Scores;
use anyhow::Result;
use std::sync::Arc;

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
/// chroma (0: 4:4:4, 1: 4:2:0, 2: 4:2:2), bytes per sample, bit depth - 8.
pub static CIEDE_TERMS: KernelSpec =
    KernelSpec { name: "ciede_terms", family: "ciede", workgroup: [TERMS_WG, 1, 1], buffers: 4, scalars: 8 };

/// [`CIEDE_TERMS`] with the table in a storage buffer instead of a uniform
/// block (shaders/ciede_terms_storage.wgsl; the C dialect is the same
/// kernel): the table's lookups take per-invocation indices, which a
/// uniform block serves one address at a time on NVIDIA, while a CPU
/// driver such as lavapipe turns a storage load into a gather. Same
/// arguments, same bits.
pub static CIEDE_TERMS_STORAGE: KernelSpec =
    KernelSpec { name: "ciede_terms_storage", family: "ciede", workgroup: [TERMS_WG, 1, 1], buffers: 4, scalars: 8 };

/// Overrides the choice of [`CIEDE_TERMS`] (`uniform`, CPU drivers) or
/// [`CIEDE_TERMS_STORAGE`] (`storage`, GPUs).
pub const TABLE_VAR: &str = "ULPGATE_CIEDE_TABLE";

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

struct CiedeGpu {
    kernel: Kernel,
    seqsum: SeqSum,
    geometry: Geometry,
    map: ChromaMap,
}

struct Slot {
    reference: Buffer,
    distorted: Buffer,
    table: Buffer,
    terms: Buffer,
    sums: SeqSumBuffers,
}

/// The GPU pipeline for frames of `geometry` (refused as the CPU
/// reference refuses them).
pub fn extractor(gpu: Arc<dyn Gpu>, geometry: &Geometry) -> Result<Box<dyn Extractor>> {
    let map = ChromaMap::new(geometry)?;
    let pipeline = CiedeGpu {
        kernel: gpu.load_kernel(terms_kernel(gpu.device())?)?,
        seqsum: SeqSum::new(gpu.as_ref(), Accumulator::F64, &[map.width * map.height])?,
        geometry: *geometry,
        map,
    };
    GpuExtractor::boxed(gpu, pipeline)
}

impl GpuPipeline for CiedeGpu {
    type Slot = Slot;

    fn new_slot(&self, gpu: &dyn Gpu) -> Result<Slot> {
        let frame = planes_bytes(&self.geometry, 3);
        let table: Vec<u8> = table_words().iter().flat_map(|v| v.to_le_bytes()).collect();
        let slot = Slot {
            reference: word_buffer(gpu, frame)?,
            distorted: word_buffer(gpu, frame)?,
            table: gpu.create_buffer(table.len())?,
            terms: gpu.create_buffer(self.seqsum.terms() * 4)?,
            sums: self.seqsum.buffers(gpu)?,
        };
        let mut stream = gpu.create_stream()?;
        stream.upload(&slot.table, 0, &table)?;
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
        let m = &self.map;
        let chroma = match m.chroma {
            Chroma::Yuv420 => 1,
            Chroma::Yuv422 => 2,
            Chroma::Yuv444 | Chroma::Yuv400 => 0,
        };
        let args = [
            Arg::Buffer(&b.reference),
            Arg::Buffer(&b.distorted),
            Arg::Buffer(&b.table),
            Arg::Buffer(&b.terms),
            Arg::U32(m.width as u32),
            Arg::U32(m.height as u32),
            Arg::U32(m.cw as u32),
            Arg::U32(m.ch as u32),
            Arg::U32(m.stride as u32),
            Arg::U32(chroma),
            Arg::U32(self.geometry.bytes_per_sample() as u32),
            Arg::U32(u32::from(self.geometry.bit_depth) - 8),
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
