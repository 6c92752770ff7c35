//! The CPU reference: cambi.c `extract` on one frame pair, operation for
//! operation where the order of float operations matters.

use super::cvalues::{CValueScratch, c_values};
use super::mask::spatial_mask;
use super::mode::{decimate, filter_mode};
use super::params::{ImagePlan, Plan};
use super::pooling::spatial_pooling;
use super::preprocess::{preprocess, validate};
use super::tables::{NUM_SCALES, SCALE_WEIGHTS, reciprocal_lut};
use super::{Names, final_scores};
use crate::features::Extractor;
use crate::fixture::Frame;
use crate::scores::Scores;
use anyhow::{Context, Result};

pub struct CambiCpu {
    plan: Plan,
    names: Names,
    lut: Vec<f32>,
    work: Work,
}

/// Buffers kept from frame to frame.
#[derive(Default)]
struct Work {
    image: Vec<u16>,
    converted: Vec<u16>,
    mask: Vec<u8>,
    half_image: Vec<u16>,
    half_mask: Vec<u8>,
    mask_sums: Vec<u16>,
    mode_rows: Vec<u16>,
    c: Vec<f32>,
    cvalues: CValueScratch,
    pooling: Vec<f32>,
}

impl CambiCpu {
    pub fn new(plan: Plan, names: Names) -> Self {
        CambiCpu { plan, names, lut: reciprocal_lut(), work: Work::default() }
    }

    /// cambi.c `preprocess_and_extract_cambi` + `cambi_score`.
    fn score(&mut self, frame: &Frame, image: &ImagePlan) -> Result<f64> {
        let plane = frame.plane(0);
        let bit_depth = frame.geometry.bit_depth;
        validate(plane, bit_depth)?;
        let wk = &mut self.work;
        preprocess(plane, bit_depth, image, self.plan.enc_bitdepth, &mut wk.image, &mut wk.converted);
        let (mut w, mut h) = (image.width, image.height);
        spatial_mask(&wk.image, w, h, image.mask_index, &mut wk.mask, &mut wk.mask_sums);
        let mut per_scale = [0.0f64; NUM_SCALES];
        for (scale, pooled) in per_scale.iter_mut().enumerate() {
            if scale > 0 || image.high_res_speedup {
                decimate(&wk.image, w, h, &mut wk.half_image);
                (w, h) = decimate(&wk.mask, w, h, &mut wk.half_mask);
                std::mem::swap(&mut wk.image, &mut wk.half_image);
                std::mem::swap(&mut wk.mask, &mut wk.half_mask);
            }
            debug_assert_eq!((w, h), image.scales[scale]);
            filter_mode(&mut wk.image, w, h, &mut wk.mode_rows);
            c_values(
                &wk.image,
                &wk.mask,
                w,
                h,
                image.pad(),
                &self.plan.contrast,
                &self.lut,
                &mut wk.cvalues,
                &mut wk.c,
            );
            *pooled = spatial_pooling(&mut wk.c[..w * h], image.topk_counts[scale], &mut wk.pooling);
        }
        Ok(weight_scales(&per_scale, image.pixels_in_window()))
    }
}

/// cambi.c `weight_scores_per_scale`: the weighted sum of the scales'
/// pooled c-values, in scale order, over the window's pixel count.
pub fn weight_scales(per_scale: &[f64; NUM_SCALES], pixels_in_window: u16) -> f64 {
    let mut score = 0.0f64;
    for (s, w) in per_scale.iter().zip(SCALE_WEIGHTS) {
        score += s * f64::from(w);
    }
    score / f64::from(pixels_in_window)
}

impl Extractor for CambiCpu {
    fn extract(&mut self, index: usize, reference: &Frame, distorted: &Frame, out: &mut Scores) -> Result<()> {
        let enc = self.plan.enc.clone();
        // A refused frame is named as the GPU pipelines name it (features::gpu).
        let dist = self.score(distorted, &enc).with_context(|| format!("frame {index}"))?;
        let src = if self.plan.settings.full_ref {
            let plan = self.plan.src.clone();
            Some(self.score(reference, &plan).with_context(|| format!("frame {index}"))?)
        } else {
            None
        };
        final_scores(&self.names, self.plan.settings.max_val, dist, src, index, out);
        Ok(())
    }
}
