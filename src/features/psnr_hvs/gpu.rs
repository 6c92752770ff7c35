//! psnr_hvs on a GPU: [`PSNR_HVS_TERMS`] computes every block's 64 terms
//! (the values calc_psnrhvs adds to its sum) in parallel, bit for bit as
//! [`super::cpu::block_terms`] does; [`crate::features::seqsum`] then adds
//! each plane's terms as calc_psnrhvs does, in one f32 accumulator in
//! order, exactly. The scores are bit-identical to the CPU reference's.

use super::cpu::{plane_score, record};
use super::tables::plane_tables;

use crate::backend::gpu::{Arg, Buffer, Gpu, Kernel, KernelSpec, Stream, groups_for};
use crate::features::Extractor;
use crate::features::gpu::{GpuExtractor, GpuPipeline, planes_bytes, word_buffer};
use crate::features::seqsum::{Accumulator, SeqSum, SeqSumBuffers};
use crate::fixture::Geometry;
use crate::scores::Scores;
use anyhow::{Result, ensure};
use std::sync::Arc;

/// Blocks per work group of [`PSNR_HVS_TERMS`].
pub const TERMS_WG: u32 = 64;

/// `psnr_hvs_terms` (kernels/psnr_hvs.cl, shaders/psnr_hvs_terms.comp): one
/// work item per 8x8 block, in one row of groups: plane `p`'s groups start
/// at its first group `f_p` ([`plane_groups`]), and work item `x` of group
/// `f_p + g` takes block `64 g + x` of plane `p` (raster order, one block
/// every 7 pixels), if the plane has that many, and writes the 64 values [`super::cpu::block_terms`] computes
/// for it, in the same order, to `terms[term_offset + 64 x ..]`: the same
/// f32 arithmetic in the same order (no FMA), Daala's integer DCT, and the
/// divisions and the square root correctly rounded. Buffers: reference and
/// distorted frames (every plane), tables (per plane the CSF then the mask,
/// 64 f32 each), planes (per plane six u32: first sample, width, blocks
/// per row, block rows, first term, first group), terms (out). Scalars:
/// bytes per sample.
pub static PSNR_HVS_TERMS: KernelSpec =
    KernelSpec { name: "psnr_hvs_terms", family: "psnr_hvs", workgroup: [TERMS_WG, 1, 1], buffers: 5, scalars: 1 };

struct PsnrHvsGpu {
    kernel: Kernel,
    seqsum: SeqSum,
    geometry: Geometry,
    /// Per plane: blocks per row, block rows.
    blocks: [(usize, usize); 3],
}

struct Slot {
    reference: Buffer,
    distorted: Buffer,
    tables: Buffer,
    planes: Buffer,
    terms: Buffer,
    sums: SeqSumBuffers,
}

/// The GPU pipeline for frames of `geometry` (which psnr_hvs takes: the
/// caller checked `refuses`).
pub fn extractor(gpu: Arc<dyn Gpu>, geometry: &Geometry) -> Result<Box<dyn Extractor>> {
    let blocks: [(usize, usize); 3] = std::array::from_fn(|p| {
        let (w, h) = geometry.plane_dims(p);
        (super::blocks(w), super::blocks(h))
    });
    ensure!(blocks.iter().all(|&(x, y)| x * y > 0), "psnr_hvs needs an 8x8 block in every plane");
    let counts: Vec<usize> = blocks.iter().map(|(x, y)| 64 * x * y).collect();
    let pipeline = PsnrHvsGpu {
        kernel: gpu.load_kernel(&PSNR_HVS_TERMS)?,
        seqsum: SeqSum::new(gpu.as_ref(), Accumulator::F32, &counts)?,
        geometry: *geometry,
        blocks,
    };
    GpuExtractor::boxed(gpu, pipeline)
}

/// Each plane's first group in [`PSNR_HVS_TERMS`]'s row, and the row's
/// length: a plane takes the groups its blocks fill. (A grid of the largest
/// plane's groups for every plane left most of the chroma planes' idle,
/// which a CPU driver such as lavapipe runs as if they worked.)
fn plane_groups(blocks: &[(usize, usize); 3]) -> ([usize; 3], u32) {
    let mut first = [0; 3];
    let mut next = 0;
    for (p, &(x, y)) in blocks.iter().enumerate() {
        first[p] = next;
        next += groups_for(x * y, TERMS_WG) as usize;
    }
    (first, next as u32)
}

impl GpuPipeline for PsnrHvsGpu {
    type Slot = Slot;

    fn new_slot(&self, gpu: &dyn Gpu) -> Result<Slot> {
        let frame = planes_bytes(&self.geometry, 3);
        let tables: Vec<u8> = (0..3)
            .flat_map(|p| {
                let t = plane_tables(p);
                t.csf.into_iter().chain(t.mask).flat_map(f32::to_le_bytes).collect::<Vec<_>>()
            })
            .collect();
        let mut planes = Vec::new();
        let mut term = 0;
        let (first_group, _) = plane_groups(&self.blocks);
        for (p, (&(bx, by), group)) in self.blocks.iter().zip(first_group).enumerate() {
            let width = self.geometry.plane_dims(p).0;
            planes.extend([self.geometry.plane_offset(p), width, bx, by, term, group].map(|v| v as u32));
            term += 64 * bx * by;
        }
        let planes: Vec<u8> = planes.iter().flat_map(|w| w.to_le_bytes()).collect();
        let slot = Slot {
            reference: word_buffer(gpu, frame)?,
            distorted: word_buffer(gpu, frame)?,
            tables: gpu.create_buffer(tables.len())?,
            planes: gpu.create_buffer(planes.len())?,
            terms: gpu.create_buffer(self.seqsum.terms() * 4)?,
            sums: self.seqsum.buffers(gpu)?,
        };
        let mut stream = gpu.create_stream()?;
        stream.upload(&slot.tables, 0, &tables)?;
        stream.upload(&slot.planes, 0, &planes)?;
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
        let args = [
            Arg::Buffer(&b.reference),
            Arg::Buffer(&b.distorted),
            Arg::Buffer(&b.tables),
            Arg::Buffer(&b.planes),
            Arg::Buffer(&b.terms),
            Arg::U32(self.geometry.bytes_per_sample() as u32),
        ];
        stream.dispatch(&self.kernel, [plane_groups(&self.blocks).1, 1, 1], &args)?;
        self.seqsum.record(&b.terms, &b.sums, stream)
    }

    fn finish(&self, index: usize, downloads: &[Vec<u8>], out: &mut Scores) -> Result<()> {
        let sums = self.seqsum.results(&downloads[0])?;
        let scores: [f64; 3] = std::array::from_fn(|p| {
            let (bx, by) = self.blocks[p];
            plane_score(sums[p] as f32, 64 * bx * by, self.geometry.bit_depth)
        });
        record(scores, index, out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The groups of each plane follow the previous plane's, as many as
    /// its blocks fill: 576x324 4:2:0 has 82 x 46 luma blocks (59 groups)
    /// and 41 x 23 in each chroma plane (15).
    #[test]
    fn each_plane_takes_the_groups_its_blocks_fill() {
        assert_eq!(plane_groups(&[(82, 46), (41, 23), (41, 23)]), ([0, 59, 74], 89));
        assert_eq!(plane_groups(&[(1, 1), (1, 1), (1, 1)]), ([0, 1, 2], 3));
        assert_eq!(plane_groups(&[(8, 8), (8, 8), (8, 8)]), ([0, 1, 2], 3));
        assert_eq!(plane_groups(&[(65, 1), (1, 1), (64, 2)]), ([0, 2, 3], 5));
    }

    #[test]
    fn blocks_are_counted_per_plane() {
        let g = Geometry { width: 200, height: 184, bit_depth: 8, chroma: crate::fixture::Chroma::Yuv420 };
        let b: Vec<(usize, usize)> = (0..3)
            .map(|p| (super::super::blocks(g.plane_dims(p).0), super::super::blocks(g.plane_dims(p).1)))
            .collect();
        assert_eq!(b, vec![(28, 26), (14, 13), (14, 13)]);
    }
}
