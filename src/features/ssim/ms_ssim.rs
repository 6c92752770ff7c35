//! `float_ms_ssim` (libvmaf float_ms_ssim.c + ms_ssim.c
//! `compute_ms_ssim`): Wang's multi-scale SSIM over a 5-level pyramid,
//! CPU side.

use super::core::{SsimScratch, Sums, Want, iqa_ssim, mean};
use super::filter::{DecimateScratch, decimate, decimated_dims};
use super::gpu::{Metric, Plan, Shape, SsimGpu, Totals};
use super::tables::{ALPHAS, BETAS, GAMMAS, LPF, LPF_LEN, SCALES, WINDOW};
use super::{Options, db};
use crate::backend::gpu::Gpu;
use crate::features::Extractor;
use crate::features::gpu::GpuExtractor;
use crate::features::options::{self, OptionDef};
use crate::features::picture::float_plane_into;
use crate::fixture::{Frame, Geometry};
use crate::scores::Scores;
use anyhow::{Result, bail};
use std::sync::Arc;

/// float_ms_ssim.c's option table.
pub static OPTIONS: &[OptionDef] =
    &[OptionDef::flag("enable_lcs", false), OptionDef::flag("enable_db", false), OptionDef::flag("clip_db", false)];

pub const MS_SSIM: &str = "float_ms_ssim";

/// What `enable_lcs` adds, in the order float_ms_ssim.c appends them: the
/// luminance means of the 5 scales, then contrast, then structure.
pub fn lcs_metrics() -> Vec<String> {
    ["l", "c", "s"].iter().flat_map(|t| (0..SCALES).map(move |k| format!("float_ms_ssim_{t}_scale{k}"))).collect()
}

pub fn metrics(options: &Options) -> Result<Vec<String>> {
    let config = Config::options(options)?;
    let mut out = vec![MS_SSIM.to_string()];
    if config.lcs {
        out.extend(lcs_metrics());
    }
    Ok(out)
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    pub lcs: bool,
    pub db: bool,
    pub clip_db: bool,
}

impl Config {
    pub fn options(options: &Options) -> Result<Self> {
        options::check("float_ms_ssim", options, OPTIONS)?;
        Ok(Config {
            lcs: options::get_bool(options, OPTIONS, "enable_lcs")?,
            db: options::get_bool(options, OPTIONS, "enable_db")?,
            clip_db: options::get_bool(options, OPTIONS, "clip_db")?,
        })
    }
}

/// The words libvmaf prints when it refuses a frame.
pub const TOO_SMALL: &str = "error: scale below 1x1!";

/// compute_ms_ssim's size check, which fails every frame of a luma where
/// any of the 5 scales (the size halved, rounding down, 4 times) is below
/// the 11x11 window: below 176 in either dimension.
pub fn refuses(geometry: &Geometry, _: &Options) -> Option<String> {
    let (w, h) = geometry.plane_dims(0);
    let fits = (0..SCALES).all(|k| (w >> k) >= WINDOW && (h >> k) >= WINDOW);
    (!fits).then(|| {
        format!(
            "libvmaf's compute_ms_ssim fails every frame with \"{TOO_SMALL}\": each of its {SCALES} scales (the \
             {w}x{h} luma halved {} times, rounding down) must be at least {WINDOW}x{WINDOW}, the Gaussian window, \
             so at least 176x176",
            SCALES - 1
        )
    })
}

/// The sizes of the pyramid's levels: `_iqa_decimate` at factor 2 gives
/// `w / 2 + (w & 1)` (compute_ms_ssim's own loop uses the same).
pub fn level_dims(w: usize, h: usize) -> [(usize, usize); SCALES] {
    let mut dims = [(w, h); SCALES];
    for k in 1..SCALES {
        dims[k] = decimated_dims(dims[k - 1].0, dims[k - 1].1, 2);
    }
    dims
}

/// The f32 means `_iqa_ssim` returns for one scale: (l, c, s).
pub fn scale_means(sums: &Sums) -> [f32; 3] {
    [mean(sums.l, sums.pixels), mean(sums.c, sums.pixels), mean(sums.s, sums.pixels)]
}

/// compute_ms_ssim's product over the scales, `msssim *= pow(l, alpha) *
/// pow(c, beta) * pow(s, gamma)` in f64 from the f32 means, and
/// float_ms_ssim.c's recording: the score (as dB with `enable_db`) and,
/// with `enable_lcs`, every scale's l, c and s. A product that reaches
/// infinity fails the frame, as in libvmaf.
pub fn record(config: &Config, max_db: f64, means: &[[f32; 3]; SCALES], index: usize, out: &mut Scores) -> Result<()> {
    let mut msssim = 1.0f64;
    for (k, &[l, c, s]) in means.iter().enumerate() {
        let term = f64::from(l).powf(f64::from(ALPHAS[k]))
            * f64::from(c).powf(f64::from(BETAS[k]))
            * f64::from(s).powf(f64::from(GAMMAS[k]));
        msssim *= term;
        if msssim == f64::INFINITY {
            bail!("libvmaf's compute_ms_ssim fails this frame: \"error: ms_ssim is INFINITY.\"");
        }
    }
    let score = if config.db { db(msssim, max_db) } else { msssim };
    out.record(MS_SSIM, index, score);
    if config.lcs {
        for (t, name) in ["l", "c", "s"].iter().enumerate() {
            for (k, m) in means.iter().enumerate() {
                out.record(&format!("float_ms_ssim_{name}_scale{k}"), index, f64::from(m[t]));
            }
        }
    }
    Ok(())
}

/// The GPU pipeline's plan for a `w x h` luma: the 5-level pyramid and one
/// map per level with c and s, and l where a score reads it
/// ([`reads_l`]).
pub fn gpu_plan(w: usize, h: usize, lcs: bool) -> Plan {
    let maps = (0..SCALES)
        .map(|k| (k, if reads_l(k, lcs) { vec![Metric::L, Metric::C, Metric::S] } else { vec![Metric::C, Metric::S] }))
        .collect();
    Plan { levels: level_dims(w, h).to_vec(), factor: 2, k: LPF_LEN, taps: lpf_taps(), maps }
}

/// Whether scale k's mean of l reaches a score: with `enable_lcs` (its
/// own metric), or where compute_ms_ssim's exponent for it is not 0 (the
/// last scale). `pow(l, 0)` is 1 whatever l is, NaN included, so scales
/// 0-3's l cannot change float_ms_ssim: the GPU pipelines leave those
/// maps' l out (a term and its three sums a pixel fewer; the CPU
/// reference computes every mean, as libvmaf does).
pub fn reads_l(k: usize, lcs: bool) -> bool {
    lcs || ALPHAS[k] != 0.0
}

/// [`record`] from the GPU pipeline's means of the five maps (`[l c s, l,
/// c, s]` each; l, c and s are the ones read, l only where [`reads_l`]).
pub fn record_maps(
    config: &Config,
    max_db: f64,
    means: &[[Option<f32>; 4]],
    index: usize,
    out: &mut Scores,
) -> Result<()> {
    let mut lcs = [[0f32; 3]; SCALES];
    for (k, (scale, m)) in lcs.iter_mut().zip(means).enumerate() {
        for (t, (v, got)) in scale.iter_mut().zip(&m[1..]).enumerate() {
            *v = match got {
                Some(mean) => *mean,
                // An l the plan leaves out: raised to 0, any value gives 1.
                None if t == 0 && !reads_l(k, config.lcs) => f32::NAN,
                None => bail!("scale {k}'s mean of {} is missing", ["l", "c", "s"][t]),
            };
        }
    }
    record(config, max_db, &lcs, index, out)
}

/// ms_ssim.c's low-pass filter as the row-major 81 taps `_iqa_decimate` reads.
pub fn lpf_taps() -> Vec<f32> {
    LPF.iter().flatten().copied().collect()
}

/// The GPU pipeline: the 5-level pyramid and one map per level with the
/// l, c and s metrics.
pub fn gpu_extractor(gpu: Arc<dyn Gpu>, geometry: &Geometry, options: &Options) -> Result<Box<dyn Extractor>> {
    gpu_pipeline(gpu, geometry, options, Totals::Decide, None)
}

/// [`gpu_extractor`] with the totals made as `totals` says, in `shape`
/// (`None`: as [`super::gpu::shape_for`] chooses).
pub fn gpu_pipeline(
    gpu: Arc<dyn Gpu>,
    geometry: &Geometry,
    options: &Options,
    totals: Totals,
    shape: Option<Shape>,
) -> Result<Box<dyn Extractor>> {
    let config = Config::options(options)?;
    let (w, h) = geometry.plane_dims(0);
    let plan = gpu_plan(w, h, config.lcs);
    let max_db = super::max_db(config.clip_db, geometry);
    let record = move |means: &[[Option<f32>; 4]], index: usize, out: &mut Scores| {
        record_maps(&config, max_db, means, index, out)
    };
    let pipeline = SsimGpu::new(&gpu, geometry, plan, totals, shape, Box::new(record))?;
    GpuExtractor::boxed(gpu, pipeline)
}

/// The CPU reference.
pub struct MsSsimCpu {
    config: Config,
    max_db: f64,
    /// The pyramid of each picture: level 0 is the luma as floats.
    levels: [[Vec<f32>; SCALES]; 2],
    lpf: Vec<f32>,
    decimate: DecimateScratch,
    ssim: SsimScratch,
}

impl MsSsimCpu {
    pub fn new(geometry: &Geometry, options: &Options) -> Result<Self> {
        let config = Config::options(options)?;
        Ok(MsSsimCpu {
            config,
            max_db: super::max_db(config.clip_db, geometry),
            levels: Default::default(),
            lpf: lpf_taps(),
            decimate: DecimateScratch::default(),
            ssim: SsimScratch::default(),
        })
    }
}

impl MsSsimCpu {
    /// compute_ms_ssim's sums of each scale: the pyramid of both lumas and
    /// `_iqa_ssim` on every level, the first asked for `first` (l, c and s
    /// at least; the joint pass also wants the product there).
    pub fn scale_sums(&mut self, reference: &Frame, distorted: &Frame, first: Want) -> [Sums; SCALES] {
        let (w, h) = reference.geometry.plane_dims(0);
        let dims = level_dims(w, h);
        for (levels, frame) in self.levels.iter_mut().zip([reference, distorted]) {
            float_plane_into(frame, 0, 0, &mut levels[0]);
            for k in 1..SCALES {
                let (below, above) = levels.split_at_mut(k);
                let (lw, lh) = dims[k - 1];
                decimate(&below[k - 1], lw, lh, 2, LPF_LEN, &self.lpf, &mut above[0], &mut self.decimate);
            }
        }
        let [r, d] = &self.levels;
        std::array::from_fn(|k| {
            let (lw, lh) = dims[k];
            let want = if k == 0 { first } else { Want { ssim: false, lcs: true } };
            iqa_ssim(&r[k], &d[k], lw, lh, want, &mut self.ssim)
        })
    }

    /// float_ms_ssim.c's recording of a frame's scale sums.
    pub fn record(&self, sums: &[Sums; SCALES], index: usize, out: &mut Scores) -> Result<()> {
        record(&self.config, self.max_db, &sums.each_ref().map(scale_means), index, out)
    }
}

impl Extractor for MsSsimCpu {
    fn extract(&mut self, index: usize, reference: &Frame, distorted: &Frame, out: &mut Scores) -> Result<()> {
        let sums = self.scale_sums(reference, distorted, Want { ssim: false, lcs: true });
        self.record(&sums, index, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::Chroma;

    #[test]
    fn frames_below_176_are_refused_in_libvmafs_words() {
        let g = |w, h| Geometry { width: w, height: h, bit_depth: 8, chroma: Chroma::Yuv420 };
        assert!(refuses(&g(176, 176), &Options::new()).is_none());
        assert!(refuses(&g(1920, 1080), &Options::new()).is_none());
        for (w, h) in [(175, 500), (500, 175), (176, 144)] {
            let why = refuses(&g(w, h), &Options::new()).unwrap();
            assert!(why.contains(TOO_SMALL) && why.contains(&format!("{w}x{h}")), "{why}");
        }
    }

    #[test]
    fn levels_halve_rounding_odd_sizes_up() {
        assert_eq!(level_dims(200, 184), [(200, 184), (100, 92), (50, 46), (25, 23), (13, 12)]);
        assert_eq!(level_dims(1920, 1080), [(1920, 1080), (960, 540), (480, 270), (240, 135), (120, 68)]);
    }

    #[test]
    fn the_gpu_plan_leaves_out_only_the_l_no_score_reads() {
        let metrics = |lcs| gpu_plan(200, 184, lcs).maps.into_iter().map(|(_, m)| m).collect::<Vec<_>>();
        let all = vec![Metric::L, Metric::C, Metric::S];
        assert!(metrics(true).iter().all(|m| *m == all));
        let plain = metrics(false);
        assert!(plain[..SCALES - 1].iter().all(|m| *m == [Metric::C, Metric::S]));
        assert_eq!(plain[SCALES - 1], all);
        // The score with every l and with scales 0-3's left out: the same
        // bits, whatever those l were.
        let l = [0.25f32, 0.5, f32::NAN, 1.5, 0.75];
        let c = [0.9f32, 0.8, 0.7, 0.6, 0.95];
        let s = [0.99f32, 0.98, 0.97, 0.96, 0.94];
        let full: Vec<[Option<f32>; 4]> = (0..SCALES).map(|k| [None, Some(l[k]), Some(c[k]), Some(s[k])]).collect();
        let mut plain = full.clone();
        for m in &mut plain[..SCALES - 1] {
            m[1] = None;
        }
        let config = Config::options(&Options::new()).unwrap();
        let score = |means: &[[Option<f32>; 4]]| {
            let mut out = Scores::default();
            record_maps(&config, 100.0, means, 0, &mut out).unwrap();
            out.get(MS_SSIM).unwrap()[0].to_bits()
        };
        assert_eq!(score(&plain), score(&full));
        let value = f64::from_bits(score(&full));
        assert!(value > 0.0 && value < 1.0, "{value}");
        // With enable_lcs every l is recorded: one missing is an error.
        let mut with_lcs = Options::new();
        with_lcs.insert("enable_lcs".into(), true.into());
        let lcs_config = Config::options(&with_lcs).unwrap();
        let err = record_maps(&lcs_config, 100.0, &plain, 0, &mut Scores::default()).unwrap_err();
        assert!(err.to_string().contains("scale 0's mean of l is missing"), "{err}");
    }

    #[test]
    fn lcs_metrics_follow_libvmafs_order() {
        let m = lcs_metrics();
        assert_eq!(m.len(), 15);
        assert_eq!(
            (m[0].as_str(), m[5].as_str(), m[14].as_str()),
            ("float_ms_ssim_l_scale0", "float_ms_ssim_c_scale0", "float_ms_ssim_s_scale4")
        );
    }
}
