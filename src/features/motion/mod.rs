//! The motion family: `motion` (libvmaf 3.2.0 integer_motion.c), `motion_v2`
//! (the lusoris fork's integer_motion_v2.c, the same arithmetic with its own
//! sequence rules) and `float_motion` (float_motion.c + motion.c +
//! motion_tools.h). All three score the reference only: how much frame `i`
//! differs from an earlier one after a 5-tap blur.
//!
//! They are temporal and *windowed* (features/gpu.rs explains the design):
//! each frame's score reads the earlier reference it needs from the source,
//! and libvmaf's `flush` rules (motion2 = the smaller of this frame's score
//! and the next one's, motion3 = blended, clipped, maybe averaged) run once
//! over the whole sequence ([`sequence`]), on the CPU and on every GPU.
//!
//! - [`integer`]: the integer SAD (`motion_score_pipeline_8/16`), shared by
//!   `motion` and `motion_v2`, and their extractors;
//! - [`float`]: the float blur (`convolution_f32_c_s`), SAD
//!   (`vmaf_image_sad_c`) and the bilinear half scale of
//!   `motion_add_scale1`, and float_motion's extractor;
//! - [`sequence`]: the three `flush` implementations;
//! - [`gpu`]: the GPU pipelines and their kernel contracts.

pub mod float;
pub mod gpu;
pub mod integer;
pub mod sequence;

use super::options::{self, OptValue, OptionDef};
use super::{FeatureImpl, Options};
use crate::fixture::{Chroma, Geometry, PairSource};
use anyhow::Result;

/// libvmaf's DEFAULT_MOTION_MAX_VAL.
const MAX_VAL: f64 = 10000.0;

const fn param(name: &'static str, alias: &'static str, default: OptValue, range: Option<(f64, f64)>) -> OptionDef {
    let (min, max) = match range {
        Some((lo, hi)) => (Some(lo), Some(hi)),
        None => (None, None),
    };
    OptionDef { name, alias: Some(alias), default, min, max, feature_param: true }
}

const FORCE_ZERO: OptionDef = param("motion_force_zero", "force_0", OptValue::Bool(false), None);
const BLEND_FACTOR: OptionDef = param("motion_blend_factor", "mbf", OptValue::Double(1.0), Some((0.0, 1.0)));
const BLEND_OFFSET: OptionDef = param("motion_blend_offset", "mbo", OptValue::Double(40.0), Some((0.0, 1000.0)));
const FPS_WEIGHT: OptionDef = param("motion_fps_weight", "mfw", OptValue::Double(1.0), Some((0.0, 5.0)));
const MAX_VALUE: OptionDef = param("motion_max_val", "mmxv", OptValue::Double(MAX_VAL), Some((0.0, MAX_VAL)));
const FIVE_FRAME: OptionDef = param("motion_five_frame_window", "mffw", OptValue::Bool(false), None);
const MOVING_AVERAGE: OptionDef = param("motion_moving_average", "mma", OptValue::Bool(false), None);

/// integer_motion.c's option table (3.2.0), in its order.
pub static MOTION_OPTIONS: &[OptionDef] = &[
    FORCE_ZERO,
    BLEND_FACTOR,
    BLEND_OFFSET,
    FPS_WEIGHT,
    MAX_VALUE,
    FIVE_FRAME,
    MOVING_AVERAGE,
    OptionDef::flag("debug", false),
];

/// The fork's integer_motion_v2.c option table, in its order (no `debug`).
pub static MOTION_V2_OPTIONS: &[OptionDef] =
    &[FORCE_ZERO, BLEND_FACTOR, BLEND_OFFSET, FPS_WEIGHT, MAX_VALUE, FIVE_FRAME, MOVING_AVERAGE];

/// float_motion.c's option table, in its order (`debug` defaults to true
/// here: `motion` is printed unless `debug=false`).
pub static FLOAT_MOTION_OPTIONS: &[OptionDef] = &[
    OptionDef::flag("debug", true),
    FORCE_ZERO,
    FPS_WEIGHT,
    BLEND_FACTOR,
    BLEND_OFFSET,
    param("motion_add_scale1", "mdc", OptValue::Bool(false), None),
    param("motion_filter_size", "mfs", OptValue::Int(5), Some((0.0, 9.0))),
    param("motion_add_uv", "mau", OptValue::Bool(false), None),
    MAX_VALUE,
];

/// The options every motion extractor shares, read once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    pub force_zero: bool,
    pub blend_factor: f64,
    pub blend_offset: f64,
    pub fps_weight: f64,
    pub max_val: f64,
}

impl Params {
    fn read(options: &Options, defs: &[OptionDef]) -> Result<Params> {
        Ok(Params {
            force_zero: options::get_bool(options, defs, "motion_force_zero")?,
            blend_factor: options::get_double(options, defs, "motion_blend_factor")?,
            blend_offset: options::get_double(options, defs, "motion_blend_offset")?,
            fps_weight: options::get_double(options, defs, "motion_fps_weight")?,
            max_val: options::get_double(options, defs, "motion_max_val")?,
        })
    }
}

/// libvmaf's `MIN(x, y)` macro: `x < y ? x : y`.
pub fn min(x: f64, y: f64) -> f64 {
    if x < y { x } else { y }
}

/// motion_blend_tools.h `motion_blend`.
pub fn blend(score: f64, factor: f64, offset: f64) -> f64 {
    score * factor + (1.0 - factor) * min(offset, score)
}

/// Checked options for one of the three extractors.
fn checked(feature: &str, options: &Options, defs: &[OptionDef]) -> Result<Params> {
    options::check(feature, options, defs)?;
    Params::read(options, defs)
}

/// The integer motion extractors' per-frame SAD metric and its sequence
/// metrics, as libvmaf names them under `options`.
pub struct IntegerNames {
    pub sad: String,
    /// `integer_motion` (with `debug`); `None` without, and for motion_v2.
    pub debug: Option<String>,
    pub motion2: String,
    pub motion3: String,
}

fn integer_names(options: &Options, v2: bool) -> Result<IntegerNames> {
    let (defs, sad, m2, m3) = if v2 {
        (
            MOTION_V2_OPTIONS,
            "VMAF_integer_feature_motion_v2_sad_score",
            "VMAF_integer_feature_motion2_v2_score",
            "VMAF_integer_feature_motion3_v2_score",
        )
    } else {
        (MOTION_OPTIONS, "VMAF_integer_feature_motion_sad_score", "integer_motion2", "integer_motion3")
    };
    let name = |base: &str| options::metric_name(base, options, defs);
    let debug = !v2 && options::get_bool(options, defs, "debug")?;
    Ok(IntegerNames {
        sad: name(sad),
        debug: debug.then(|| name("integer_motion")),
        motion2: name(m2),
        motion3: name(m3),
    })
}

/// float_motion's metrics under `options`: (motion with `debug`, motion2,
/// motion3).
pub struct FloatNames {
    pub motion: Option<String>,
    pub motion2: String,
    pub motion3: String,
}

fn float_names(options: &Options) -> Result<FloatNames> {
    let name = |base: &str| options::metric_name(base, options, FLOAT_MOTION_OPTIONS);
    let debug = options::get_bool(options, FLOAT_MOTION_OPTIONS, "debug")?;
    Ok(FloatNames { motion: debug.then(|| name("motion")), motion2: name("motion2"), motion3: name("motion3") })
}

pub static MOTION: FeatureImpl = FeatureImpl {
    name: "motion",
    options: MOTION_OPTIONS,
    metrics: |options| {
        checked("motion", options, MOTION_OPTIONS)?;
        let n = integer_names(options, false)?;
        Ok([Some(n.sad), n.debug, Some(n.motion2), Some(n.motion3)].into_iter().flatten().collect())
    },
    cpu: |geometry, options| integer::cpu_extractor(geometry, options, false),
    gpu: Some(|gpu, geometry, options| gpu::integer_extractor(gpu, geometry, options, false)),
    kernels: &[&gpu::MOTION_SAD, &gpu::MOTION_SAD_BYTES],
    temporal: true,
    chroma_metrics: &[],
    refuses: |geometry, options| refuses_integer(geometry, options, false),
};

pub static MOTION_V2: FeatureImpl = FeatureImpl {
    name: "motion_v2",
    options: MOTION_V2_OPTIONS,
    metrics: |options| {
        checked("motion_v2", options, MOTION_V2_OPTIONS)?;
        let n = integer_names(options, true)?;
        Ok(vec![n.sad, n.motion2, n.motion3])
    },
    cpu: |geometry, options| integer::cpu_extractor(geometry, options, true),
    gpu: Some(|gpu, geometry, options| gpu::integer_extractor(gpu, geometry, options, true)),
    kernels: &[&gpu::MOTION_SAD, &gpu::MOTION_SAD_BYTES],
    temporal: true,
    chroma_metrics: &[],
    refuses: |geometry, options| refuses_integer(geometry, options, true),
};

pub static FLOAT_MOTION: FeatureImpl = FeatureImpl {
    name: "float_motion",
    options: FLOAT_MOTION_OPTIONS,
    metrics: |options| {
        checked("float_motion", options, FLOAT_MOTION_OPTIONS)?;
        let n = float_names(options)?;
        Ok([n.motion, Some(n.motion2), Some(n.motion3)].into_iter().flatten().collect())
    },
    cpu: float::cpu_extractor,
    gpu: Some(gpu::float_extractor),
    kernels: &[
        &gpu::FLOAT_MOTION_ROWS,
        &gpu::FLOAT_MOTION_ROWS_BYTES,
        &gpu::FLOAT_MOTION_BLUR_Y,
        &gpu::FLOAT_MOTION_BLUR_X,
        &gpu::FLOAT_MOTION_SAD_ROWS,
        &gpu::FLOAT_MOTION_SAD_SCALED_ROWS,
    ],
    temporal: true,
    chroma_metrics: &[],
    refuses: refuses_float,
};

/// The integer 5-tap filter mirrors inside the plane (`2 * size - idx - 2`)
/// only when both dimensions are at least 3.
const MIN_DIM: u32 = 3;

fn refuses_integer(geometry: &Geometry, options: &Options, v2: bool) -> Option<String> {
    let (w, h) = (geometry.width, geometry.height);
    if v2 {
        if w < MIN_DIM || h < MIN_DIM {
            return Some(format!(
                "motion_v2: frame {w}x{h} is below the 5-tap filter minimum {MIN_DIM}x{MIN_DIM} \
                 (integer_motion_v2.c init refuses it)"
            ));
        }
        if options::get_bool(options, MOTION_V2_OPTIONS, "motion_five_frame_window").unwrap_or(false) {
            return Some(
                "motion_v2: motion_five_frame_window=true is not supported on motion_v2 \
                 (integer_motion_v2.c init returns -ENOTSUP)"
                    .into(),
            );
        }
        return None;
    }
    // Refused under `motion_force_zero` too, where libvmaf writes zeros
    // without reading the frame: the GPU pipelines still run their kernels
    // (PoCL faults on a 2x2 frame).
    (w < MIN_DIM || h < MIN_DIM).then(|| {
        format!(
            "motion: frame {w}x{h} is below 3x3, where integer_motion.c's 5-tap mirror reads outside \
             the frame (undefined behaviour; libvmaf has no score to match)"
        )
    })
}

/// float_motion.c: what its init refuses, and geometries where its C
/// reads or writes outside its buffers (no defined score to reproduce).
fn refuses_float(geometry: &Geometry, options: &Options) -> Option<String> {
    let opt = float::FloatOptions::read(options).ok()?;
    let radius = opt.taps().len() / 2;
    let planes: &[usize] = if opt.add_uv { &[0, 1, 2] } else { &[0] };
    // What init refuses.
    if opt.add_uv && geometry.chroma == Chroma::Yuv400 {
        return Some("float_motion: motion_add_uv needs chroma planes (init returns -EINVAL for 4:0:0)".into());
    }
    if opt.add_scale1 && float::half(geometry.width as usize) > float::BILINEAR_MAX_WIDTH {
        return Some(format!(
            "float_motion: motion_add_scale1 halves the width to {}, above VIF_BILINEAR_MAX_WIDTH {} (init returns -EINVAL)",
            float::half(geometry.width as usize),
            float::BILINEAR_MAX_WIDTH
        ));
    }
    // Planes smaller than the filter: refused even under
    // `motion_force_zero`, where libvmaf writes zeros without reading the
    // frame, since the GPU pipelines still run their kernels on it.
    for &p in planes {
        let (w, h) = geometry.plane_dims(p);
        if w <= radius || h <= radius {
            return Some(format!(
                "float_motion: plane {p} is {w}x{h}, at most the {}-tap filter's radius {radius} in a dimension: \
                 convolution_f32_c_s then writes outside the plane (undefined behaviour; libvmaf crashes{})",
                opt.taps().len(),
                if opt.params.force_zero { "; ulpgate refuses it under motion_force_zero too" } else { "" }
            ));
        }
    }
    // What is undefined in `extract`, which `motion_force_zero` leaves
    // before it reads the frame: it writes zeros.
    if opt.params.force_zero {
        return None;
    }
    if opt.add_uv && geometry.chroma == Chroma::Yuv420 && geometry.height % 2 == 1 {
        return Some(format!(
            "float_motion: motion_add_uv on 4:2:0 of odd height {}: init allocates h / 2 chroma rows and \
             picture_copy writes (h + 1) / 2 (a heap overflow in libvmaf; no defined score)",
            geometry.height
        ));
    }
    if opt.add_uv && opt.add_scale1 {
        let stride = |w: usize| (w * 4).div_ceil(32) * 32;
        let (cw, _) = geometry.plane_dims(1);
        if stride(cw) != stride(geometry.width as usize) {
            return Some(
                "float_motion: motion_add_uv with motion_add_scale1 on subsampled chroma: vmaf_image_sad_c \
                 scales the chroma planes with a stride computed from their width, not the luma stride they \
                 are stored at, and so reads uninitialised memory (no defined score)"
                    .into(),
            );
        }
    }
    None
}

/// Reads the first plane(s) of a frame's reference side into `bytes`
/// (`planes` planes, as the driver uploads them).
fn read_planes(source: &dyn PairSource, index: usize, planes: usize, bytes: &mut Vec<u8>) -> Result<()> {
    let g = source.geometry();
    bytes.resize(super::gpu::planes_bytes(&g, planes), 0);
    source.read_bytes(index, false, bytes)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn opts(v: serde_json::Value) -> Options {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn blend_is_motion_blend_tools() {
        assert_eq!(blend(10.0, 1.0, 40.0), 10.0);
        // 0.5 * 50 + 0.5 * min(40, 50)
        assert_eq!(blend(50.0, 0.5, 40.0), 45.0);
        assert_eq!(blend(6.0, 0.5, 40.0), 6.0);
    }

    #[test]
    fn metrics_are_named_as_libvmaf_prints_them() {
        let m = |o| (MOTION.metrics)(&opts(o)).unwrap();
        assert_eq!(m(json!({})), ["VMAF_integer_feature_motion_sad_score", "integer_motion2", "integer_motion3"]);
        assert_eq!(m(json!({"debug": true}))[1], "integer_motion");
        // Checked against vmaf 3.2.0: mbf, mbo, mma in option-name order.
        let renamed = m(json!({"motion_moving_average": true, "mbf": 0.5, "motion_blend_offset": 6.3}));
        assert_eq!(renamed[2], "integer_motion3_mbf_0.5_mbo_6.3_mma");
        assert_eq!(m(json!({"motion_five_frame_window": true}))[0], "VMAF_integer_feature_motion_sad_score_mffw");
        let f = |o| (FLOAT_MOTION.metrics)(&opts(o)).unwrap();
        assert_eq!(f(json!({})), ["motion", "motion2", "motion3"]);
        assert_eq!(f(json!({"debug": false})), ["motion2", "motion3"]);
        assert_eq!(f(json!({"motion_add_uv": true, "mfs": 3}))[0], "motion_mau_mfs_3");
        assert_eq!(f(json!({"motion_max_val": 6.3}))[2], "motion3_mmxv_6.3");
        let e = (MOTION.metrics)(&opts(json!({"motion_blend_factr": 0.5}))).unwrap_err().to_string();
        assert!(e.contains("did you mean `motion_blend_factor`"), "{e}");
        let e = (FLOAT_MOTION.metrics)(&opts(json!({"motion_filter_size": 10}))).unwrap_err().to_string();
        assert!(e.contains("outside its range [0, 9]"), "{e}");
    }

    #[test]
    fn tiny_frames_are_refused_with_the_reason() {
        let g = |width, height, chroma| Geometry { width, height, bit_depth: 8, chroma };
        let none = Options::new();
        assert!((MOTION.refuses)(&g(3, 3, Chroma::Yuv444), &none).is_none());
        assert!((MOTION.refuses)(&g(2, 9, Chroma::Yuv444), &none).unwrap().contains("below 3x3"));
        assert!((MOTION_V2.refuses)(&g(9, 2, Chroma::Yuv444), &none).unwrap().contains("5-tap filter minimum"));
        let ffw = opts(json!({"motion_five_frame_window": true}));
        assert!((MOTION_V2.refuses)(&g(9, 9, Chroma::Yuv444), &ffw).unwrap().contains("-ENOTSUP"));
        assert!((FLOAT_MOTION.refuses)(&g(3, 3, Chroma::Yuv444), &none).is_none());
        assert!((FLOAT_MOTION.refuses)(&g(2, 2, Chroma::Yuv444), &none).is_some());
        // A 3-tap filter takes 2x2.
        assert!((FLOAT_MOTION.refuses)(&g(2, 2, Chroma::Yuv444), &opts(json!({"mfs": 3}))).is_none());
        let uv = opts(json!({"motion_add_uv": true}));
        assert!((FLOAT_MOTION.refuses)(&g(8, 8, Chroma::Yuv400), &uv).unwrap().contains("-EINVAL"));
        assert!((FLOAT_MOTION.refuses)(&g(8, 9, Chroma::Yuv420), &uv).unwrap().contains("odd height"));
        let uv_s1 = opts(json!({"motion_add_uv": true, "motion_add_scale1": true}));
        assert!((FLOAT_MOTION.refuses)(&g(64, 8, Chroma::Yuv420), &uv_s1).unwrap().contains("stride"));
        assert!((FLOAT_MOTION.refuses)(&g(8, 8, Chroma::Yuv420), &uv_s1).is_none());
        assert!((FLOAT_MOTION.refuses)(&g(64, 8, Chroma::Yuv444), &uv_s1).is_none());
        let s1 = opts(json!({"motion_add_scale1": true}));
        assert!((FLOAT_MOTION.refuses)(&g(15362, 8, Chroma::Yuv444), &s1).unwrap().contains("7680"));
        assert!((FLOAT_MOTION.refuses)(&g(15360, 8, Chroma::Yuv444), &s1).is_none());
        // motion_force_zero leaves extract before it reads the frame, so
        // what is undefined there is not refused; init's refusals and
        // planes below the filter (the GPU kernels still read them) are.
        let zero = |mut o: serde_json::Value| {
            o["motion_force_zero"] = json!(true);
            opts(o)
        };
        let fz_uv_s1 = zero(json!({"motion_add_uv": true, "motion_add_scale1": true}));
        assert!((FLOAT_MOTION.refuses)(&g(64, 8, Chroma::Yuv420), &fz_uv_s1).is_none());
        assert!((FLOAT_MOTION.refuses)(&g(8, 9, Chroma::Yuv420), &zero(json!({"motion_add_uv": true}))).is_none());
        assert!((FLOAT_MOTION.refuses)(&g(8, 8, Chroma::Yuv400), &zero(json!({"motion_add_uv": true}))).is_some());
        let why = (FLOAT_MOTION.refuses)(&g(2, 2, Chroma::Yuv444), &zero(json!({}))).unwrap();
        assert!(why.contains("under motion_force_zero too"), "{why}");
        assert!((MOTION.refuses)(&g(2, 2, Chroma::Yuv444), &zero(json!({}))).unwrap().contains("below 3x3"));
    }
}
