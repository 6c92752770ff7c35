//! `adm` (libvmaf integer_adm.c): ADM in fixed point. Scale 0 works on
//! 16-bit bands (`adm_dwt2_8/16`, `adm_decouple`, `adm_csf`, `adm_cm`,
//! `adm_csf_den_scale`), scales 1 to 3 on 32-bit ones
//! (`adm_dwt2_s123_combined`, `adm_decouple_s123`, `i4_adm_csf`,
//! `i4_adm_cm`, `adm_csf_den_s123`). Every band value is an integer, so the
//! GPU kernels reproduce them exactly; the sums are per band row, each
//! shifted with rounding before the rows are added, and only the last steps
//! (cube roots, ratios) are floating point, done on the host by [`finish`]
//! for the CPU and the GPUs alike.

pub mod cm;
pub mod cpu;
pub mod decouple;
pub mod dwt;

use super::csf;
use super::geometry::{Region, Scale, scales};
use super::{Outputs, double, int, metric_names, opt_f64, opt_i32};
use crate::features::Options;
use crate::features::options::{self, OptionDef};
use crate::scores::Scores;
use anyhow::{Result, bail};

pub use cpu::cpu_extractor;

/// integer_adm.c's option table, in its order.
pub static OPTIONS: &[OptionDef] = &[
    OptionDef::flag("debug", false),
    double("adm_csf_scale", "scf", 1.0, 0.0, 50.0),
    double("adm_csf_diag_scale", "scfd", 1.0, 0.0, 50.0),
    double("adm_dlm_weight", "dlmw", 0.5, 0.0, 1.0),
    double("adm_enhn_gain_limit", "egl", 100.0, 1.0, 100.0),
    double("adm_norm_view_dist", "nvd", 3.0, 0.75, 24.0),
    int("adm_ref_display_height", "rdh", 1080, 1, 4320),
    int("adm_csf_mode", "csf", 0, 0, 3),
    double("adm_noise_weight", "nw", 0.03125, 0.0, 1500.0),
    OptionDef::flag("adm_skip_aim", false),
    OptionDef { alias: Some("ssz"), feature_param: true, ..OptionDef::flag("adm_skip_scale0", false) },
    double("adm_min_val", "min", 0.0, 0.0, 1.0),
];

/// The smallest width and height libvmaf's integer ADM is defined for. Its
/// wavelet index table (`dwt2_src_indices_filt`) is only right for inputs
/// of 5 samples or more: at 3 or 4 it reads row (or column) -1, at 1 or 2
/// it writes past its index buffers. Scale 3 transforms a plane of
/// ceil(n / 8) samples, so n must be at least 33. (At 32x32 libvmaf prints
/// scores that differ from float_adm's by 0.06, at 16x16 it crashes.)
pub const MIN_SIZE: u32 = 33;

/// The basic metrics, then the `debug` ones (integer_adm.c `extract`).
const METRICS: [&str; 7] = [
    "integer_adm2",
    "integer_aim",
    "integer_adm3",
    "integer_adm_scale0",
    "integer_adm_scale1",
    "integer_adm_scale2",
    "integer_adm_scale3",
];
const DEBUG_METRICS: [&str; 11] = [
    "integer_adm",
    "integer_adm_num",
    "integer_adm_den",
    "integer_adm_num_scale0",
    "integer_adm_den_scale0",
    "integer_adm_num_scale1",
    "integer_adm_den_scale1",
    "integer_adm_num_scale2",
    "integer_adm_den_scale2",
    "integer_adm_num_scale3",
    "integer_adm_den_scale3",
];

/// `ADM_CSF_MODE_*` of integer_adm.h.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CsfMode {
    Watson97,
    Barten,
    BartenWatsonBlend,
    BartenWatsonBlendMae,
}

/// The extractor's options, checked.
#[derive(Debug, Clone)]
pub struct Config {
    pub debug: bool,
    pub csf_scale: f64,
    pub csf_diag_scale: f64,
    pub dlm_weight: f64,
    pub enhn_gain_limit: f64,
    pub norm_view_dist: f64,
    pub ref_display_height: i32,
    pub csf_mode: CsfMode,
    pub noise_weight: f64,
    pub skip_aim: bool,
    pub skip_scale0: bool,
    pub min_val: f64,
    names: Vec<String>,
}

impl Config {
    pub fn new(options: &Options) -> Result<Self> {
        options::check("adm", options, OPTIONS)?;
        let f = |name| opt_f64(options, OPTIONS, name);
        let b = |name| options::get_bool(options, OPTIONS, name);
        let config = Config {
            debug: b("debug")?,
            csf_scale: f("adm_csf_scale")?,
            csf_diag_scale: f("adm_csf_diag_scale")?,
            dlm_weight: f("adm_dlm_weight")?,
            enhn_gain_limit: f("adm_enhn_gain_limit")?,
            norm_view_dist: f("adm_norm_view_dist")?,
            ref_display_height: opt_i32(options, OPTIONS, "adm_ref_display_height")?,
            csf_mode: match opt_i32(options, OPTIONS, "adm_csf_mode")? {
                0 => CsfMode::Watson97,
                1 => CsfMode::Barten,
                2 => CsfMode::BartenWatsonBlend,
                _ => CsfMode::BartenWatsonBlendMae,
            },
            noise_weight: f("adm_noise_weight")?,
            skip_aim: b("adm_skip_aim")?,
            skip_scale0: b("adm_skip_scale0")?,
            min_val: f("adm_min_val")?,
            names: Vec::new(),
        };
        // integer_adm.c `extract` returns -EINVAL for every frame below
        // 3H at 1080 lines: its 16-bit pipeline cannot hold the lower
        // angular frequencies.
        let resolution = config.norm_view_dist * f64::from(config.ref_display_height);
        if resolution < 3.0 * 1080.0 {
            bail!(
                "adm: adm_norm_view_dist x adm_ref_display_height is {resolution}, below 3 x 1080: libvmaf's \
                 integer ADM refuses it (its 16-bit pipeline cannot handle lower angular frequencies; \
                 float_adm can)"
            );
        }
        let mut bases: Vec<&str> = METRICS.to_vec();
        if config.debug {
            bases.extend(DEBUG_METRICS);
        }
        Ok(Config { names: metric_names(&bases, &[], options, OPTIONS), ..config })
    }

    /// The metric names under these options, in the order [`super::record`]
    /// expects.
    pub fn metric_names(&self) -> Vec<String> {
        self.names.clone()
    }

    /// (factor1, factor2): the CSF factors of `scale` for the horizontal and
    /// vertical bands and for the diagonal one (the `factor1`/`factor2`
    /// prologue every integer_adm.c function repeats).
    pub fn factors(&self, scale: usize) -> (f32, f32) {
        let (nvd, rdh) = (self.norm_view_dist, self.ref_display_height);
        match self.csf_mode {
            CsfMode::Barten => (
                csf::barten_csf(scale, nvd, rdh, csf::CSF_LUMINANCE, self.csf_scale),
                csf::barten_csf(scale, nvd, rdh, csf::CSF_LUMINANCE, self.csf_diag_scale),
            ),
            CsfMode::BartenWatsonBlend | CsfMode::BartenWatsonBlendMae => {
                let mae = self.csf_mode == CsfMode::BartenWatsonBlendMae;
                (
                    csf::barten_watson_blend_csf(scale, 0, nvd, rdh, mae),
                    csf::barten_watson_blend_csf(scale, 1, nvd, rdh, mae),
                )
            }
            CsfMode::Watson97 => {
                (1.0f32 / csf::dwt_quant_step(scale, 1, nvd, rdh), 1.0f32 / csf::dwt_quant_step(scale, 2, nvd, rdh))
            }
        }
    }
}

/// x86-64's `cvttsd2si` into a 32-bit register, which GCC uses for C's
/// double-to-`uint16_t`/`int16_t` conversions: truncation toward zero, and
/// 0x80000000 for anything out of range. libvmaf converts its CSF factors
/// (and, for displays the blended CSF has no table for, the -22 it uses as
/// one) this way.
pub fn cvtt_i32(x: f64) -> i32 {
    if x.is_nan() || x >= 2147483648.0 || x <= -2147483649.0 { i32::MIN } else { x as i32 }
}

/// `cvttsd2si` into a 64-bit register, GCC's double-to-`uint32_t`.
pub fn cvtt_i64(x: f64) -> i64 {
    // Out of range or NaN: the "integer indefinite" value.
    if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&x) { x as i64 } else { i64::MIN }
}

/// `(uint32_t)pow(2, shift - 1)` with libvmaf's unsigned `shift`: 0 when
/// `shift` is 0 (`pow(2, 2^32 - 1)` is infinite, which converts to 0).
fn half(shift: u32) -> u32 {
    cvtt_i64(2f64.powf(f64::from(shift.wrapping_sub(1)))) as u32
}

/// `ceil(log2(n))` as libvmaf computes its shifts (glibc log2 in double).
fn ceil_log2(n: f64) -> f64 {
    n.log2().ceil()
}

/// The fixed-point constants of one scale, derived once per geometry and
/// options: what the CPU functions and the GPU kernels both use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScaleParams {
    pub scale: usize,
    pub geometry: Scale,
    /// The CSF factors as floats (h, v, d): cubed for the denominator.
    pub rfactor: [f32; 3],
    /// Scale 0: `i_rfactor` (a u16 each); scales 1-3: `(uint32_t)(f * 2^32)`.
    pub i_rfactor: [u32; 3],
    /// The masking sums' per-pixel cube shifts (h, v, d; scale 0 differs
    /// per band, scales 1-3 share one) and the per-row shift.
    pub cm_shift_cub: [u32; 3],
    pub cm_shift_inner: u32,
    /// The denominator's per-pixel cube shift (scales 1-3; 0 at scale 0)
    /// and per-row shift.
    pub den_shift_cub: u32,
    pub den_shift_accum: u32,
}

impl ScaleParams {
    pub fn new(config: &Config, scale: usize, geometry: Scale) -> Self {
        let (f1, f2) = config.factors(scale);
        let rfactor = [f1, f1, f2];
        let (bw, bh) = geometry.band();
        let den = geometry.cm();
        if scale == 0 {
            // adm_csf / adm_cm: the default display's factors are fixed.
            let default_display = (config.norm_view_dist * f64::from(config.ref_display_height) - 3.0 * 1080.0).abs()
                < 1.0e-8
                && config.csf_mode == CsfMode::Watson97;
            let i_rfactor = if default_display {
                [36453, 36453, 49417]
            } else {
                let conv = |f: f32, bits: i32| cvtt_i32(f64::from(f) * 2f64.powi(bits)) as u16;
                [conv(f1, 21), conv(f1, 21), conv(f2, 23)]
            };
            let bw = bw as f64;
            // adm_cm: (uint32_t)ceil(log2(w) - 4) (- 3 for the diagonal).
            let cub = |k: f64| cvtt_i64((bw.log2() - k).ceil()) as u32;
            // adm_csf_den_scale: a signed shift, at least 0.
            let accum = (((den.rows() * den.cols()) as f64).log2() - 20.0).ceil() as i32;
            ScaleParams {
                scale,
                geometry,
                rfactor,
                i_rfactor: i_rfactor.map(u32::from),
                cm_shift_cub: [cub(4.0), cub(4.0), cub(3.0)],
                cm_shift_inner: ceil_log2(bh as f64) as u32,
                den_shift_cub: 0,
                den_shift_accum: accum.max(0) as u32,
            }
        } else {
            let conv = |f: f32| cvtt_i64(f64::from(f) * 2f64.powi(32)) as u32;
            let cub = ceil_log2(bw as f64) as u32;
            ScaleParams {
                scale,
                geometry,
                rfactor,
                i_rfactor: rfactor.map(conv),
                cm_shift_cub: [cub; 3],
                cm_shift_inner: ceil_log2(bh as f64) as u32,
                den_shift_cub: ceil_log2(den.cols() as f64) as u32,
                den_shift_accum: ceil_log2(den.rows() as f64) as u32,
            }
        }
    }

    pub fn all(config: &Config, width: usize, height: usize) -> [ScaleParams; 4] {
        let s = scales(width, height);
        [0, 1, 2, 3].map(|k| ScaleParams::new(config, k, s[k]))
    }

    /// The rows and columns every sum covers.
    pub fn region(&self) -> Region {
        self.geometry.cm()
    }
}

/// One band row's raw sums, before the per-row shift: the masked cubes of
/// the restored bands (num: h, v, d), of the additive bands (aim: h, v, d),
/// and the reference's cubes (den: h, v, d; unsigned in libvmaf, kept here
/// as the same 64 bits).
pub type RowSums = [i64; 9];

/// The per-frame results of one scale: each row's [`RowSums`] over the
/// scale's region, top to bottom. At scale 0 with `adm_skip_scale0` the
/// scale has no rows and libvmaf's fixed num 0, den 1e-10 apply.
pub type ScaleRows<'a> = &'a [RowSums];

/// `(accum + 2^(shift-1)) >> shift` over the rows, as libvmaf adds each row's
/// sum into a 64-bit total: signed for the masking sums.
fn shifted_total(rows: ScaleRows, k: usize, shift: u32) -> i64 {
    let add = i64::from(half(shift));
    rows.iter().fold(0i64, |acc, r| acc.wrapping_add(r[k].wrapping_add(add) >> shift))
}

/// The same for the denominator's unsigned sums (`adm_csf_den_scale`: the
/// rounding term is 0 when the shift is).
fn shifted_total_u(rows: ScaleRows, k: usize, shift: u32, add: u64) -> u64 {
    rows.iter().fold(0u64, |acc, r| acc.wrapping_add((r[k] as u64).wrapping_add(add) >> shift))
}

/// powf(x, 1.0f / 3.0f), libvmaf's cube root (glibc powf).
fn cbrt(x: f32) -> f32 {
    x.powf(1.0f32 / 3.0)
}

/// One scale's (num, aim_num, den) from its rows (the ends of `adm_cm`,
/// `i4_adm_cm`, `adm_csf_den_scale` and `adm_csf_den_s123`).
fn finish_scale(config: &Config, p: &ScaleParams, rows: ScaleRows) -> (f32, f32, f32) {
    let region = p.region();
    let area = (region.rows() * region.cols()) as f64;
    let inner = p.cm_shift_inner;
    let totals: [i64; 6] = std::array::from_fn(|k| shifted_total(rows, k, inner));
    let to_float: [f32; 6] = std::array::from_fn(|k| {
        let band = k % 3;
        if p.scale == 0 {
            // (float)(accum / pow(2, 52 - shift_cub - shift_inner)), 57 for
            // the diagonal; the exponent is unsigned arithmetic.
            let base: u32 = if band == 2 { 57 } else { 52 };
            let e = base.wrapping_sub(p.cm_shift_cub[band]).wrapping_sub(inner);
            (totals[k] as f64 / 2f64.powf(f64::from(e))) as f32
        } else {
            // final_shift is a float, so the int64 sum is converted to
            // float before the (float) division.
            let base: u32 = [45, 39, 36][p.scale - 1];
            let e = base.wrapping_sub(p.cm_shift_cub[0]).wrapping_sub(inner);
            let final_shift = 2f64.powf(f64::from(e)) as f32;
            totals[k] as f32 / final_shift
        }
    });
    let noise = cbrt((area * config.noise_weight) as f32);
    let num = (cbrt(to_float[0]) + noise) + (cbrt(to_float[1]) + noise) + (cbrt(to_float[2]) + noise);
    let aim_noise = cbrt((area * 0.0) as f32);
    let aim = (cbrt(to_float[3]) + aim_noise) + (cbrt(to_float[4]) + aim_noise) + (cbrt(to_float[5]) + aim_noise);

    let (shift_csf, den_totals) = if p.scale == 0 {
        let shift = p.den_shift_accum;
        let add = if shift > 0 { 1u64 << (shift - 1) } else { 0 };
        let totals: [u64; 3] = std::array::from_fn(|k| shifted_total_u(rows, 6 + k, shift, add));
        (2f64.powi(18 - shift as i32), totals)
    } else {
        let shift = p.den_shift_accum;
        let totals: [u64; 3] = std::array::from_fn(|k| shifted_total_u(rows, 6 + k, shift, u64::from(half(shift))));
        let base: u32 = [32, 27, 23][p.scale - 1];
        (2f64.powf(f64::from(base.wrapping_sub(shift).wrapping_sub(p.den_shift_cub))), totals)
    };
    let den_noise = cbrt((area * config.noise_weight) as f32);
    let den: f32 = (0..3)
        .map(|k| {
            let csf = den_totals[k] as f64 / shift_csf * f64::from(p.rfactor[k]).powf(3.0);
            cbrt(csf as f32) + den_noise
        })
        .fold(0.0f32, |acc, v| acc + v);
    (num, aim, den)
}

/// integer_compute_adm's last steps and extract's scores: every scale's
/// (num, den), the totals, adm2 and aim. `rows[s]` are scale `s`'s rows
/// ([`ScaleRows`]).
pub fn finish(
    config: &Config,
    params: &[ScaleParams; 4],
    rows: [ScaleRows; 4],
    width: usize,
    height: usize,
) -> Outputs {
    let (mut num, mut den, mut aim_num) = (0.0f64, 0.0f64, 0.0f64);
    let mut out = Outputs::default();
    for s in 0..4 {
        let (n, a, d) = if s == 0 && config.skip_scale0 {
            (0.0f32, 0.0f32, 1e-10f32)
        } else {
            let (n, a, d) = finish_scale(config, &params[s], rows[s]);
            (n, if config.skip_aim { 0.0 } else { a }, d)
        };
        num += f64::from(n);
        den += f64::from(d);
        aim_num += f64::from(a);
        out.scales[s] = (f64::from(n), f64::from(d));
    }
    let limit = 1e-10 * (width * height) as f64 / (1920.0 * 1080.0);
    let num = if num < limit { 0.0 } else { num };
    let den = if den < limit { 0.0 } else { den };
    // With den 0 libvmaf sets score 1 and leaves score_aim unset (an
    // uninitialised double): only with adm_noise_weight 0 on a flat
    // reference. Here aim is 0 then.
    let (adm, aim) = if den == 0.0 { (1.0, 0.0) } else { (num / den, aim_num / den) };
    Outputs { adm, aim, num, den, ..out }
}

impl Config {
    /// `integer_adm3`: `MAX(score * w + (1 - score_aim) * (1 - w), min)`.
    pub fn adm3(&self, o: &Outputs) -> f64 {
        let v = o.adm * self.dlm_weight + (1.0 - o.aim) * (1.0 - self.dlm_weight);
        if v > self.min_val { v } else { self.min_val }
    }

    /// Records one frame's metrics.
    pub fn record(&self, index: usize, o: &Outputs, out: &mut Scores) {
        super::record(&self.names, index, o, self.adm3(o), out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn opts(v: serde_json::Value) -> Options {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn names_follow_libvmafs_feature_parameters() {
        let c = Config::new(&opts(json!({"debug": true, "adm_enhn_gain_limit": 1.0, "adm_skip_aim": true}))).unwrap();
        let names = c.metric_names();
        assert_eq!(names.len(), 18);
        assert!(names.contains(&"integer_adm2_egl_1".to_string()));
        assert!(names.contains(&"integer_adm_num_scale3_egl_1".to_string()));
        // adm_skip_aim and debug are no feature parameters.
        assert!(!names.iter().any(|n| n.contains("skip")));
        let c = Config::new(&opts(json!({"adm_csf_mode": 1, "adm_norm_view_dist": 4.0}))).unwrap();
        assert_eq!(c.metric_names()[0], "integer_adm2_csf_1_nvd_4");
    }

    #[test]
    fn low_angular_resolutions_are_refused_as_libvmaf_does() {
        let e = Config::new(&opts(json!({"adm_norm_view_dist": 1.0}))).unwrap_err().to_string();
        assert!(e.contains("below 3 x 1080"), "{e}");
        assert!(Config::new(&opts(json!({"adm_norm_view_dist": 1.5, "adm_ref_display_height": 2160}))).is_ok());
    }

    #[test]
    fn fixed_point_constants_at_1080p() {
        let c = Config::new(&Options::new()).unwrap();
        let p = ScaleParams::all(&c, 1920, 1080);
        assert_eq!(p[0].i_rfactor, [36453, 36453, 49417]);
        // ceil(log2(960) - 4) = 6, - 3: 7; ceil(log2(540)) = 10.
        assert_eq!((p[0].cm_shift_cub, p[0].cm_shift_inner), ([6, 6, 7], 10));
        // adm_csf_den_scale: ceil(log2(434 * 770) - 20) = -1, so 0.
        assert_eq!(p[0].den_shift_accum, 0);
        assert_eq!((p[3].den_shift_cub, p[3].den_shift_accum), (7, 6));
    }

    #[test]
    fn x86_conversions() {
        assert_eq!(cvtt_i32(-22.0 * 2f64.powi(21)) as u16, 0);
        assert_eq!(cvtt_i32(1e10), i32::MIN);
        assert_eq!(cvtt_i64(-22.0 * 2f64.powi(32)) as u32, 0);
        assert_eq!(half(0), 0);
        assert_eq!(half(5), 16);
    }
}
