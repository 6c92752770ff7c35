//! `psnr_hvs` (libvmaf third_party/xiph/psnr_hvs.c, Daala's PSNR-HVS-M):
//! per plane, 8x8 blocks every 7 pixels, each transformed by Daala's
//! integer DCT; coefficient differences beyond a contrast-masking threshold
//! are weighted by a contrast sensitivity table and summed.
//!
//! The CPU reference ([`cpu`]) ports calc_psnrhvs operation for operation.
//! Its sum is one f32 accumulator over every term of the plane, in order;
//! the GPU pipeline ([`gpu`]) computes the terms in parallel and reproduces
//! that sequential f32 sum exactly ([`crate::features::seqsum`]), so the
//! scores are bit-identical.

pub mod cpu;
pub mod gpu;
pub mod tables;

use super::{FeatureImpl, Options, options};
use crate::fixture::{Chroma, Geometry};

pub const METRICS: [&str; 4] = ["psnr_hvs_y", "psnr_hvs_cb", "psnr_hvs_cr", "psnr_hvs"];

pub static PSNR_HVS: FeatureImpl = FeatureImpl {
    name: "psnr_hvs",
    options: &[],
    metrics: |options| {
        options::check("psnr_hvs", options, &[])?;
        Ok(METRICS.iter().map(|s| s.to_string()).collect())
    },
    cpu: |_, options| {
        options::check("psnr_hvs", options, &[])?;
        Ok(Box::new(cpu::PsnrHvsCpu::new()))
    },
    gpu: Some(|gpu, geometry, options| {
        options::check("psnr_hvs", options, &[])?;
        gpu::extractor(gpu, geometry)
    }),
    kernels: &[
        &gpu::PSNR_HVS_TERMS,
        &super::seqsum::SEQSUM,
        &super::seqsum::SEQSUM_SEGMENTS,
        &super::seqsum::SEQSUM_SERIAL,
    ],
    temporal: false,
    chroma_metrics: &[],
    refuses,
};

/// The number of 8x8 blocks calc_psnrhvs places along `n` pixels: one
/// every 7 (`for (x = 0; x < _w - 7; x += 7)`).
pub fn blocks(n: usize) -> usize {
    if n >= 8 { (n - 8) / 7 + 1 } else { 0 }
}

/// What libvmaf's psnr_hvs does not score: bit depths above 12 (its `init`
/// fails with the message quoted), 4:0:0 (`init` returns -EINVAL), and
/// planes too small for one 8x8 block, on which calc_psnrhvs divides 0 by 0
/// and libvmaf prints `null`.
fn refuses(geometry: &Geometry, _: &Options) -> Option<String> {
    if geometry.bit_depth > 12 {
        return Some(format!(
            "libvmaf: \"psnr_hvs: invalid bitdepth ({}), bpc must be less than or equal to 12\"",
            geometry.bit_depth
        ));
    }
    if geometry.chroma == Chroma::Yuv400 {
        return Some("libvmaf's psnr_hvs init refuses 4:0:0 (YUV400P) input (-EINVAL)".into());
    }
    for (p, metric) in METRICS[..3].iter().enumerate() {
        let (w, h) = geometry.plane_dims(p);
        if blocks(w) == 0 || blocks(h) == 0 {
            return Some(format!(
                "plane {p} is {w}x{h}: no 8x8 block fits, so libvmaf's calc_psnrhvs divides 0 by 0 \
                 and prints null for {metric}"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(width: u32, height: u32, bit_depth: u8, chroma: Chroma) -> Geometry {
        Geometry { width, height, bit_depth, chroma }
    }

    #[test]
    fn blocks_every_seven_pixels() {
        assert_eq!(blocks(7), 0);
        assert_eq!(blocks(8), 1);
        assert_eq!(blocks(14), 1);
        assert_eq!(blocks(15), 2);
        assert_eq!(blocks(1920), 274);
        assert_eq!(blocks(1080), 154);
    }

    #[test]
    fn refuses_what_libvmaf_does_not_score() {
        let none = Options::new();
        assert!(refuses(&g(64, 48, 12, Chroma::Yuv420), &none).is_none());
        let why = refuses(&g(64, 48, 16, Chroma::Yuv444), &none).unwrap();
        assert!(why.contains("psnr_hvs: invalid bitdepth (16), bpc must be less than or equal to 12"), "{why}");
        assert!(refuses(&g(64, 48, 8, Chroma::Yuv400), &none).unwrap().contains("4:0:0"));
        // 4:2:0 at 14x14: 7x7 chroma, no block (libvmaf prints null).
        let why = refuses(&g(14, 14, 8, Chroma::Yuv420), &none).unwrap();
        assert!(why.contains("plane 1 is 7x7") && why.contains("psnr_hvs_cb"), "{why}");
        assert!(refuses(&g(16, 16, 8, Chroma::Yuv420), &none).is_none());
        assert!(PSNR_HVS.cpu_extractor(&g(14, 14, 8, Chroma::Yuv420), &none).is_err());
    }
}
