//! The SSIM family: `float_ssim` (libvmaf float_ssim.c + ssim.c) and
//! `float_ms_ssim` (float_ms_ssim.c + ms_ssim.c), both on libvmaf's iqa
//! code (Gaussian window, decimation, `_iqa_ssim`). The CPU reference
//! reproduces libvmaf's f32/f64 arithmetic in its order; the GPU pipelines
//! keep every pixel's operations and reproduce its sequential sums exactly
//! (`sums.rs` says how).

pub mod core;
pub mod exact;
pub mod filter;
pub mod float_ssim;
pub mod gpu;
pub mod joint;
pub mod ms_ssim;
#[cfg(target_arch = "x86_64")]
mod simd;
pub mod sums;
pub mod tables;

use super::{FeatureImpl, Options};
use crate::fixture::Geometry;
pub use joint::JOINT;

pub static FLOAT_SSIM: FeatureImpl = FeatureImpl {
    name: "float_ssim",
    options: float_ssim::OPTIONS,
    metrics: float_ssim::metrics,
    cpu: |geometry, options| Ok(Box::new(float_ssim::FloatSsimCpu::new(geometry, options)?)),
    gpu: Some(float_ssim::gpu_extractor),
    kernels: &gpu::KERNELS,
    temporal: false,
    chroma_metrics: &[],
    refuses: float_ssim::refuses,
};

pub static FLOAT_MS_SSIM: FeatureImpl = FeatureImpl {
    name: "float_ms_ssim",
    options: ms_ssim::OPTIONS,
    metrics: ms_ssim::metrics,
    cpu: |geometry, options| Ok(Box::new(ms_ssim::MsSsimCpu::new(geometry, options)?)),
    gpu: Some(ms_ssim::gpu_extractor),
    kernels: &gpu::KERNELS,
    temporal: false,
    chroma_metrics: &[],
    refuses: ms_ssim::refuses,
};

/// float_ssim.c / float_ms_ssim.c `init`: the dB ceiling with `clip_db`,
/// `ceil(10 * log10(peak * peak / (0.5 / (w * h))))` (peak² in unsigned
/// int, as C multiplies it), else infinity.
pub fn max_db(clip_db: bool, geometry: &Geometry) -> f64 {
    if !clip_db {
        return f64::INFINITY;
    }
    let peak = geometry.max_value();
    let mse = 0.5 / f64::from(geometry.width.wrapping_mul(geometry.height));
    (10.0 * (f64::from(peak.wrapping_mul(peak)) / mse).log10()).ceil()
}

/// `convert_to_db`: `MIN(-10 * log10(1 - score), max_db)` with C's macro
/// (`x < y ? x : y`: a NaN gives `max_db`).
pub fn db(score: f64, max_db: f64) -> f64 {
    let v = -10.0 * (1.0 - score).log10();
    if v < max_db { v } else { max_db }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::Chroma;

    #[test]
    fn db_clips_as_libvmaf_does() {
        let g = Geometry { width: 1920, height: 1080, bit_depth: 8, chroma: Chroma::Yuv420 };
        // 10 * log10(255^2 * 2 * 1920 * 1080) = 114.3 -> 115.
        assert_eq!(max_db(true, &g), 115.0);
        assert_eq!(max_db(false, &g), f64::INFINITY);
        assert_eq!(db(1.0, 112.0), 112.0);
        assert_eq!(db(1.0, f64::INFINITY), f64::INFINITY);
        assert!((db(0.9, 112.0) - 10.0).abs() < 1e-12);
        assert_eq!(db(f64::NAN, 112.0), 112.0);
        let g16 = Geometry { bit_depth: 16, ..g };
        assert_eq!(max_db(true, &g16), (10.0 * (65535.0f64 * 65535.0 * 2.0 * 1920.0 * 1080.0).log10()).ceil());
    }
}
