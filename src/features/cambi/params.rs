//! cambi's options (cambi.c's option table) and what its `init` makes of
//! them for a given input: the encoding and source sizes, the windows, the
//! visibility thresholds and the band of luma levels worth counting, and
//! every refusal (`init` returning -EINVAL) in libvmaf's words.

use super::luminance::{self, Eotf};
use super::tables::{CONTRAST_WEIGHTS, NUM_SCALES, RECIPROCAL_LUT_SIZE};
use crate::features::Options;
use crate::features::options::{self, OptValue, OptionDef};
use crate::fixture::Geometry;
use anyhow::{Result, bail};

/// cambi.c `CAMBI_MIN_WIDTH_HEIGHT`.
pub const MIN_WIDTH_HEIGHT: u32 = 216;
/// cambi.c `MASK_FILTER_SIZE`.
pub const MASK_FILTER_SIZE: u16 = 7;

const fn opt(
    name: &'static str,
    alias: Option<&'static str>,
    default: OptValue,
    range: Option<(f64, f64)>,
    feature_param: bool,
) -> OptionDef {
    let (min, max) = match range {
        Some((lo, hi)) => (Some(lo), Some(hi)),
        None => (None, None),
    };
    OptionDef { name, alias, default, min, max, feature_param }
}

/// cambi.c `options[]`, in its order. `heatmaps_path` defaults to NULL
/// there; here the empty string stands for "not set".
pub static OPTIONS: &[OptionDef] = &[
    opt("cambi_max_val", Some("cmxv"), OptValue::Double(1000.0), Some((0.0, 1000.0)), true),
    opt("enc_width", Some("encw"), OptValue::Int(0), Some((180.0, 7680.0)), true),
    opt("enc_height", Some("ench"), OptValue::Int(0), Some((150.0, 7680.0)), true),
    opt("enc_bitdepth", Some("encbd"), OptValue::Int(0), Some((6.0, 16.0)), true),
    opt("src_width", Some("srcw"), OptValue::Int(0), Some((320.0, 7680.0)), true),
    opt("src_height", Some("srch"), OptValue::Int(0), Some((200.0, 4320.0)), true),
    opt("window_size", Some("ws"), OptValue::Int(65), Some((15.0, 127.0)), true),
    opt("topk", None, OptValue::Double(0.6), Some((0.0001, 1.0)), true),
    opt("cambi_topk", Some("ctpk"), OptValue::Double(0.6), Some((0.0001, 1.0)), true),
    opt("tvi_threshold", Some("tvit"), OptValue::Double(0.019), Some((0.0001, 1.0)), true),
    opt("cambi_vis_lum_threshold", Some("vlt"), OptValue::Double(0.0), Some((0.0, 300.0)), true),
    opt("max_log_contrast", Some("mlc"), OptValue::Int(2), Some((0.0, 5.0)), true),
    opt("heatmaps_path", None, OptValue::Str(""), None, false),
    opt("full_ref", None, OptValue::Bool(false), None, false),
    opt("eotf", None, OptValue::Str("bt1886"), None, true),
    opt("cambi_eotf", Some("ceot"), OptValue::Str("bt1886"), None, true),
    opt("cambi_high_res_speedup", Some("hrs"), OptValue::Int(0), Some((0.0, 2160.0)), true),
];

/// cambi.c `DEFAULT_CAMBI_TOPK_POOLING`.
const DEFAULT_TOPK: f64 = 0.6;

/// The options, checked and resolved as far as they go without an input
/// (cambi.c `init` before it looks at the picture size).
#[derive(Debug, Clone)]
pub struct Settings {
    enc_width: u32,
    enc_height: u32,
    enc_bitdepth: u32,
    src_width: u32,
    src_height: u32,
    window_size: u32,
    /// `topk` if it was changed from its default, else `cambi_topk`.
    pub topk: f64,
    tvi_threshold: f64,
    vis_lum_threshold: f64,
    max_log_contrast: u32,
    pub full_ref: bool,
    /// `cambi_eotf` if it was changed from its default, else `eotf`.
    eotf: Eotf,
    high_res_speedup: u32,
    pub max_val: f64,
}

impl Settings {
    pub fn new(options: &Options) -> Result<Self> {
        options::check("cambi", options, OPTIONS)?;
        let int = |name| -> Result<u32> { Ok(options::get_int(options, OPTIONS, name)? as u32) };
        let double = |name| options::get_double(options, OPTIONS, name);
        let heatmaps = options::get_str(options, OPTIONS, "heatmaps_path")?;
        if !heatmaps.is_empty() {
            bail!(
                "cambi option `heatmaps_path` makes libvmaf write per-scale heatmap files; ulpgate compares \
                 scores and writes no files: leave it unset"
            );
        }
        let eotf = options::get_str(options, OPTIONS, "eotf")?;
        let cambi_eotf = options::get_str(options, OPTIONS, "cambi_eotf")?;
        let effective_eotf = if cambi_eotf != "bt1886" { cambi_eotf } else { eotf };
        let topk = double("topk")?;
        Ok(Settings {
            enc_width: int("enc_width")?,
            enc_height: int("enc_height")?,
            enc_bitdepth: int("enc_bitdepth")?,
            src_width: int("src_width")?,
            src_height: int("src_height")?,
            window_size: int("window_size")?,
            topk: if topk != DEFAULT_TOPK { topk } else { double("cambi_topk")? },
            tvi_threshold: double("tvi_threshold")?,
            vis_lum_threshold: double("cambi_vis_lum_threshold")?,
            max_log_contrast: int("max_log_contrast")?,
            full_ref: options::get_bool(options, OPTIONS, "full_ref")?,
            eotf: Eotf::parse(&effective_eotf).map_err(|e| anyhow::anyhow!("cambi option eotf/cambi_eotf: {e}"))?,
            high_res_speedup: int("cambi_high_res_speedup")?,
            max_val: double("cambi_max_val")?,
        })
    }
}

/// The metrics cambi prints under `options` (the feature parameters rename
/// the main score; full_ref's two extra scores keep their names, as libvmaf's
/// feature-name dictionary holds only `Cambi_feature_cambi_score`).
pub fn metrics(options: &Options) -> Result<Vec<String>> {
    let settings = Settings::new(options)?;
    let mut out = vec![options::metric_name("cambi", options, OPTIONS)];
    if settings.full_ref {
        out.extend(["cambi_source".to_string(), "cambi_full_reference".to_string()]);
    }
    Ok(out)
}

/// The luma levels cambi counts and the thresholds `c_value_pixel` tests,
/// from init's `tvi_for_diff`, `vlt_luma`, `v_band_base` and `v_band_size`.
#[derive(Debug, Clone, PartialEq)]
pub struct Contrast {
    /// `1 << max_log_contrast`.
    pub num_diffs: u16,
    /// `tvi_for_diff[d] + num_diffs`: a step of `d + 1` levels counts at a
    /// level `v` only if `v + num_diffs <= tvi[d]`.
    pub tvi: Vec<u16>,
    pub vlt_luma: u16,
    /// `g_contrast_weights[d]`.
    pub weights: Vec<i32>,
    /// The first level counted (`v_band_base`).
    pub band_base: u16,
    /// How many levels from `band_base` are counted (`v_band_size`); 0 when
    /// libvmaf's band is empty (its size wraps around), where no pixel can
    /// have a c-value (see [`Contrast::new`]).
    pub band_size: u16,
}

impl Contrast {
    fn new(settings: &Settings) -> Result<Self> {
        let num_diffs = 1u16 << settings.max_log_contrast;
        let tvi = (0..num_diffs)
            .map(|d| {
                let t = luminance::tvi_for_diff(i32::from(d) + 1, settings.tvi_threshold, settings.eotf)?;
                Ok((t + i32::from(num_diffs)) as u16)
            })
            .collect::<Result<Vec<u16>>>()?;
        // c_value_pixel reads the histogram at a level up to tvi[d] - num_diffs
        // + d + 1, inside the band only if the thresholds never shrink.
        if tvi.windows(2).any(|w| w[0] > w[1]) {
            bail!("cambi: visibility thresholds {tvi:?} are not monotonic; libvmaf would read outside its histograms");
        }
        let vlt_luma = luminance::vlt_luma(settings.vis_lum_threshold, settings.eotf)?;
        let lo = i32::from(vlt_luma) - 3 * i32::from(num_diffs) + 1;
        let band_base = lo.max(0) as u16;
        let last = tvi[usize::from(num_diffs) - 1];
        // libvmaf's `tvi + 1 - base` wraps around as a uint16_t when the
        // visibility floor lies above every threshold. A pixel then needs
        // v >= base and v + num_diffs <= tvi[d] <= last < base - 1 at once to
        // have a c-value: none has, so counting nothing is the same scores.
        // (libvmaf itself, counting into a band that size, reads its
        // histograms out of bounds on some pictures: valgrind, and a SIGSEGV
        // with tvi_threshold=0.0784:cambi_vis_lum_threshold=3.142:eotf=pq
        // in the twenty-eighth session's differential test. Where it
        // finished, it printed these scores.)
        let band_size = (last + 1).saturating_sub(band_base);
        Ok(Contrast {
            num_diffs,
            tvi,
            vlt_luma,
            weights: CONTRAST_WEIGHTS[..usize::from(num_diffs)].to_vec(),
            band_base,
            band_size,
        })
    }

    /// The histogram row of a 10-bit level, if cambi counts it.
    #[inline(always)]
    pub fn level(&self, v: u16) -> Option<u16> {
        let l = v.wrapping_sub(self.band_base);
        (l < self.band_size).then_some(l)
    }
}

/// The sizes one image goes through: cambi scores the distorted picture at
/// the encoding size and, with `full_ref`, the reference at the source size.
#[derive(Debug, Clone, PartialEq)]
pub struct ImagePlan {
    /// Input luma size.
    pub in_width: usize,
    pub in_height: usize,
    /// Preprocessed (10-bit) size.
    pub width: usize,
    pub height: usize,
    /// The adjusted window (odd); `pad = window >> 1`.
    pub window: u16,
    /// `cambi_high_res_speedup` in effect: scale 0 is already halved.
    pub high_res_speedup: bool,
    /// For each output column/row, the input column/row it samples
    /// (`decimate_generic_*`'s nearest-neighbour walk); empty when the sizes
    /// are equal.
    pub x_src: Vec<u32>,
    pub y_src: Vec<u32>,
    /// cambi.c `get_mask_index` for the full-size picture.
    pub mask_index: u16,
    /// (width, height) at each scale, after that scale's decimation.
    pub scales: [(usize, usize); NUM_SCALES],
    /// The top-k count of each scale (`spatial_pooling`).
    pub topk_counts: [usize; NUM_SCALES],
}

impl ImagePlan {
    /// How many times the mask has been halved at `scale`.
    pub fn decimations(&self, scale: usize) -> usize {
        scale + usize::from(self.high_res_speedup)
    }

    pub fn pad(&self) -> usize {
        usize::from(self.window >> 1)
    }

    /// cambi.c `get_pixels_in_window`: the normalization of the score.
    pub fn pixels_in_window(&self) -> u16 {
        let odd = 2 * (self.window >> 1) + 1;
        odd.wrapping_mul(odd)
    }
}

/// Everything cambi's init decides for one input geometry.
#[derive(Debug, Clone)]
pub struct Plan {
    pub settings: Settings,
    pub enc_bitdepth: u32,
    pub contrast: Contrast,
    /// The distorted picture, at the encoding size.
    pub enc: ImagePlan,
    /// The reference picture, at the source size (scored with `full_ref`).
    pub src: ImagePlan,
}

/// Why init refuses an input, in libvmaf's terms.
#[derive(Debug)]
pub enum PlanError {
    /// libvmaf's init returns -EINVAL (or would read outside its buffers).
    Refused(String),
    /// An option combination init fails on whatever the input.
    Options(anyhow::Error),
}

impl Plan {
    pub fn new(geometry: &Geometry, settings: &Settings) -> Result<Plan, PlanError> {
        let s = settings;
        let refuse = |why: String| Err(PlanError::Refused(why));
        let (w, h) = (geometry.width, geometry.height);
        let enc_bitdepth = if s.enc_bitdepth == 0 { u32::from(geometry.bit_depth) } else { s.enc_bitdepth };
        let (mut enc_w, mut enc_h) =
            if s.enc_width == 0 || s.enc_height == 0 { (w, h) } else { (s.enc_width, s.enc_height) };
        let (src_w, src_h) = if s.src_width == 0 || s.src_height == 0 { (w, h) } else { (s.src_width, s.src_height) };
        // An encode that was downscaled is not scaled back up.
        if enc_h > h || enc_w > w {
            (enc_w, enc_h) = (w, h);
        }
        let min = MIN_WIDTH_HEIGHT;
        if enc_w < min && enc_h < min {
            return refuse(format!(
                "cambi's init refuses a picture whose width and height are both below {min} \
                 (CAMBI_MIN_WIDTH_HEIGHT): encoding size {enc_w}x{enc_h}, -EINVAL"
            ));
        }
        if src_w < min && src_h < min {
            return refuse(format!(
                "cambi's init refuses a source whose width and height are both below {min} \
                 (CAMBI_MIN_WIDTH_HEIGHT): source size {src_w}x{src_h}, -EINVAL"
            ));
        }
        if (src_w > enc_w && src_h < enc_h) || (src_w < enc_w && src_h > enc_h) {
            return refuse(format!(
                "cambi's init refuses a source size {src_w}x{src_h} that is wider but shorter (or narrower \
                 but taller) than the encoding size {enc_w}x{enc_h}, -EINVAL"
            ));
        }
        // cambi.c's `decimate_generic_uint16_and_convert_to_10b` copies a
        // 10-bit picture of the encoding size with one memcpy of the input's
        // stride, into a buffer whose stride (32-sample aligned, like every
        // vmaf_picture_alloc) `full_ref` sizes for a wider source: the rows
        // land shifted, and the last rows hold what that buffer held before
        // (the previous frame's source). That score is a bug's, and depends
        // on the caller's picture strides: there is nothing to match.
        let stride = |width: u32| width.div_ceil(32) * 32;
        if s.full_ref && geometry.bit_depth == 10 && (enc_w, enc_h) == (w, h) && stride(src_w.max(enc_w)) != stride(w) {
            return refuse(format!(
                "with full_ref, a source of width {src_w} wider than the {w}-pixel 10-bit input makes libvmaf's \
                 cambi copy the distorted picture into a buffer of another stride with one memcpy \
                 (decimate_generic_uint16_and_convert_to_10b): its rows land shifted, so libvmaf's score has \
                 no defined value to match"
            ));
        }
        let enc_pixels = u64::from(enc_w) * u64::from(enc_h);
        let speedup = match s.high_res_speedup {
            1080 => enc_pixels >= 1920 * 1080,
            1440 => enc_pixels >= 2560 * 1440,
            2160 => enc_pixels >= 3840 * 2160,
            _ => false,
        };
        let contrast = Contrast::new(s).map_err(PlanError::Options)?;
        let enc = image_plan((w, h), (enc_w, enc_h), s, speedup);
        let src = image_plan((w, h), (src_w, src_h), s, speedup);
        let largest = enc.window.max(src.window);
        if usize::from(largest) * usize::from(largest) >= RECIPROCAL_LUT_SIZE {
            return refuse(format!(
                "cambi's init refuses window_size {} at this size: the adjusted window {largest} is too large for \
                 its reciprocal table (CAMBI_RECIPROCAL_LUT_SIZE {RECIPROCAL_LUT_SIZE}), -EINVAL",
                s.window_size
            ));
        }
        for (what, plan) in std::iter::once(("picture", &enc)).chain(s.full_ref.then_some(("source", &src))) {
            if let Some(why) = out_of_bounds(plan) {
                return refuse(format!("the {what}: {why}"));
            }
        }
        Ok(Plan { settings: s.clone(), enc_bitdepth, contrast, enc, src })
    }
}

/// cambi.c `adjust_window_size`: the window scales with (width + height)
/// relative to 4K, halves with the high-resolution speed-up, and is odd.
fn adjust_window(window: u32, width: u32, height: u32, speedup: bool) -> u16 {
    let mut ws = (((window * (width + height)) / 375) >> 4) as u16;
    if speedup {
        ws = (ws + 1) >> 1;
    }
    ws | 1
}

/// cambi.c `ceil_log2`.
fn ceil_log2(num: u32) -> u16 {
    if num == 0 { 0 } else { (32 - (num - 1).leading_zeros()) as u16 }
}

/// cambi.c `get_mask_index`.
fn mask_index(width: u32, height: u32) -> u16 {
    let shifted = (width >> 6) * (height >> 6);
    let fs = i32::from(MASK_FILTER_SIZE);
    ((fs * fs + 3 * (i32::from(ceil_log2(shifted)) - 11) - 1) >> 1) as u16
}

/// decimate_generic_*'s walk: output position `i` samples input position
/// `(int)(start + i * ratio + 0.5)`, the position accumulated in float one
/// ratio at a time, exactly as the C loop does.
fn nearest_indices(input: u32, output: u32) -> Vec<u32> {
    if input == output {
        return Vec::new();
    }
    let ratio = input as f32 / output as f32;
    // `ratio / 2 - 0.5` is a double subtraction rounded back to float: the
    // same as the float subtraction (both round the exact difference once).
    let mut x = ratio / 2.0 - 0.5;
    (0..output)
        .map(|_| {
            let at = (f64::from(x) + 0.5) as i64 as u32;
            x += ratio;
            at
        })
        .collect()
}

fn image_plan(input: (u32, u32), size: (u32, u32), s: &Settings, speedup: bool) -> ImagePlan {
    let (width, height) = (size.0 as usize, size.1 as usize);
    let mut scales = [(0, 0); NUM_SCALES];
    let mut topk_counts = [0; NUM_SCALES];
    let (mut sw, mut sh) = (width, height);
    for scale in 0..NUM_SCALES {
        if scale > 0 || speedup {
            (sw, sh) = ((sw + 1) >> 1, (sh + 1) >> 1);
        }
        scales[scale] = (sw, sh);
        // spatial_pooling: clip((int)(topk * n), 1, n), the double truncated.
        let n = sw * sh;
        topk_counts[scale] = ((s.topk * n as f64) as i64).clamp(1, n as i64) as usize;
    }
    ImagePlan {
        in_width: input.0 as usize,
        in_height: input.1 as usize,
        width,
        height,
        window: adjust_window(s.window_size, size.0, size.1, speedup),
        high_res_speedup: speedup,
        x_src: nearest_indices(input.0, size.0),
        y_src: nearest_indices(input.1, size.1),
        mask_index: mask_index(size.0, size.1),
        scales,
        topk_counts,
    }
}

/// Inputs on which libvmaf's cambi reads outside its pictures, where its
/// result depends on memory it never wrote (or crashes): refused here.
///
/// `calculate_c_values` assumes every scale is at least half a window
/// (`pad = window >> 1`) in each direction: its first pass adds rows
/// 0..pad unconditionally and its edge loops visit columns 0..pad, and its
/// last row loop starts at `height - pad`, a negative row when the scale is
/// shorter than `pad`. At exactly `pad` rows it also computes one row past
/// the picture, which is in memory libvmaf owns except at scale 0 without
/// decimation (the picture buffer is just that tall).
/// `decimate_generic_*` walks the input in float steps; a walk that ends
/// past the input's last column or row reads outside it.
fn out_of_bounds(plan: &ImagePlan) -> Option<String> {
    let pad = plan.pad();
    for (scale, &(w, h)) in plan.scales.iter().enumerate() {
        let rows_needed = if plan.decimations(scale) == 0 { pad + 1 } else { pad };
        if w < pad || h < rows_needed {
            return Some(format!(
                "scale {scale} is {w}x{h}, smaller than libvmaf's c-value pass reads for the {0}x{0} window \
                 (at least {pad} columns and {rows_needed} rows): libvmaf's cambi reads outside its picture there, \
                 so it has no defined score",
                plan.window
            ));
        }
    }
    let past = |idx: &[u32], n: usize| idx.iter().any(|&i| i as usize >= n);
    if past(&plan.x_src, plan.in_width) || past(&plan.y_src, plan.in_height) {
        return Some(format!(
            "resampling {}x{} to {}x{}, libvmaf's nearest-neighbour walk steps past the input's edge",
            plan.in_width, plan.in_height, plan.width, plan.height
        ));
    }
    None
}

/// [`crate::features::FeatureImpl::refuses`]: libvmaf's reason when cambi's
/// init refuses this geometry under these options; `None` when it takes it
/// (bad options are reported by [`metrics`] instead).
pub fn refuses(geometry: &Geometry, options: &Options) -> Option<String> {
    let settings = Settings::new(options).ok()?;
    match Plan::new(geometry, &settings) {
        Err(PlanError::Refused(why)) => Some(why),
        _ => None,
    }
}

/// [`Plan::new`] as an `anyhow` result (extractor construction).
pub fn plan(geometry: &Geometry, options: &Options) -> Result<Plan> {
    let settings = Settings::new(options)?;
    Plan::new(geometry, &settings).map_err(|e| match e {
        PlanError::Refused(why) => anyhow::anyhow!("cambi does not take {geometry} input: {why}"),
        PlanError::Options(e) => e,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::Chroma;
    use serde_json::json;

    fn geo(width: u32, height: u32) -> Geometry {
        Geometry { width, height, bit_depth: 8, chroma: Chroma::Yuv420 }
    }

    fn opts(v: serde_json::Value) -> Options {
        serde_json::from_value(v).unwrap()
    }

    /// libvmaf 3.2.0's 10-bit memcpy into a buffer sized for a wider
    /// source: refused (the differential test found libvmaf's scores 0.003
    /// to 2.8 off the port there, every case 10-bit with a wider source).
    #[test]
    fn a_wider_source_at_10_bits_with_full_ref_is_refused() {
        let g = |width, height, bit_depth| Geometry { width, height, bit_depth, chroma: Chroma::Yuv420 };
        let wide = opts(json!({"full_ref": true, "src_width": 400, "src_height": 300}));
        let why = refuses(&g(330, 278, 10), &wide).unwrap();
        assert!(why.contains("decimate_generic_uint16_and_convert_to_10b"), "{why}");
        // 8 and 12 bits copy row by row; without full_ref the buffer is the
        // input's size; a source whose stride is the input's copies right;
        // an encoding size below the input is scaled row by row.
        assert!(refuses(&g(330, 278, 8), &wide).is_none());
        assert!(refuses(&g(330, 278, 12), &wide).is_none());
        assert!(refuses(&g(330, 278, 10), &opts(json!({"src_width": 400, "src_height": 300}))).is_none());
        let same_stride = opts(json!({"full_ref": true, "src_width": 352, "src_height": 300}));
        assert!(refuses(&g(330, 278, 10), &same_stride).is_none());
        let scaled =
            opts(json!({"full_ref": true, "src_width": 400, "src_height": 300, "enc_width": 320, "enc_height": 240}));
        assert!(refuses(&g(330, 278, 10), &scaled).is_none());
    }

    #[test]
    fn windows_and_mask_index_follow_cambi_c() {
        // 65 * (1920 + 1080) / 375 = 520, >> 4 = 32, | 1 = 33.
        assert_eq!(adjust_window(65, 1920, 1080, false), 33);
        assert_eq!(adjust_window(65, 3840, 2160, false), 65);
        assert_eq!(adjust_window(65, 3840, 2160, true), 33);
        assert_eq!(adjust_window(65, 320, 240, false), 7);
        // (1920 >> 6) * (1080 >> 6) = 480: ceil_log2 9, (49 - 6 - 1) >> 1 = 21.
        assert_eq!(mask_index(1920, 1080), 21);
        assert_eq!(mask_index(320, 240), 13);
        assert_eq!(mask_index(216, 60), 7);
        assert_eq!((ceil_log2(0), ceil_log2(1), ceil_log2(2), ceil_log2(15), ceil_log2(16)), (0, 0, 1, 4, 4));
    }

    #[test]
    fn the_nearest_neighbour_walk_is_the_float_loop() {
        assert!(nearest_indices(320, 320).is_empty());
        assert_eq!(nearest_indices(8, 4), vec![1, 3, 5, 7]);
        // 5 -> 3: ratio 1.6666666, start 0.3333333: (int) 0.83, 2.5, 4.17.
        assert_eq!(nearest_indices(5, 3), vec![0, 2, 4]);
        // Upscaling repeats samples.
        assert_eq!(nearest_indices(2, 4), vec![0, 0, 1, 1]);
    }

    #[test]
    fn small_pictures_are_refused_with_libvmafs_reason() {
        let none = Options::new();
        let why = refuses(&geo(200, 184), &none).unwrap();
        assert!(why.contains("both below 216") && why.contains("CAMBI_MIN_WIDTH_HEIGHT"), "{why}");
        // One side of 216 is enough for the size check.
        assert!(refuses(&geo(216, 200), &none).is_none());
        assert!(refuses(&geo(320, 240), &none).is_none());
        // An encoding size below the minimum is refused too.
        let why = refuses(&geo(320, 240), &opts(json!({"enc_width": 200, "enc_height": 200}))).unwrap();
        assert!(why.contains("encoding size 200x200"), "{why}");
        // Source larger in one direction only.
        let o = opts(json!({"src_width": 400, "src_height": 200, "full_ref": true}));
        assert!(refuses(&geo(320, 240), &o).unwrap().contains("wider but shorter"));
    }

    #[test]
    fn windows_beyond_the_reciprocal_table_are_refused() {
        // 4K: 127 * 6000 / 375 = 2032, >> 4 = 127: 127² >= 4226.
        let o = opts(json!({"window_size": 127}));
        let why = refuses(&Geometry { width: 3840, height: 2160, ..geo(1, 1) }, &o).unwrap();
        assert!(why.contains("reciprocal table"), "{why}");
        assert!(refuses(&Geometry { width: 3840, height: 2160, ..geo(1, 1) }, &Options::new()).is_none());
    }

    #[test]
    fn scales_smaller_than_half_a_window_are_refused() {
        // 3840x216: window 43 (pad 21), scale 4 is 240x14.
        let why = refuses(&geo(3840, 216), &Options::new()).unwrap();
        assert!(why.contains("scale 4 is 240x14") && why.contains("outside its picture"), "{why}");
        assert!(refuses(&geo(1920, 1080), &Options::new()).is_none());
    }

    #[test]
    fn topk_and_eotf_take_the_changed_one_of_their_two_names() {
        let s = Settings::new(&opts(json!({"cambi_topk": 0.3}))).unwrap();
        assert_eq!(s.topk, 0.3);
        let s = Settings::new(&opts(json!({"cambi_topk": 0.3, "topk": 0.5}))).unwrap();
        assert_eq!(s.topk, 0.5);
        let s = Settings::new(&opts(json!({"eotf": "pq"}))).unwrap();
        assert_eq!(s.eotf, Eotf::Pq);
        let s = Settings::new(&opts(json!({"eotf": "pq", "ceot": "bt1886"}))).unwrap();
        assert_eq!(s.eotf, Eotf::Pq);
        let e = Settings::new(&opts(json!({"eotf": "hlg"}))).unwrap_err().to_string();
        assert!(e.contains("unknown EOTF `hlg`"), "{e}");
        let e = Settings::new(&opts(json!({"heatmaps_path": "/tmp/h"}))).unwrap_err().to_string();
        assert!(e.contains("heatmaps_path"), "{e}");
        let e = Settings::new(&opts(json!({"window_size": 13}))).unwrap_err().to_string();
        assert!(e.contains("outside its range [15, 127]"), "{e}");
    }

    #[test]
    fn metric_names_are_libvmafs() {
        // Checked against vmaf 3.2.0 (cambi=window_size=33:topk=0.5:eotf=pq).
        let o = opts(json!({"window_size": 33, "topk": 0.5, "eotf": "pq"}));
        assert_eq!(metrics(&o).unwrap(), vec!["cambi_eotf_pq_topk_0.5_ws_33"]);
        let o = opts(json!({"cambi_topk": 0.3, "tvi_threshold": 0.02, "cambi_max_val": 500.0, "mlc": 3}));
        assert_eq!(metrics(&o).unwrap(), vec!["cambi_cmxv_500_ctpk_0.3_mlc_3_tvit_0.02"]);
        let o = opts(json!({"full_ref": true, "enc_width": 300, "enc_height": 220}));
        assert_eq!(metrics(&o).unwrap(), vec!["cambi_ench_220_encw_300", "cambi_source", "cambi_full_reference"]);
    }

    #[test]
    fn the_default_band_and_thresholds() {
        let plan = plan(&geo(320, 240), &Options::new()).unwrap();
        let c = &plan.contrast;
        assert_eq!((c.num_diffs, c.vlt_luma, c.band_base), (4, 0, 0));
        assert_eq!(usize::from(c.band_size), usize::from(c.tvi[3]) + 1);
        assert_eq!(plan.enc.scales, [(320, 240), (160, 120), (80, 60), (40, 30), (20, 15)]);
        assert_eq!(plan.enc.topk_counts[0], 46080);
        assert_eq!(plan.enc.pixels_in_window(), 49);
    }
}
