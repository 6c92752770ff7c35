//! Visual information fidelity: `vif` (libvmaf integer_vif.c, fixed point)
//! and `float_vif` (float_vif.c, vif.c, vif_tools.c). Both measure, at four
//! scales, how much of the reference's information survives in the
//! distorted picture; the scales are the luma filtered and halved three
//! times. `docs/features/vif.md` describes the kernels.

pub mod float;
pub mod gpu_float;
pub mod gpu_integer;
pub mod integer;
#[cfg(target_arch = "x86_64")]
mod integer_simd;
pub mod prescale;
pub mod tables;

use super::options::{self, OptValue, OptionDef};
use super::{Extractor, FeatureImpl, Options};
use crate::fixture::{Frame, Geometry};
use crate::scores::Scores;
use anyhow::{Result, bail};

pub static VIF: FeatureImpl = FeatureImpl {
    name: "vif",
    options: VIF_OPTIONS,
    metrics: |options| Ok(IntegerParams::new(options)?.names.all()),
    cpu: |geometry, options| {
        let params = IntegerParams::new(options)?;
        Ok(Box::new(IntegerCpu {
            vif: integer::IntegerVif::new(geometry.bit_depth, params.skip_scale0, params.gain_limit),
            params,
        }))
    },
    gpu: Some(|gpu, geometry, options| {
        let params = IntegerParams::new(options)?;
        gpu_integer::extractor(gpu, geometry, params)
    }),
    kernels: gpu_integer::KERNELS,
    temporal: false,
    chroma_metrics: &[],
    refuses: |geometry, options| {
        let params = IntegerParams::new(options).ok()?;
        let start = usize::from(params.skip_scale0);
        too_small("vif", (geometry.width as usize, geometry.height as usize), start, |s| tables::INT_FILTERS[s].len())
    },
};

pub static FLOAT_VIF: FeatureImpl = FeatureImpl {
    name: "float_vif",
    options: FLOAT_VIF_OPTIONS,
    metrics: |options| Ok(FloatParams::new(options)?.names.all()),
    cpu: |geometry, options| {
        let params = FloatParams::new(options)?;
        Ok(Box::new(float::FloatCpu::new(geometry, params)?))
    },
    gpu: Some(|gpu, geometry, options| {
        let params = FloatParams::new(options)?;
        gpu_float::extractor(gpu, geometry, params)
    }),
    kernels: gpu_float::KERNELS,
    temporal: false,
    chroma_metrics: &[],
    refuses: |geometry, options| FloatParams::new(options).ok()?.refuses(geometry),
};

/// integer_vif.c's option table.
static VIF_OPTIONS: &[OptionDef] = &[OptionDef::flag("debug", false), GAIN_LIMIT, SKIP_SCALE0];

/// float_vif.c's option table.
static FLOAT_VIF_OPTIONS: &[OptionDef] = &[
    OptionDef::flag("debug", false),
    GAIN_LIMIT,
    OptionDef {
        name: "vif_kernelscale",
        alias: Some("ks"),
        default: OptValue::Double(1.0),
        min: Some(0.1),
        max: Some(4.0),
        feature_param: true,
    },
    OptionDef {
        name: "vif_prescale",
        alias: Some("ps"),
        default: OptValue::Double(1.0),
        min: Some(0.1),
        max: Some(4.0),
        feature_param: true,
    },
    min_val("vif_scale1_min_val", "s1miv"),
    min_val("vif_scale2_min_val", "s2miv"),
    min_val("vif_scale3_min_val", "s3miv"),
    OptionDef {
        name: "vif_prescale_method",
        alias: Some("pm"),
        default: OptValue::Str("nearest"),
        min: None,
        max: None,
        feature_param: true,
    },
    OptionDef {
        name: "vif_sigma_nsq",
        alias: Some("snsq"),
        default: OptValue::Double(2.0),
        min: Some(0.0),
        max: Some(5.0),
        feature_param: true,
    },
    SKIP_SCALE0,
];

/// `vif_enhn_gain_limit` (both tables): the largest gain g counted.
const GAIN_LIMIT: OptionDef = OptionDef {
    name: "vif_enhn_gain_limit",
    alias: Some("egl"),
    default: OptValue::Double(100.0),
    min: Some(1.0),
    max: Some(100.0),
    feature_param: true,
};

/// `vif_skip_scale0` (both tables).
const SKIP_SCALE0: OptionDef = OptionDef {
    name: "vif_skip_scale0",
    alias: Some("ssclz"),
    default: OptValue::Bool(false),
    min: None,
    max: None,
    feature_param: true,
};

const fn min_val(name: &'static str, alias: &'static str) -> OptionDef {
    OptionDef {
        name,
        alias: Some(alias),
        default: OptValue::Double(0.0),
        min: Some(0.0),
        max: Some(1.0),
        feature_param: true,
    }
}

/// The metric names one extractor prints under its options: libvmaf's
/// names with the feature parameters' suffix (feature_name.c).
#[derive(Debug, Clone)]
pub struct Names {
    pub scales: [String; 4],
    /// With `debug`: the combined score, its numerator and denominator,
    /// then each scale's numerator and denominator.
    pub debug: Option<DebugNames>,
}

#[derive(Debug, Clone)]
pub struct DebugNames {
    pub score: String,
    pub num: String,
    pub den: String,
    pub num_scale: [String; 4],
    pub den_scale: [String; 4],
}

impl Names {
    /// `prefix` is `integer_vif` or `vif`.
    fn new(prefix: &str, options: &Options, table: &[OptionDef], debug: bool) -> Self {
        let name = |base: String| options::metric_name(&base, options, table);
        Names {
            scales: std::array::from_fn(|k| name(format!("{prefix}_scale{k}"))),
            debug: debug.then(|| DebugNames {
                score: name(prefix.to_string()),
                num: name(format!("{prefix}_num")),
                den: name(format!("{prefix}_den")),
                num_scale: std::array::from_fn(|k| name(format!("{prefix}_num_scale{k}"))),
                den_scale: std::array::from_fn(|k| name(format!("{prefix}_den_scale{k}"))),
            }),
        }
    }

    /// Every metric, in the order libvmaf appends them.
    pub fn all(&self) -> Vec<String> {
        let mut out = self.scales.to_vec();
        if let Some(d) = &self.debug {
            out.extend([d.score.clone(), d.num.clone(), d.den.clone()]);
            for k in 0..4 {
                out.extend([d.num_scale[k].clone(), d.den_scale[k].clone()]);
            }
        }
        out
    }
}

/// One frame's per-scale (num, den), as both extractors store them (f32).
pub type ScaleFractions = [(f32, f32); 4];

/// How an extractor turns its scales' fractions into scores.
#[derive(Debug, Clone)]
pub struct Scoring {
    pub names: Names,
    pub skip_scale0: bool,
    /// integer_vif.c divides num by den in f32; float_vif.c in double.
    pub ratio_in_f32: bool,
    /// float_vif.c's `vif_scale{1,2,3}_min_val` floors (integer: 0, never
    /// applied).
    pub min_vals: Option<[f64; 3]>,
}

impl Scoring {
    /// integer_vif.c `write_scores` / float_vif.c `extract`'s appends.
    pub fn record(&self, index: usize, fractions: &ScaleFractions, out: &mut Scores) {
        let ratio = |(num, den): (f32, f32)| {
            if self.ratio_in_f32 { f64::from(num / den) } else { f64::from(num) / f64::from(den) }
        };
        for (k, name) in self.names.scales.iter().enumerate() {
            let mut score = if k == 0 && self.skip_scale0 { 0.0 } else { ratio(fractions[k]) };
            if let (Some(mins), 1..) = (self.min_vals, k) {
                // MAX(a, b) = a > b ? a : b.
                score = if score > mins[k - 1] { score } else { mins[k - 1] };
            }
            out.record(name, index, score);
        }
        let Some(d) = &self.names.debug else { return };
        let start = usize::from(self.skip_scale0);
        let num = fractions[start..].iter().fold(0.0f64, |s, f| s + f64::from(f.0));
        let den = fractions[start..].iter().fold(0.0f64, |s, f| s + f64::from(f.1));
        out.record(&d.score, index, if den == 0.0 { 1.0 } else { num / den });
        out.record(&d.num, index, num);
        out.record(&d.den, index, den);
        for (k, &fraction) in fractions.iter().enumerate() {
            let (n, dd) = if k == 0 && self.skip_scale0 { (0.0, -1.0) } else { fraction };
            out.record(&d.num_scale[k], index, f64::from(n));
            out.record(&d.den_scale[k], index, f64::from(dd));
        }
    }
}

/// The integer extractor's options, validated.
#[derive(Debug, Clone)]
pub struct IntegerParams {
    pub skip_scale0: bool,
    pub gain_limit: f64,
    pub names: Names,
}

impl IntegerParams {
    pub fn new(options: &Options) -> Result<Self> {
        options::check("vif", options, VIF_OPTIONS)?;
        let debug = options::get_bool(options, VIF_OPTIONS, "debug")?;
        Ok(IntegerParams {
            skip_scale0: options::get_bool(options, VIF_OPTIONS, "vif_skip_scale0")?,
            gain_limit: options::get_double(options, VIF_OPTIONS, "vif_enhn_gain_limit")?,
            names: Names::new("integer_vif", options, VIF_OPTIONS, debug),
        })
    }

    pub fn scoring(&self) -> Scoring {
        Scoring { names: self.names.clone(), skip_scale0: self.skip_scale0, ratio_in_f32: true, min_vals: None }
    }
}

/// float_vif.c `vif_get_scaling_method`'s names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrescaleMethod {
    Nearest,
    Bilinear,
    Bicubic,
    Lanczos4,
}

impl PrescaleMethod {
    fn parse(s: &str) -> Result<Self> {
        Ok(match s {
            "nearest" => PrescaleMethod::Nearest,
            "bilinear" => PrescaleMethod::Bilinear,
            "bicubic" => PrescaleMethod::Bicubic,
            "lanczos4" => PrescaleMethod::Lanczos4,
            other => bail!(
                "float_vif option `vif_prescale_method` is {other:?}; libvmaf supports nearest, bilinear, bicubic \
                 and lanczos4"
            ),
        })
    }
}

/// The float extractor's options, validated.
#[derive(Debug, Clone)]
pub struct FloatParams {
    pub gain_limit: f64,
    pub kernelscale: f64,
    pub prescale: f64,
    pub prescale_method: PrescaleMethod,
    pub sigma_nsq: f64,
    pub skip_scale0: bool,
    pub min_vals: [f64; 3],
    pub names: Names,
}

impl FloatParams {
    pub fn new(options: &Options) -> Result<Self> {
        let t = FLOAT_VIF_OPTIONS;
        options::check("float_vif", options, t)?;
        let kernelscale = options::get_double(options, t, "vif_kernelscale")?;
        if !tables::valid_kernelscale(kernelscale) {
            let valid: Vec<String> =
                tables::VALID_KERNELSCALES.iter().map(|v| options::format_g(f64::from(*v))).collect();
            bail!(
                "float_vif option `vif_kernelscale` is {kernelscale}; libvmaf's compute_vif fails on every frame \
                 unless it is within 0.001 of one of {}",
                valid.join(", ")
            );
        }
        Ok(FloatParams {
            gain_limit: options::get_double(options, t, "vif_enhn_gain_limit")?,
            kernelscale,
            prescale: options::get_double(options, t, "vif_prescale")?,
            prescale_method: PrescaleMethod::parse(&options::get_str(options, t, "vif_prescale_method")?)?,
            sigma_nsq: options::get_double(options, t, "vif_sigma_nsq")?,
            skip_scale0: options::get_bool(options, t, "vif_skip_scale0")?,
            min_vals: [
                options::get_double(options, t, "vif_scale1_min_val")?,
                options::get_double(options, t, "vif_scale2_min_val")?,
                options::get_double(options, t, "vif_scale3_min_val")?,
            ],
            names: Names::new("vif", options, t, options::get_bool(options, t, "debug")?),
        })
    }

    pub fn scoring(&self) -> Scoring {
        Scoring {
            names: self.names.clone(),
            skip_scale0: self.skip_scale0,
            ratio_in_f32: false,
            min_vals: Some(self.min_vals),
        }
    }

    /// float_vif.c `init`: the prescaled size, `(int)(w * prescale + 0.5)`.
    pub fn scaled(&self, geometry: &Geometry) -> (usize, usize) {
        let s = |n: u32| (f64::from(n) * self.prescale + 0.5) as i32 as usize;
        (s(geometry.width), s(geometry.height))
    }

    /// Every filter width, scale 0 to 3 (vif_tools.c `vif_get_filter_size`).
    pub fn filter_sizes(&self) -> [usize; 4] {
        std::array::from_fn(|s| tables::float_filter_size(s, self.kernelscale))
    }

    /// Why libvmaf has no float_vif score for this geometry, if it has none.
    pub fn refuses(&self, geometry: &Geometry) -> Option<String> {
        let (w, h) = self.scaled(geometry);
        if self.prescale_method == PrescaleMethod::Bilinear && w > prescale::BILINEAR_MAX_WIDTH {
            return Some(format!(
                "float_vif's init refuses bilinear prescaling to a width of {w} (above VIF_BILINEAR_MAX_WIDTH, {})",
                prescale::BILINEAR_MAX_WIDTH
            ));
        }
        if let Some(why) = prescale::Resampler::new(self.prescale_method, geometry, (w, h)).out_of_picture() {
            return Some(why);
        }
        let sizes = self.filter_sizes();
        too_small("float_vif", (w, h), usize::from(self.skip_scale0), |s| sizes[s])
    }
}

/// The environment variable that overrides which shape of the VIF kernels
/// runs: `strip` (an item walks a strip of pixels, its inputs loaded once
/// into a sliding window) or `pixel` (an item per pixel). A testing and
/// diagnostic switch: both shapes give the same bits; unset or empty,
/// [`strip_shape`] chooses by device type.
pub const SHAPE_VAR: &str = "ULPGATE_VIF_SHAPE";

/// Whether `device` runs the strip-shaped kernels: yes on a CPU
/// implementation of Vulkan (Mesa lavapipe), which loads storage buffers
/// lane by lane, so that loading each input once matters most; no on GPUs,
/// where an item per pixel keeps the reads coalesced, and no on a CPU
/// implementation of OpenCL (PoCL), which vectorises the per-pixel kernels
/// across work items itself and ran them ~15% faster than the strips
/// (docs/features/vif.md). [`SHAPE_VAR`] overrides the choice.
pub fn strip_shape(device: &crate::backend::DeviceInfo) -> Result<bool> {
    let choice = std::env::var_os(SHAPE_VAR);
    let forced = choice.as_deref().is_some_and(|c| !c.is_empty());
    let strip = super::gpu::shape_for_driver(
        device,
        SHAPE_VAR,
        choice.as_deref(),
        ("strip", "strip kernels", true),
        ("pixel", "per-pixel kernels", false),
    )?;
    Ok(strip && (forced || device.backend == "vulkan"))
}

/// Why libvmaf has no score to reproduce below a size: both extractors
/// mirror each scale's filter at the picture's edges (index -i reads i,
/// n - 1 + i reads n - 1 - i), which stays inside the picture only while
/// each scale has more rows and columns than the filter's half width.
/// Below that, libvmaf reads memory outside the picture: `vif` the rows its
/// own zeroed buffers hold from earlier scales and frames (valgrind-clean
/// and the same from run to run, but a function of its buffer layout and
/// history, not of the picture), `float_vif` memory it does not own or has
/// not written (scores that change from run to run, or a crash). The cell
/// is SKIP with this reason. Scale `s` is the picture halved `s`
/// times; it is filtered with filter `s`, and (from scale 1) the picture
/// of scale `s - 1` is too, before the halving.
pub fn too_small(
    feature: &str,
    (w, h): (usize, usize),
    first_scale: usize,
    filter_width: impl Fn(usize) -> usize,
) -> Option<String> {
    for s in first_scale..4 {
        let half = filter_width(s) / 2;
        let (ws, hs) = (w >> s, h >> s);
        if ws <= half || hs <= half {
            let instead = if feature == "vif" {
                "rows its buffers hold from earlier scales and frames"
            } else {
                "memory it does not own or has not written"
            };
            return Some(format!(
                "libvmaf's {feature} has no score to reproduce at {w}x{h}: scale {s} is {ws}x{hs}, and its {}-tap \
                 filter mirrored at the edges reads outside the picture (it needs more than {half} rows and \
                 columns there), so it reads {instead}",
                filter_width(s)
            ));
        }
    }
    None
}

struct IntegerCpu {
    vif: integer::IntegerVif,
    params: IntegerParams,
}

impl Extractor for IntegerCpu {
    fn extract(&mut self, index: usize, reference: &Frame, distorted: &Frame, out: &mut Scores) -> Result<()> {
        let sums = self.vif.scales(reference.plane(0), distorted.plane(0));
        let fractions: ScaleFractions = sums.map(|s| s.num_den());
        self.params.scoring().record(index, &fractions, out);
        Ok(())
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
    fn names_carry_the_feature_parameters_as_libvmaf_prints_them() {
        // Checked against libvmaf 3.2.0's output:
        // vif=debug=true:vif_enhn_gain_limit=1:vif_skip_scale0=true.
        let p = IntegerParams::new(&opts(json!({"debug": true, "egl": 1.0, "vif_skip_scale0": true}))).unwrap();
        let all = p.names.all();
        assert_eq!(all.len(), 15);
        assert_eq!(all[0], "integer_vif_scale0_egl_1_ssclz");
        assert_eq!(all[4], "integer_vif_egl_1_ssclz");
        assert_eq!(all[14], "integer_vif_den_scale3_egl_1_ssclz");
        let f = FloatParams::new(&opts(json!({"vif_kernelscale": 0.5}))).unwrap();
        assert_eq!(f.names.all(), ["vif_scale0_ks_0.5", "vif_scale1_ks_0.5", "vif_scale2_ks_0.5", "vif_scale3_ks_0.5"]);
    }

    #[test]
    fn bad_options_are_refused_with_the_reason() {
        let e = FloatParams::new(&opts(json!({"vif_kernelscale": 1.01}))).unwrap_err().to_string();
        assert!(e.contains("within 0.001 of one of 1, 0.5, 1.5"), "{e}");
        let e = FloatParams::new(&opts(json!({"vif_prescale_method": "cubic"}))).unwrap_err().to_string();
        assert!(e.contains("nearest, bilinear, bicubic and lanczos4"), "{e}");
        let e = IntegerParams::new(&opts(json!({"vif_kernelscale": 1.0}))).unwrap_err().to_string();
        assert!(e.contains("vif has no option `vif_kernelscale`"), "{e}");
        let e = IntegerParams::new(&opts(json!({"egl": 0.5}))).unwrap_err().to_string();
        assert!(e.contains("outside its range [1, 100]"), "{e}");
    }

    #[test]
    fn the_smallest_pictures_are_16_pixels_a_side() {
        let int = |w, h, start| too_small("vif", (w, h), start, |s| tables::INT_FILTERS[s].len());
        assert!(int(16, 16, 0).is_none());
        let e = int(15, 16, 0).unwrap();
        assert!(e.contains("scale 3 is 1x2") && e.contains("3-tap"), "{e}");
        assert!(int(16, 15, 1).is_some());
        assert!(int(9, 200, 0).unwrap().contains("scale 1 is 4x100"));
        // A larger kernel needs a larger picture.
        let f = FloatParams::new(&opts(json!({"vif_kernelscale": 2.0}))).unwrap();
        let g = |w, h| Geometry { width: w, height: h, bit_depth: 8, chroma: crate::fixture::Chroma::Yuv420 };
        assert!(f.refuses(&g(24, 24)).unwrap().contains("scale 3 is 3x3, and its 7-tap"));
        assert!(f.refuses(&g(32, 32)).is_none());
    }
}
