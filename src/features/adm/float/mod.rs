//! `float_adm` (libvmaf float_adm.c, adm.c `compute_adm`, adm_tools.c):
//! ADM in single precision. The per-pixel steps and each row's sums run in
//! f32 in libvmaf's order (a few products in double, as its C promotes
//! them), so the GPU kernels, which repeat that order with every operation
//! rounded on its own, give the same bits; the rows are added and the
//! scores finished on the host by [`finish`], for the CPU and the GPUs.

pub mod cm;
pub mod cpu;
pub mod decouple;
pub mod dwt;
pub mod powf;
pub mod rcp;

use super::csf;
use super::geometry::{Scale, scales};
use super::{Outputs, double, int, metric_names, opt_f64, opt_i32};
use crate::features::Options;
use crate::features::options::{self, OptionDef};
use crate::scores::Scores;
use anyhow::Result;

pub use cpu::cpu_extractor;

/// float_adm.c's option table, in its order (`adm_ref_display_height`'s
/// alias is `rdf` there, not `rdh`).
pub static OPTIONS: &[OptionDef] = &[
    OptionDef::flag("debug", false),
    double("adm_enhn_gain_limit", "egl", 100.0, 1.0, 100.0),
    double("adm_norm_view_dist", "nvd", 3.0, 0.75, 24.0),
    double("adm_noise_weight", "nw", 0.03125, 0.0, 1500.0),
    double("adm_csf_scale", "scf", 1.0, 0.0, 50.0),
    double("adm_csf_diag_scale", "scfd", 1.0, 0.0, 50.0),
    int("adm_ref_display_height", "rdf", 1080, 1, 4320),
    int("adm_csf_mode", "csf", 0, 0, 9),
    int("adm_bypass_cm", "bcm", 0, 0, 1),
    OptionDef { alias: Some("aah"), feature_param: true, ..OptionDef::flag("adm_adm3_apply_hm", false) },
    double("adm_p_norm", "apn", 3.0, 1.0, 20.0),
    double("adm_dlm_weight", "dlmw", 0.5, 0.0, 1.0),
    double("adm_min_val", "min", 0.0, 0.0, 1.0),
    double("adm_f1s0", "f1s0", -1.0, -1.0, 10.0),
    double("adm_f1s1", "f1s1", -1.0, -1.0, 10.0),
    double("adm_f1s2", "f1s2", -1.0, -1.0, 10.0),
    double("adm_f1s3", "f1s3", -1.0, -1.0, 10.0),
    double("adm_f2s0", "f2s0", -1.0, -1.0, 10.0),
    double("adm_f2s1", "f2s1", -1.0, -1.0, 10.0),
    double("adm_f2s2", "f2s2", -1.0, -1.0, 10.0),
    double("adm_f2s3", "f2s3", -1.0, -1.0, 10.0),
    // libvmaf's default, -1 (no scale skipped), is outside its own range:
    // it cannot be given explicitly.
    int("adm_skip_aim_scale", "sasc", -1, 0, 3),
    OptionDef { alias: Some("ssz"), feature_param: true, ..OptionDef::flag("adm_skip_scale0", false) },
];

/// The smallest width and height libvmaf's float ADM is defined for: its
/// masking reads columns and rows `w - 2` and `1` of every band, so the
/// last scale's bands (ceil(n / 16)) need 2 samples, n >= 17. (At 16x16
/// libvmaf prints adm2 = 2.77.)
pub const MIN_SIZE: u32 = 17;

const METRICS: [&str; 18] = [
    "adm2",
    "aim",
    "adm3",
    "adm_scale0",
    "adm_scale1",
    "adm_scale2",
    "adm_scale3",
    // debug=true:
    "adm",
    "adm_num",
    "adm_den",
    "adm_num_scale0",
    "adm_den_scale0",
    "adm_num_scale1",
    "adm_den_scale1",
    "adm_num_scale2",
    "adm_den_scale2",
    "adm_num_scale3",
    "adm_den_scale3",
];

/// `ADM_CSF_MODE_*` of adm_options.h; modes 3 to 9 are accepted and mean
/// Watson's, as the `else` branches of adm_tools.c read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CsfMode {
    Watson97,
    Barten,
    Adm,
}

#[derive(Debug, Clone)]
pub struct Config {
    pub debug: bool,
    pub enhn_gain_limit: f64,
    pub norm_view_dist: f64,
    pub noise_weight: f64,
    pub csf_scale: f64,
    pub csf_diag_scale: f64,
    pub ref_display_height: i32,
    pub csf_mode: CsfMode,
    pub bypass_cm: bool,
    pub adm3_apply_hm: bool,
    pub p_norm: f64,
    pub dlm_weight: f64,
    pub min_val: f64,
    /// `adm_f1s0..3` and `adm_f2s0..3`: a factor >= 0 replaces the CSF's.
    pub f1: [f64; 4],
    pub f2: [f64; 4],
    pub skip_aim_scale: i32,
    pub skip_scale0: bool,
    names: Vec<String>,
}

impl Config {
    pub fn new(options: &Options) -> Result<Self> {
        options::check("float_adm", options, OPTIONS)?;
        let f = |name| opt_f64(options, OPTIONS, name);
        let b = |name| options::get_bool(options, OPTIONS, name);
        let i = |name| opt_i32(options, OPTIONS, name);
        let debug = b("debug")?;
        let bases = if debug { &METRICS[..] } else { &METRICS[..7] };
        Ok(Config {
            debug,
            enhn_gain_limit: f("adm_enhn_gain_limit")?,
            norm_view_dist: f("adm_norm_view_dist")?,
            noise_weight: f("adm_noise_weight")?,
            csf_scale: f("adm_csf_scale")?,
            csf_diag_scale: f("adm_csf_diag_scale")?,
            ref_display_height: i("adm_ref_display_height")?,
            csf_mode: match i("adm_csf_mode")? {
                1 => CsfMode::Barten,
                2 => CsfMode::Adm,
                _ => CsfMode::Watson97,
            },
            bypass_cm: i("adm_bypass_cm")? != 0,
            adm3_apply_hm: b("adm_adm3_apply_hm")?,
            p_norm: f("adm_p_norm")?,
            dlm_weight: f("adm_dlm_weight")?,
            min_val: f("adm_min_val")?,
            f1: [f("adm_f1s0")?, f("adm_f1s1")?, f("adm_f1s2")?, f("adm_f1s3")?],
            f2: [f("adm_f2s0")?, f("adm_f2s1")?, f("adm_f2s2")?, f("adm_f2s3")?],
            skip_aim_scale: i("adm_skip_aim_scale")?,
            skip_scale0: b("adm_skip_scale0")?,
            // float_adm.c does not list "adm" among its provided features.
            names: metric_names(bases, &["adm"], options, OPTIONS),
        })
    }

    pub fn metric_names(&self) -> Vec<String> {
        self.names.clone()
    }

    /// The CSF factors of `scale` (h and v, d), as every adm_tools.c
    /// function computes them: the model's, then the `adm_f*s*` overrides.
    pub fn factors(&self, scale: usize) -> [f32; 3] {
        let (nvd, rdh) = (self.norm_view_dist, self.ref_display_height);
        let (mut f1, mut f2) = match self.csf_mode {
            CsfMode::Barten => (
                csf::barten_csf(scale, nvd, rdh, csf::CSF_LUMINANCE, self.csf_scale),
                csf::barten_csf(scale, nvd, rdh, csf::CSF_LUMINANCE, self.csf_diag_scale),
            ),
            CsfMode::Adm => (csf::adm_native_csf(scale, nvd, rdh, 0), csf::adm_native_csf(scale, nvd, rdh, 45)),
            CsfMode::Watson97 => {
                (1.0f32 / csf::dwt_quant_step(scale, 1, nvd, rdh), 1.0f32 / csf::dwt_quant_step(scale, 2, nvd, rdh))
            }
        };
        if self.f1[scale] >= 0.0 {
            f1 = self.f1[scale] as f32;
        }
        if self.f2[scale] >= 0.0 {
            f2 = self.f2[scale] as f32;
        }
        [f1, f1, f2]
    }

    /// `adm_p_norm == 3.0`: the sums take cubes as products, else powf.
    pub fn cubes(&self) -> bool {
        self.p_norm == 3.0
    }

    /// float_adm.c's `adm3`: the DLM/AIM blend (or their harmonic mean
    /// with `adm_adm3_apply_hm`), at least `adm_min_val`.
    pub fn adm3(&self, o: &Outputs) -> f64 {
        let v = if self.adm3_apply_hm {
            2.0 * o.adm * o.aim / (o.adm + o.aim)
        } else {
            o.adm * self.dlm_weight + (1.0 - o.aim) * (1.0 - self.dlm_weight)
        };
        if v > self.min_val { v } else { self.min_val }
    }

    pub fn record(&self, index: usize, o: &Outputs, out: &mut Scores) {
        super::record(&self.names, index, o, self.adm3(o), out);
    }
}

/// One band row's f32 sums (`accum_inner_*`): the masked restored bands
/// (num: h, v, d), the masked additive bands (aim: h, v, d) and the
/// reference's CSF-weighted bands (den: h, v, d), each a cube (or the p-th
/// power) summed left to right.
pub type RowSums = [f32; 9];

/// The per-scale constants the CPU and the kernels share.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScaleParams {
    pub scale: usize,
    pub geometry: Scale,
    pub rfactor: [f32; 3],
}

impl ScaleParams {
    pub fn all(config: &Config, width: usize, height: usize) -> [ScaleParams; 4] {
        let s = scales(width, height);
        [0, 1, 2, 3].map(|k| ScaleParams { scale: k, geometry: s[k], rfactor: config.factors(k) })
    }
}

/// `get_noise_constant`: powf(w * h * weight, 1.0f / p).
fn noise_constant(w: usize, h: usize, weight: f64, p: f64) -> f32 {
    (((w * h) as f64 * weight) as f32).powf((1.0 / p) as f32)
}

/// The ends of `adm_cm_s` (num, aim) and `adm_csf_den_scale_s` (den): the
/// rows added in order, the p-th roots, the noise constants.
fn finish_scale(config: &Config, p: &ScaleParams, rows: &[RowSums]) -> (f32, f32, f32) {
    let region = p.geometry.cm();
    let (w, h) = (region.cols(), region.rows());
    let exponent = (1.0 / config.p_norm) as f32;
    let sum = |k: usize| rows.iter().fold(0.0f32, |acc, r| acc + r[k]);
    let part = |k: usize, weight: f64| sum(k).powf(exponent) + noise_constant(w, h, weight, config.p_norm);
    let num = part(0, config.noise_weight) + part(1, config.noise_weight) + part(2, config.noise_weight);
    let aim = part(3, 0.0) + part(4, 0.0) + part(5, 0.0);
    let den = part(6, config.noise_weight) + part(7, config.noise_weight) + part(8, config.noise_weight);
    (num, aim, den)
}

/// compute_adm's last steps: every scale's (num, den), the totals, adm2 and
/// aim. `rows[s]` are scale `s`'s row sums (none for a skipped scale 0).
pub fn finish(
    config: &Config,
    params: &[ScaleParams; 4],
    rows: [&[RowSums]; 4],
    width: usize,
    height: usize,
) -> Outputs {
    let (mut num, mut den, mut aim_num, mut aim_den) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let mut out = Outputs::default();
    for s in 0..4 {
        let (n, a, d) =
            if s == 0 && config.skip_scale0 { (0.0, 0.0, 1e-10f32) } else { finish_scale(config, &params[s], rows[s]) };
        num += f64::from(n);
        den += f64::from(d);
        if config.skip_aim_scale != s as i32 {
            aim_den += f64::from(d);
            aim_num += f64::from(a);
        }
        out.scales[s] = (f64::from(n), f64::from(d));
    }
    let limit = 1e-10 * (width * height) as f64 / (1920.0 * 1080.0);
    let num = if num < limit { 0.0 } else { num };
    let den = if den < limit { 0.0 } else { den };
    // With den 0 libvmaf leaves score_aim unset; 0 here (see integer::finish).
    let (adm, aim) = if den == 0.0 {
        (1.0, 0.0)
    } else {
        let ratio = aim_num / aim_den;
        (num / den, if ratio < 1.0 { ratio } else { 1.0 })
    };
    Outputs { adm, aim, num, den, ..out }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_debug_adm_metric_is_never_renamed() {
        let o: Options =
            serde_json::from_value(json!({"debug": true, "adm_p_norm": 2.5, "adm_skip_aim_scale": 2})).unwrap();
        let names = Config::new(&o).unwrap().metric_names();
        assert_eq!(names[0], "adm2_apn_2.5_sasc_2");
        assert_eq!(names[7], "adm");
        assert_eq!(names[8], "adm_num_apn_2.5_sasc_2");
    }

    #[test]
    fn factor_overrides_replace_the_csf() {
        let o: Options = serde_json::from_value(json!({"adm_f1s0": 0.5, "adm_f2s3": 0.0})).unwrap();
        let c = Config::new(&o).unwrap();
        assert_eq!(c.factors(0)[..2], [0.5, 0.5]);
        assert_eq!(c.factors(3)[2], 0.0);
        assert_eq!(c.factors(1), Config::new(&Options::new()).unwrap().factors(1));
    }
}
