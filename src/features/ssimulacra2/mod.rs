//! `ssimulacra2`: the lusoris fork's CPU extractor (libvmaf/src/feature/
//! ssimulacra2.c with ssimulacra2_math.h and ssimulacra2_eotf_lut.h, at
//! the fork commit the recordings name), a scalar C port of libjxl's
//! tools/ssimulacra2. Per frame pair:
//!
//! 1. YUV to non-linear RGB through the chosen matrix, clamped to [0, 1],
//!    then the sRGB EOTF through a 1024-entry table (`color`);
//! 2. six scales (fewer when a side drops below 8 pixels), each a 2x2 box
//!    average of the previous one in linear RGB (`pyramid`);
//! 3. per scale, XYB with the fork's bit-trick cube root (`xyb`), the
//!    3-pole recursive Gaussian of both images, their squares and their
//!    product (`blur`), the SSIM and edge-difference maps summed in f64
//!    (`maps`);
//! 4. the 108 weighted norms, the polynomial and the power (`score`).
//!
//! Every step keeps the fork's f32/f64 operations in its order, so the CPU
//! reference (`cpu`) gives the fork's doubles bit for bit; the GPU pipeline
//! (`gpu`) keeps every per-pixel operation too and differs only in the
//! order of its f64 map sums (docs/features/ssimulacra2.md).

pub mod blur;
pub mod color;
mod cpu;
pub mod gpu;
pub mod maps;
pub mod pyramid;
#[cfg(target_arch = "x86_64")]
mod rgb_avx2;
pub mod score;
pub mod xyb;

pub use cpu::{Ssimulacra2Cpu, SumOrder};

use super::options::{self, OptValue, OptionDef};
use super::{FeatureImpl, Options};
use crate::fixture::{Chroma, Geometry};
use anyhow::Result;

pub static SSIMULACRA2: FeatureImpl = FeatureImpl {
    name: "ssimulacra2",
    options: OPTIONS,
    metrics: |options| {
        options::check("ssimulacra2", options, OPTIONS)?;
        Ok(vec!["ssimulacra2".into()])
    },
    cpu: |geometry, options| cpu::extractor(Params::new(geometry, options)?),
    gpu: Some(|gpu, geometry, options| gpu::extractor(gpu, Params::new(geometry, options)?)),
    kernels: &[&gpu::LINEAR_XYB, &gpu::DOWNSAMPLE_XYB, &gpu::BLUR_ROWS, &gpu::BLUR_COLUMNS_MAPS, &gpu::SUM_COLUMNS],
    temporal: false,
    chroma_metrics: &[],
    refuses,
};

/// ssimulacra2.c's option table: `yuv_matrix` (an int, not a feature
/// parameter: the metric keeps its name).
static OPTIONS: &[OptionDef] = &[OptionDef {
    name: "yuv_matrix",
    alias: None,
    default: OptValue::Int(0),
    min: Some(0.0),
    max: Some(3.0),
    feature_param: false,
}];

/// What the fork's extractor cannot take. It converts three planes to RGB;
/// a luma-only picture has none for chroma (libvmaf's 4:0:0 pictures have
/// NULL chroma planes, which its `read_plane` would dereference, and the
/// vmaf tool takes only 420, 422 and 444).
fn refuses(geometry: &Geometry, _: &Options) -> Option<String> {
    (geometry.chroma == Chroma::Yuv400).then(|| {
        "ssimulacra2 converts Y, Cb and Cr to RGB; a 4:0:0 picture has no chroma planes (the fork reads them \
         unconditionally, and its vmaf tool takes only 420, 422 and 444)"
            .to_string()
    })
}

/// The extractor's settings for one geometry.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    pub matrix: color::YuvMatrix,
    pub geometry: Geometry,
}

impl Params {
    pub fn new(geometry: &Geometry, options: &Options) -> Result<Self> {
        options::check("ssimulacra2", options, OPTIONS)?;
        let matrix = color::YuvMatrix::from_option(options::get_int(options, OPTIONS, "yuv_matrix")?)?;
        Ok(Params { matrix, geometry: *geometry })
    }
}

/// The fork's scale count (`kNumScales`).
pub const NUM_SCALES: usize = 6;

/// The (width, height) of every scale the fork scores for a `width` x
/// `height` frame: scale 0 is the frame, each next one `(w + 1) / 2` by
/// `(h + 1) / 2` (`downsample_2x2`), and the loop stops before a scale
/// narrower or shorter than 8 pixels (`extract`: `if (cw < 8u || ch < 8u)
/// break;`). A frame smaller than 8x8 has no scale at all and scores 100.
pub fn scales(width: usize, height: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(NUM_SCALES);
    let (mut w, mut h) = (width, height);
    while out.len() < NUM_SCALES && w >= 8 && h >= 8 {
        out.push((w, h));
        (w, h) = (w.div_ceil(2), h.div_ceil(2));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_halve_rounding_up_and_stop_below_eight() {
        assert_eq!(scales(200, 184), [(200, 184), (100, 92), (50, 46), (25, 23), (13, 12), (7, 6)][..5]);
        assert_eq!(scales(1920, 1080), [(1920, 1080), (960, 540), (480, 270), (240, 135), (120, 68), (60, 34)]);
        assert_eq!(scales(15, 64), [(15, 64), (8, 32)]);
        assert_eq!(scales(8, 8), [(8, 8)]);
        assert!(scales(7, 1000).is_empty());
    }

    #[test]
    fn four_zero_zero_is_refused_and_options_are_checked() {
        let g = |chroma| Geometry { width: 64, height: 64, bit_depth: 8, chroma };
        assert!(refuses(&g(Chroma::Yuv400), &Options::new()).unwrap().contains("4:0:0"));
        assert!(refuses(&g(Chroma::Yuv420), &Options::new()).is_none());
        let e = SSIMULACRA2.cpu_extractor(&g(Chroma::Yuv400), &Options::new()).err().expect("refused");
        assert!(e.to_string().starts_with("ssimulacra2 does not take 64x64 8-bit 400"), "{e}");
        let opt = |v: serde_json::Value| Options::from([("yuv_matrix".to_string(), v)]);
        assert!(Params::new(&g(Chroma::Yuv444), &opt(3.into())).is_ok());
        let e = Params::new(&g(Chroma::Yuv444), &opt(4.into())).unwrap_err().to_string();
        assert!(e.contains("outside its range [0, 3]"), "{e}");
        let e = Params::new(&g(Chroma::Yuv444), &opt(1.5.into())).unwrap_err().to_string();
        assert!(e.contains("must be like its default 0"), "{e}");
        let e = Params::new(&g(Chroma::Yuv444), &Options::from([("yuv_matrx".to_string(), 1.into())]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean `yuv_matrix`"), "{e}");
    }
}
