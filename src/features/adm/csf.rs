//! The contrast sensitivity models behind ADM's per-scale CSF factors
//! (libvmaf integer_adm.h / adm_tools.h `dwt_quant_step`,
//! barten_csf_tools.h, adm_csf_tools.h). Every expression keeps libvmaf's
//! types: which products are float and which double, and where a double is
//! rounded to float, so each factor is the same f32 libvmaf computes (they
//! are computed once per extractor, on the host, and handed to the kernels).

use std::f64::consts::PI;

/// `dwt_model_params` of the luma row of `dwt_7_9_YCbCr_threshold`
/// (Watson et al. 1997, Table IV, subject "sfl"): a, k, f0, g[4].
struct DwtModel {
    a: f32,
    k: f32,
    f0: f32,
    g: [f32; 4],
}

const WATSON_Y: DwtModel = DwtModel { a: 0.495, k: 0.466, f0: 0.401, g: [1.501, 1.0, 0.534, 1.0] };

/// `dwt_7_9_basis_function_amplitudes[lambda][theta]` (Table V, transposed).
const AMPLITUDES: [[f32; 4]; 6] = [
    [0.62171, 0.67234, 0.72709, 0.67234],
    [0.34537, 0.41317, 0.49428, 0.41317],
    [0.18004, 0.22727, 0.28688, 0.22727],
    [0.091401, 0.11792, 0.15214, 0.11792],
    [0.045943, 0.059758, 0.077727, 0.059758],
    [0.023013, 0.030018, 0.039156, 0.030018],
];

/// The display's visual resolution in pixels per degree, rounded to f32
/// (`float r = adm_norm_view_dist * adm_ref_display_height * M_PI / 180.0`).
fn display_resolution(norm_view_dist: f64, ref_display_height: i32) -> f32 {
    (norm_view_dist * f64::from(ref_display_height) * PI / 180.0) as f32
}

/// `dwt_quant_step` (integer_adm.c, adm_tools.h): Watson's quantisation
/// step for DWT level `lambda` (0 finest) and orientation `theta`.
pub fn dwt_quant_step(lambda: usize, theta: usize, norm_view_dist: f64, ref_display_height: i32) -> f32 {
    let p = &WATSON_Y;
    let r = display_resolution(norm_view_dist, ref_display_height);
    // log10(pow(2.0, lambda + 1) * f0 * g[theta] / r), in double, to float.
    let temp = ((2f64.powi(lambda as i32 + 1) * f64::from(p.f0) * f64::from(p.g[theta]) / f64::from(r)).log10()) as f32;
    // `params->k * temp * temp` is a float product; the rest is double.
    let exponent = p.k * temp * temp;
    (2.0 * f64::from(p.a) * 10f64.powf(f64::from(exponent)) / f64::from(AMPLITUDES[lambda][theta])) as f32
}

/// The luminance levels (cd/m²) of HDR-VDP-2.2.1's CSF measurements.
const BARTEN_ANCHORS: [f32; 6] = [0.002, 0.02, 0.2, 2.0, 20.0, 150.0];

const BARTEN_PARAMS: [[f32; 5]; 6] = [
    [0.0160737, 0.991265, 3.74038, 0.50722, 4.46044],
    [0.383873, 0.800889, 3.54104, 0.682505, 4.94958],
    [0.929301, 0.476505, 4.37453, 0.750315, 5.28678],
    [1.29776, 0.405782, 4.40602, 0.935314, 5.61425],
    [1.49222, 0.334278, 3.79542, 1.07327, 6.4635],
    [1.46213, 0.394533, 2.7755, 1.16577, 7.45665],
];

const BARTEN_SA: [f32; 4] = [30.162, 4.0627, 1.6596, 0.2712];
// barten_csf_tools.h's literals, kept as written (f32 rounds them).
#[allow(clippy::excessive_precision)]
const BARTEN_MTF_A: [f32; 4] = [0.424838596301290, 0.572435103936480, 0.000167576239164937, 0.00255872352306433];
const BARTEN_MTF_B: [f32; 4] = [0.028, 0.37, 37.0, 360.0];

/// barten_csf_tools.h `linear_interpolate`, all in float.
fn linear_interpolate(left_position: f32, left_value: f32, right_position: f32, right_value: f32, at: f32) -> f32 {
    left_value + ((right_value - left_value) / (right_position - left_position)) * (at - left_position)
}

/// `barten_rod_cone_sens`: the luminance-dependent part of Barten's CSF.
fn barten_rod_cone_sens(luminance: f32) -> f32 {
    let base = f64::from(BARTEN_SA[1] / luminance).powf(f64::from(BARTEN_SA[2])) + 1.0;
    (f64::from(BARTEN_SA[0]) * base.powf(f64::from(-BARTEN_SA[3]))) as f32
}

/// `barten_mtf`: the optical MTF part of Barten's CSF.
fn barten_mtf(spatial_frequency: f32) -> f32 {
    let mut mtf = 0.0f32;
    for i in 0..4 {
        let e = f64::from(-BARTEN_MTF_B[i] * spatial_frequency).exp();
        mtf = (f64::from(mtf) + f64::from(BARTEN_MTF_A[i]) * e) as f32;
    }
    mtf
}

/// `barten_csf` (barten_csf_tools.h): HDR-VDP-2's simplified Barten CSF at
/// DWT level `lambda`, times `scale`.
pub fn barten_csf(lambda: usize, norm_view_dist: f64, ref_display_height: i32, luminance: f64, scale: f64) -> f32 {
    let r = display_resolution(norm_view_dist, ref_display_height);
    let sf = (f64::from(r) / 2f64.powi(lambda as i32 + 1)) as f32;
    let (lo, hi) = (f64::from(BARTEN_ANCHORS[0]), f64::from(BARTEN_ANCHORS[5]));
    let clamped = if luminance > hi {
        hi
    } else if luminance < lo {
        lo
    } else {
        luminance
    };
    let (mut left, mut right) = (0, 0);
    for i in 0..5 {
        if clamped >= f64::from(BARTEN_ANCHORS[i]) && clamped <= f64::from(BARTEN_ANCHORS[i + 1]) {
            (left, right) = (i, i + 1);
            break;
        }
    }
    let left_position = f64::from(BARTEN_ANCHORS[left]).log10() as f32;
    let right_position = f64::from(BARTEN_ANCHORS[right]).log10() as f32;
    let at = clamped.log10() as f32;
    let p = |k: usize| {
        linear_interpolate(left_position, BARTEN_PARAMS[left][k], right_position, BARTEN_PARAMS[right][k], at)
    };
    let (p0, p1, p2, p3) = (p(1), p(2), p(3), p(4));
    let a = (1.0 + f64::from(p0 * sf).powf(f64::from(p1))) as f32;
    let inner = 1.0 - (-f64::from(sf / 7.0).powf(2.0)).exp();
    let b = (1.0 / inner.powf(f64::from(p2))) as f32;
    let csf = (f64::from(p3) / f64::from(a * b).powf(0.5)) as f32;
    // float * float * float, then * double, rounded to the float returned.
    (f64::from(csf * barten_mtf(sf) * barten_rod_cone_sens(luminance as f32)) * scale) as f32
}

/// `adm_native_csf` (adm_csf_tools.h): the DLM paper's CSF; `theta` 0 or 45
/// (the oblique effect).
pub fn adm_native_csf(lambda: usize, norm_view_dist: f64, ref_display_height: i32, theta: i32) -> f32 {
    let r = display_resolution(norm_view_dist, ref_display_height);
    let mut sf = (f64::from(r) / 2f64.powi(lambda as i32 + 1)) as f32;
    if theta == 45 {
        sf = (f64::from(sf) / 0.7) as f32;
    }
    let sf = f64::from(sf);
    ((0.31 + 0.69 * sf) * (-0.29 * sf).exp()) as f32
}

/// The blended Barten/Watson CSF coefficients, `[theta][scale]` per
/// (display height, viewing distance), legacy and MAE (barten_csf_tools.h).
type Blend = [[f32; 4]; 2];
const BLEND_1080_3H: Blend = [[0.01183, 0.025026, 0.04295, 0.058621], [0.004302, 0.011778, 0.023918, 0.035901]];
const BLEND_1080_5H: Blend = [[0.004212, 0.014809, 0.029642, 0.047464], [0.000984, 0.005852, 0.0146, 0.027574]];
const BLEND_2160_3H: Blend = [[0.00226, 0.01183, 0.025026, 0.04295], [0.000479, 0.004302, 0.011778, 0.023918]];
const BLEND_2160_5H: Blend = [[0.000092, 0.004212, 0.014809, 0.029642], [0.000050, 0.000984, 0.005852, 0.0146]];
const BLEND_720_3H: Blend = [[0.018715, 0.035637, 0.052798, 0.061509], [0.007999, 0.018396, 0.031851, 0.037718]];
const BLEND_720_5H: Blend = [[0.010144, 0.022561, 0.040309, 0.05672], [0.003463, 0.010282, 0.021839, 0.034641]];
const BLEND_480_3H: Blend = [[0.027961, 0.045875, 0.060275, 0.056234], [0.013572, 0.026277, 0.036959, 0.034511]];
const BLEND_480_5H: Blend = [[0.016781, 0.032822, 0.05032, 0.061594], [0.00691, 0.016545, 0.029917, 0.037777]];
const MAE_1080_3H: Blend = [[0.011249, 0.022606, 0.035930, 0.045673], [0.004097, 0.010921, 0.021430, 0.031313]];
const MAE_1080_5H: Blend = [[0.004052, 0.013939, 0.026298, 0.038833], [0.000927, 0.005544, 0.013415, 0.024515]];
const MAE_2160_3H: Blend = [[0.002166, 0.011249, 0.022606, 0.035930], [0.000447, 0.004097, 0.010921, 0.021430]];
const MAE_2160_5H: Blend = [[0.000077, 0.004052, 0.013939, 0.026298], [0.000045, 0.000927, 0.005544, 0.013415]];
const MAE_720_3H: Blend = [[0.017329, 0.030870, 0.042134, 0.047410], [0.007509, 0.016707, 0.028072, 0.032722]];
const MAE_720_5H: Blend = [[0.009689, 0.020577, 0.034162, 0.044523], [0.003302, 0.009579, 0.019661, 0.030318]];
const MAE_480_3H: Blend = [[0.024969, 0.037825, 0.046676, 0.043974], [0.012511, 0.023424, 0.032139, 0.030166]];
const MAE_480_5H: Blend = [[0.015665, 0.028766, 0.040612, 0.047483], [0.006514, 0.015107, 0.026476, 0.032776]];

/// `-EINVAL` returned as a float: what libvmaf's blended CSF gives for a
/// display it has no coefficients for — and then uses as the CSF factor.
pub const BLEND_UNKNOWN_DISPLAY: f32 = -22.0;

/// `barten_watson_blend_csf` (`mae` false) and `barten_watson_blend_csf_mae`
/// (`mae` true): a table lookup by display height and viewing distance;
/// [`BLEND_UNKNOWN_DISPLAY`] for any other display, exactly as libvmaf.
pub fn barten_watson_blend_csf(scale: usize, theta: usize, norm_view_dist: f64, height: i32, mae: bool) -> f32 {
    let pick = |legacy: &'static Blend, fixed: &'static Blend| if mae { fixed } else { legacy };
    let table = match (height, norm_view_dist) {
        (1080, 3.0) => pick(&BLEND_1080_3H, &MAE_1080_3H),
        (1080, 5.0) => pick(&BLEND_1080_5H, &MAE_1080_5H),
        // 2160 at 1.5H has the pixels per degree of 1080 at 3H.
        (2160, 1.5) => pick(&BLEND_1080_3H, &MAE_1080_3H),
        (2160, 3.0) => pick(&BLEND_2160_3H, &MAE_2160_3H),
        (2160, 5.0) => pick(&BLEND_2160_5H, &MAE_2160_5H),
        (720, 3.0) => pick(&BLEND_720_3H, &MAE_720_3H),
        (720, 5.0) => pick(&BLEND_720_5H, &MAE_720_5H),
        (480, 3.0) => pick(&BLEND_480_3H, &MAE_480_3H),
        (480, 5.0) => pick(&BLEND_480_5H, &MAE_480_5H),
        _ => return BLEND_UNKNOWN_DISPLAY,
    };
    table[theta][scale]
}

/// The default luminance (cd/m²) both extractors evaluate Barten's CSF at
/// (`DEFAULT_ADM_CSF_LUM`, `DEFAULT_ADM_CSF_LUMINANCE_LEVEL`).
pub const CSF_LUMINANCE: f64 = 100.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watson_is_close_to_libvmafs_fixed_point_factors() {
        // integer_adm.c hard-codes i_rfactor {36453, 36453, 49417} for the
        // default display, "around" 1 / Q scaled by 2^21 (h, v) and 2^23 (d):
        // the computed factors are 36451 and 49414.
        let f1 = 1.0f32 / dwt_quant_step(0, 1, 3.0, 1080);
        let f2 = 1.0f32 / dwt_quant_step(0, 2, 3.0, 1080);
        assert_eq!((f64::from(f1) * 2f64.powi(21)) as u16, 36451);
        assert_eq!((f64::from(f2) * 2f64.powi(23)) as u16, 49414);
    }

    #[test]
    fn the_display_resolution_is_56_55_pixels_per_degree() {
        assert!((display_resolution(3.0, 1080) - 56.548_67).abs() < 1e-4);
    }

    #[test]
    fn blended_tables_know_only_their_displays() {
        assert_eq!(barten_watson_blend_csf(2, 1, 3.0, 1080, false), 0.023918);
        assert_eq!(barten_watson_blend_csf(0, 0, 1.5, 2160, true), 0.011249);
        assert_eq!(barten_watson_blend_csf(0, 0, 4.0, 1080, true), BLEND_UNKNOWN_DISPLAY);
    }

    #[test]
    fn barten_and_native_csfs_are_positive_and_fall_off_at_fine_scales() {
        let b: Vec<f32> = (0..4).map(|s| barten_csf(s, 3.0, 1080, CSF_LUMINANCE, 1.0)).collect();
        assert!(b.iter().all(|&v| v > 0.0 && v.is_finite()), "{b:?}");
        assert!(b[0] < b[3], "{b:?}");
        let n0 = adm_native_csf(0, 3.0, 1080, 0);
        assert!(n0 > 0.0 && adm_native_csf(0, 3.0, 1080, 45) < n0);
    }
}
