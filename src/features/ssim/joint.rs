//! float_ssim and float_ms_ssim in one pass, where they share work.
//!
//! At float_ssim's scale 1 its SSIM map is float_ms_ssim's first: the same
//! luma as floats, the same 11x11 Gaussian, the same constants, so the same
//! per-pixel terms; float_ssim wants their `l c s` product (and with
//! `enable_lcs` the l, c and s means, which float_ms_ssim's first scale has
//! too). Alone, each feature converts the lumas and filters them at full
//! size; together, one pass does it once and the first map also adds (on
//! GPUs: writes) the product beside the three terms. On lavapipe the
//! full-size filters are most of both features' time (issue 14's anchor);
//! on the CPU float_ssim's whole reference. Every metric is its alone bits:
//! a term is the same operations whatever else a map adds or writes, and
//! each mean is its own sum. Larger pictures (float_ssim's automatic scale
//! above 1 from 384 rows and columns) have nothing to share: each feature
//! runs alone.

use super::core::Want;
use super::float_ssim::{self, SSIM};
use super::gpu::{Metric, Shape, SsimGpu, Totals};
use super::ms_ssim::{self, MS_SSIM, MsSsimCpu};
use crate::backend::gpu::Gpu;
use crate::features::gpu::GpuExtractor;
use crate::features::{Extractor, JointImpl, Options};
use crate::fixture::{Frame, Geometry};
use crate::scores::Scores;
use anyhow::{Result, bail, ensure};
use std::sync::Arc;

/// The joint pass ([`crate::features::JointImpl`]).
pub static JOINT: JointImpl = JointImpl { features: &[SSIM, MS_SSIM], shares, cpu: cpu_extractor, gpu: gpu_extractor };

/// Whether both features take the geometry and float_ssim's scale is 1
/// (its options as given; each feature's own errors come from its alone
/// pass).
pub fn shares(geometry: &Geometry, options: &[&Options]) -> bool {
    let [ssim_options, ms_options] = options else { return false };
    let Ok(config) = float_ssim::Config::options(ssim_options) else { return false };
    let (w, h) = geometry.plane_dims(0);
    config.scale(w, h) == 1
        && float_ssim::refuses(geometry, ssim_options).is_none()
        && ms_ssim::refuses(geometry, ms_options).is_none()
        && ms_ssim::Config::options(ms_options).is_ok()
}

/// The CPU pass: float_ms_ssim's reference with its first scale also
/// adding the `l c s` products (`_iqa_ssim` computes every term of a row
/// whatever it adds: `core::iqa_ssim`), float_ssim's sums at scale 1.
pub struct JointCpu {
    ms: MsSsimCpu,
    ssim_config: float_ssim::Config,
    ssim_max_db: f64,
}

impl Extractor for JointCpu {
    fn extract(&mut self, index: usize, reference: &Frame, distorted: &Frame, out: &mut Scores) -> Result<()> {
        let sums = self.ms.scale_sums(reference, distorted, Want { ssim: true, lcs: true });
        let (ssim, lcs) = float_ssim::means(&sums[0]);
        float_ssim::record(&self.ssim_config, self.ssim_max_db, ssim, lcs, index, out);
        self.ms.record(&sums, index, out)
    }
}

/// The CPU pass of both features, float_ssim's options first.
pub fn cpu_extractor(geometry: &Geometry, options: &[&Options]) -> Result<Box<dyn Extractor>> {
    ensure!(shares(geometry, options), "float_ssim and float_ms_ssim share no work at {geometry} with these options");
    let [ssim_options, ms_options] = options else { bail!("the joint SSIM pass takes two features' options") };
    let ssim_config = float_ssim::Config::options(ssim_options)?;
    let ssim_max_db = super::max_db(ssim_config.clip_db, geometry);
    Ok(Box::new(JointCpu { ms: MsSsimCpu::new(geometry, ms_options)?, ssim_config, ssim_max_db }))
}

/// The GPU pass of both features, float_ssim's options first.
pub fn gpu_extractor(gpu: Arc<dyn Gpu>, geometry: &Geometry, options: &[&Options]) -> Result<Box<dyn Extractor>> {
    gpu_pipeline(gpu, geometry, options, Totals::Decide, None)
}

/// [`gpu_extractor`] with the totals made as `totals` says, in `shape`
/// (`None`: as [`super::gpu::shape_for`] chooses).
pub fn gpu_pipeline(
    gpu: Arc<dyn Gpu>,
    geometry: &Geometry,
    options: &[&Options],
    totals: Totals,
    shape: Option<Shape>,
) -> Result<Box<dyn Extractor>> {
    ensure!(shares(geometry, options), "float_ssim and float_ms_ssim share no work at {geometry} with these options");
    let [ssim_options, ms_options] = options else { bail!("the joint SSIM pass takes two features' options") };
    let ssim_config = float_ssim::Config::options(ssim_options)?;
    let ms_config = ms_ssim::Config::options(ms_options)?;
    let (w, h) = geometry.plane_dims(0);
    // float_ms_ssim's plan, its first map also writing float_ssim's product
    // (and its l, which float_ms_ssim may leave out, where float_ssim's
    // enable_lcs records it), in the maps' metric order.
    let mut plan = ms_ssim::gpu_plan(w, h, ms_config.lcs);
    let first = &plan.maps[0].1;
    plan.maps[0].1 = [Metric::Ssim, Metric::L, Metric::C, Metric::S]
        .into_iter()
        .filter(|m| *m == Metric::Ssim || (*m == Metric::L && ssim_config.lcs) || first.contains(m))
        .collect();
    let ssim_max_db = super::max_db(ssim_config.clip_db, geometry);
    let ms_max_db = super::max_db(ms_config.clip_db, geometry);
    let record = move |means: &[[Option<f32>; 4]], index: usize, out: &mut Scores| {
        float_ssim::record_map(&ssim_config, ssim_max_db, means[0], index, out)?;
        ms_ssim::record_maps(&ms_config, ms_max_db, means, index, out)
    };
    let pipeline = SsimGpu::new(&gpu, geometry, plan, totals, shape, Box::new(record))?;
    GpuExtractor::boxed(gpu, pipeline)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::Chroma;

    fn g(width: u32, height: u32) -> Geometry {
        Geometry { width, height, bit_depth: 8, chroma: Chroma::Yuv420 }
    }

    #[test]
    fn shares_only_at_float_ssims_scale_one_where_both_take_the_picture() {
        let none = Options::new();
        assert!(shares(&g(576, 324), &[&none, &none]));
        // float_ssim's automatic scale is 2 from 384 rows and columns.
        assert!(!shares(&g(1920, 1080), &[&none, &none]));
        // float_ms_ssim refuses pictures below 176.
        assert!(!shares(&g(200, 150), &[&none, &none]));
        let mut scale2 = Options::new();
        scale2.insert("scale".into(), 2.into());
        assert!(!shares(&g(576, 324), &[&scale2, &none]));
        let mut scale1 = Options::new();
        scale1.insert("scale".into(), 1.into());
        assert!(shares(&g(1920, 1080), &[&scale1, &none]));
        assert!(!shares(&g(576, 324), &[&none]));
    }
}
