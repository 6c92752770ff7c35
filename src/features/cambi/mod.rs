//! `cambi` (libvmaf cambi.c): the contrast-aware multiscale banding index
//! of the distorted luma, and with `full_ref` of the reference too.
//!
//! One module per stage: [`params`] (the option table and init),
//! [`luminance`] (EOTFs and visibility thresholds), [`preprocess`]
//! (10-bit resampling, anti-dithering), [`mask`] (the spatial mask),
//! [`mode`] (decimation and the mode filter), [`cvalues`] (the per-window
//! histograms and c-values), [`pooling`] (top-k pooling); [`cpu`] runs
//! them as libvmaf does, [`gpu`] is the pipeline every GPU backend runs.

pub mod cpu;
pub mod cvalues;
pub mod gpu;
pub mod luminance;
pub mod mask;
pub mod mode;
pub mod params;
pub mod pooling;
pub mod preprocess;
pub mod tables;

use super::{FeatureImpl, Options, options};
use crate::scores::Scores;

pub static CAMBI: FeatureImpl = FeatureImpl {
    name: "cambi",
    options: params::OPTIONS,
    metrics: params::metrics,
    cpu: |geometry, options| {
        let plan = params::plan(geometry, options)?;
        Ok(Box::new(cpu::CambiCpu::new(plan, Names::new(options))))
    },
    gpu: Some(|gpu, geometry, options| {
        let plan = params::plan(geometry, options)?;
        let pipeline = gpu::CambiGpu::new(gpu.as_ref(), plan, Names::new(options), *geometry)?;
        super::gpu::GpuExtractor::boxed(gpu, pipeline)
    }),
    kernels: &gpu::KERNELS,
    temporal: false,
    chroma_metrics: &[],
    refuses: params::refuses,
};

/// The names cambi records its scores under.
#[derive(Debug, Clone)]
pub struct Names {
    /// `Cambi_feature_cambi_score`, aliased `cambi`, renamed by the feature
    /// parameters.
    pub cambi: String,
}

impl Names {
    pub fn new(options: &Options) -> Self {
        Names { cambi: options::metric_name("cambi", options, params::OPTIONS) }
    }
}

/// cambi.c `extract`'s output: each score clipped to `cambi_max_val`, and
/// with the reference's score the full-reference difference (never below 0).
pub fn final_scores(names: &Names, max_val: f64, dist: f64, src: Option<f64>, index: usize, out: &mut Scores) {
    let clip = |v: f64| if v < max_val { v } else { max_val };
    out.record(&names.cambi, index, clip(dist));
    if let Some(src) = src {
        out.record("cambi_source", index, clip(src));
        let diff = dist - src;
        out.record("cambi_full_reference", index, clip(if 0.0 > diff { 0.0 } else { diff }));
    }
}
