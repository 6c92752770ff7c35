//! `ciede` (libvmaf ciede.c): the CIEDE2000 colour difference of every
//! pixel (YUV to RGB to CIELAB, BT.709), averaged over the frame and
//! reported as `45 - 20 log10(mean ΔE00)`.
//!
//! The CPU reference ([`cpu`]) ports ciede.c operation for operation, with
//! the math functions of [`math`] in place of the C library's: the GPU
//! kernels carry the very same functions, so the per-pixel values are
//! bit-identical, and the GPU pipeline ([`gpu`]) reproduces ciede.c's
//! sequential double sum exactly ([`crate::features::seqsum`]).

pub mod cpu;
pub mod gpu;
pub mod lanes;
pub mod math;
pub mod simd;
pub mod tables;
#[cfg(test)]
mod tables_check;

use super::{FeatureImpl, Options, options};
use crate::fixture::{Chroma, Geometry};
use anyhow::Result;

pub static CIEDE: FeatureImpl = FeatureImpl {
    name: "ciede",
    options: &[],
    metrics: |options| {
        options::check("ciede", options, &[])?;
        Ok(vec!["ciede2000".into()])
    },
    cpu: |geometry, options| {
        options::check("ciede", options, &[])?;
        let map = ChromaMap::new(geometry)?;
        Ok(Box::new(cpu::CiedeCpu::new(map, geometry.bit_depth)))
    },
    gpu: Some(|gpu, geometry, options| {
        options::check("ciede", options, &[])?;
        gpu::extractor(gpu, geometry)
    }),
    kernels: &[
        &gpu::CIEDE_TERMS,
        &gpu::CIEDE_TERMS_STORAGE,
        &gpu::CIEDE_CLAIM,
        &gpu::CIEDE_PAIR_TERMS,
        &gpu::CIEDE_PAIR_TERMS_STORAGE,
        &gpu::CIEDE_SCATTER,
        &super::seqsum::SEQSUM,
        &super::seqsum::SEQSUM_SEGMENTS,
        &super::seqsum::SEQSUM_SERIAL,
    ],
    temporal: false,
    chroma_metrics: &[],
    refuses,
};

/// Where ciede.c reads a sample: plane `p`'s sample at index `i` (the
/// frame's planes, packed), or a zero of its picture's row padding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tap {
    At(usize, usize),
    Zero,
}

/// ciede.c's chroma upsampling (`scale_chroma_planes`): which chroma
/// sample it reads for luma pixel (i, j).
///
/// - 4:4:4: the same pixel.
/// - 4:2:0: `(i / 2, j / 2)`, nearest neighbour.
/// - 4:2:2: ciede.c conditions its vertical step on horizontal subsampling
///   and its horizontal halving on vertical subsampling, so for 4:2:2 it
///   reads chroma row `i / 2` at column `j` — for `j` past the row's end,
///   its picture's zero padding (rows of `stride` samples: the width
///   rounded up to 32, libvmaf's `DATA_ALIGN`) and then the next row. This
///   map reproduces that memory walk on libvmaf's picture layout (Y, Cb
///   and Cr planes one after the other, each row padded to the stride with
///   zeros); a read past the Cr plane's end is refused ([`refuses`]).
///
/// Chroma planes are the frame's, `ceil(w / 2)` wide for odd widths (the
/// project's geometry; libvmaf's own picture would hold `floor(w / 2)`).
#[derive(Debug, Clone, PartialEq)]
pub struct ChromaMap {
    pub width: usize,
    pub height: usize,
    pub chroma: Chroma,
    /// Chroma plane width and height.
    pub cw: usize,
    pub ch: usize,
    /// Samples per row of libvmaf's chroma plane (4:2:2's walk).
    pub stride: usize,
}

impl ChromaMap {
    pub fn new(geometry: &Geometry) -> Result<Self> {
        let (cw, ch) = geometry.plane_dims(1);
        Ok(ChromaMap {
            width: geometry.width as usize,
            height: geometry.height as usize,
            chroma: geometry.chroma,
            cw,
            ch,
            stride: cw.next_multiple_of(32),
        })
    }

    /// The sample ciede.c reads from chroma plane `p` (1 or 2) for pixel
    /// (row `i`, column `j`).
    #[inline(always)]
    pub fn tap(&self, p: usize, i: usize, j: usize) -> Tap {
        match self.chroma {
            Chroma::Yuv444 | Chroma::Yuv400 => Tap::At(p, i * self.cw + j),
            Chroma::Yuv420 => Tap::At(p, (i / 2) * self.cw + j / 2),
            Chroma::Yuv422 => {
                let flat = (i / 2) * self.stride + j;
                let (row, col) = (flat / self.stride, flat % self.stride);
                if col >= self.cw {
                    Tap::Zero
                } else if row < self.ch {
                    Tap::At(p, row * self.cw + col)
                } else {
                    // Past Cb's last row: Cr's first rows ([`refuses`] keeps
                    // Cr's walk inside Cr).
                    Tap::At(2, (row - self.ch) * self.cw + col)
                }
            }
        }
    }
}

/// What libvmaf's ciede does not score: 4:0:0 (its `init` returns
/// -EINVAL), and 4:2:2 pictures whose chroma walk ([`ChromaMap`]) reads past
/// the end of libvmaf's picture buffer (only heights of 1 to 3 at some
/// widths: undefined in libvmaf, so no score to hold anything to).
fn refuses(geometry: &Geometry, _: &Options) -> Option<String> {
    match geometry.chroma {
        Chroma::Yuv400 => Some("libvmaf's ciede init refuses 4:0:0 (YUV400P) input (-EINVAL)".into()),
        Chroma::Yuv422 => {
            let (w, h) = (geometry.width as usize, geometry.height as usize);
            let (cw, ch) = geometry.plane_dims(1);
            let stride = cw.next_multiple_of(32);
            let last = (h - 1) / 2 * stride + (w - 1);
            (last >= ch * stride).then(|| {
                format!(
                    "libvmaf's ciede upsamples 4:2:2 chroma by reading row i/2 at column j, which at {w}x{h} \
                     reads past the end of its picture (undefined)"
                )
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(width: u32, height: u32, chroma: Chroma) -> Geometry {
        Geometry { width, height, bit_depth: 8, chroma }
    }

    #[test]
    fn chroma_taps_follow_ciede_c() {
        let m = ChromaMap::new(&g(5, 3, Chroma::Yuv420)).unwrap();
        assert_eq!((m.cw, m.ch), (3, 2));
        assert_eq!(m.tap(1, 2, 4), Tap::At(1, 3 + 2));
        let m = ChromaMap::new(&g(4, 2, Chroma::Yuv444)).unwrap();
        assert_eq!(m.tap(2, 1, 3), Tap::At(2, 7));
        // 4:2:2 at 80x4: chroma 40x4, stride 64. Row 3 reads chroma row 1:
        // columns 0..40 are samples, 40..64 padding, 64..80 row 2.
        let m = ChromaMap::new(&g(80, 4, Chroma::Yuv422)).unwrap();
        assert_eq!(m.stride, 64);
        assert_eq!(m.tap(1, 3, 39), Tap::At(1, 40 + 39));
        assert_eq!(m.tap(1, 3, 40), Tap::Zero);
        assert_eq!(m.tap(1, 3, 63), Tap::Zero);
        assert_eq!(m.tap(1, 3, 64), Tap::At(1, 2 * 40));
        assert_eq!(m.tap(2, 0, 79), Tap::At(2, 40 + 15));
    }

    #[test]
    fn refuses_4_0_0_and_4_2_2_walks_past_the_picture() {
        let none = Options::new();
        assert!(refuses(&g(16, 16, Chroma::Yuv400), &none).unwrap().contains("4:0:0"));
        assert!(refuses(&g(176, 144, Chroma::Yuv422), &none).is_none());
        // One row: chroma row 0 at columns up to 79, past its 64-sample stride.
        assert!(refuses(&g(80, 1, Chroma::Yuv422), &none).unwrap().contains("past the end"));
        assert!(refuses(&g(32, 1, Chroma::Yuv422), &none).is_none());
        assert!(refuses(&g(33, 1, Chroma::Yuv422), &none).is_some());
        assert!(refuses(&g(1, 1, Chroma::Yuv420), &none).is_none());
        let e = CIEDE.cpu_extractor(&g(80, 1, Chroma::Yuv422), &none).err().expect("refused");
        assert!(format!("{e:#}").starts_with("ciede does not take 80x1"), "{e:#}");
    }
}
