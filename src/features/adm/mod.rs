//! ADM, the detail loss measure (libvmaf integer_adm.c and float_adm.c +
//! adm.c + adm_tools.c): both lumas through a Daubechies db2 wavelet over
//! four scales; at each scale the distorted detail bands are decoupled into
//! a part restored from the reference and an additive part, weighted by a
//! contrast sensitivity function, masked by the neighbourhood's contrast,
//! and summed as cubes. `adm` is libvmaf's fixed-point version, `float_adm`
//! its floating-point one.
//!
//! Layout: [`csf`] (the CSF models both use), [`geometry`] (scales and the
//! border regions), [`integer`] and [`float`] (each: its option table, CPU
//! reference and the host side shared with the GPU), [`gpu`] (the one host
//! pipeline the three GPU backends run, for both features).

pub mod csf;
pub mod float;
pub mod geometry;
pub mod gpu;
pub mod integer;

use super::options::{self, OptionDef};
use super::{FeatureImpl, Options};
use crate::fixture::Geometry;
use anyhow::Result;

pub static ADM: FeatureImpl = FeatureImpl {
    name: "adm",
    options: integer::OPTIONS,
    metrics: |options| Ok(integer::Config::new(options)?.metric_names()),
    cpu: integer::cpu_extractor,
    gpu: Some(gpu::integer_extractor),
    kernels: gpu::INTEGER_KERNELS,
    temporal: false,
    chroma_metrics: &[],
    refuses: |geometry, _| refuses_below(geometry, integer::MIN_SIZE, "adm"),
};

pub static FLOAT_ADM: FeatureImpl = FeatureImpl {
    name: "float_adm",
    options: float::OPTIONS,
    metrics: |options| Ok(float::Config::new(options)?.metric_names()),
    cpu: float::cpu_extractor,
    gpu: Some(gpu::float_extractor),
    kernels: gpu::FLOAT_KERNELS,
    temporal: false,
    chroma_metrics: &[],
    refuses: |geometry, _| refuses_below(geometry, float::MIN_SIZE, "float_adm"),
};

/// Why `feature` has no score for frames of `geometry`: libvmaf's code
/// reads outside its buffers (undefined behaviour: garbage scores or a
/// crash) when a frame is smaller than `min` in either dimension, so there
/// is nothing defined to reproduce. See [`integer::MIN_SIZE`] and
/// [`float::MIN_SIZE`] for where the limit comes from.
fn refuses_below(geometry: &Geometry, min: u32, feature: &str) -> Option<String> {
    (geometry.width < min || geometry.height < min).then(|| {
        format!(
            "libvmaf's {feature} needs frames of at least {min}x{min} (this one is {}x{}): below that its \
             four-scale wavelet reads outside its buffers, so it has no defined score",
            geometry.width, geometry.height
        )
    })
}

/// The metric names for `bases` under `options`: libvmaf renames every
/// metric of the extractor's `provided_features` for a non-default feature
/// parameter (feature_name.c); a name in `plain` is emitted but not listed
/// there, so it is never renamed (float_adm's debug `adm`).
fn metric_names(bases: &[&str], plain: &[&str], options: &Options, table: &[OptionDef]) -> Vec<String> {
    bases
        .iter()
        .map(|b| if plain.contains(b) { b.to_string() } else { options::metric_name(b, options, table) })
        .collect()
}

/// The per-frame outputs both extractors compute (libvmaf's `score`,
/// `score_aim`, `score_num`, `score_den` and `scores[8]`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Outputs {
    pub adm: f64,
    pub aim: f64,
    pub num: f64,
    pub den: f64,
    /// (num, den) of each scale, as floats widened to double.
    pub scales: [(f64, f64); 4],
}

/// Records one frame's metrics, in the order libvmaf appends them. `names`
/// are the metric names of [`integer::Config::metric_names`] or
/// [`float::Config::metric_names`]: the 7 scores, then with `debug` the
/// debug metrics (`adm`, num, den, then num and den of each scale).
fn record(names: &[String], index: usize, o: &Outputs, adm3: f64, out: &mut crate::scores::Scores) {
    let s = &o.scales;
    let mut values = vec![o.adm, o.aim, adm3];
    values.extend(s.iter().map(|(n, d)| n / d));
    values.extend([o.adm, o.num, o.den]);
    values.extend(s.iter().flat_map(|(n, d)| [*n, *d]));
    for (name, value) in names.iter().zip(values) {
        out.record(name, index, value);
    }
}

/// Option helpers shared by both tables.
const fn double(name: &'static str, alias: &'static str, default: f64, min: f64, max: f64) -> OptionDef {
    OptionDef {
        name,
        alias: Some(alias),
        default: options::OptValue::Double(default),
        min: Some(min),
        max: Some(max),
        feature_param: true,
    }
}

const fn int(name: &'static str, alias: &'static str, default: i64, min: i64, max: i64) -> OptionDef {
    OptionDef {
        name,
        alias: Some(alias),
        default: options::OptValue::Int(default),
        min: Some(min as f64),
        max: Some(max as f64),
        feature_param: true,
    }
}

/// Reads an option the table declares; the table is the extractor's own,
/// so a failure here is a bug in this module, reported as an error.
fn opt_f64(options: &Options, table: &[OptionDef], name: &str) -> Result<f64> {
    options::get_double(options, table, name)
}

fn opt_i32(options: &Options, table: &[OptionDef], name: &str) -> Result<i32> {
    Ok(i32::try_from(options::get_int(options, table, name)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_below_the_minimum_are_refused_with_the_reason() {
        let g = |w, h| Geometry { width: w, height: h, bit_depth: 8, chroma: crate::fixture::Chroma::Yuv420 };
        assert!((ADM.refuses)(&g(33, 33), &Options::new()).is_none());
        let why = (ADM.refuses)(&g(32, 100), &Options::new()).unwrap();
        assert!(why.contains("at least 33x33") && why.contains("32x100"), "{why}");
        assert!((FLOAT_ADM.refuses)(&g(17, 17), &Options::new()).is_none());
        assert!((FLOAT_ADM.refuses)(&g(100, 16), &Options::new()).is_some());
    }
}
