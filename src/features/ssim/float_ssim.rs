//! `float_ssim` (libvmaf float_ssim.c + ssim.c `compute_ssim`): SSIM of the
//! lumas after libvmaf's automatic down-scaling, CPU side.

use super::core::{SsimScratch, Sums, Want, iqa_ssim, mean};
use super::filter::{DecimateScratch, decimate, decimated_dims, decimation_reads_outside};
use super::gpu::{Metric, Plan, Shape, SsimGpu, Totals};
use super::{Options, db};
use crate::backend::gpu::Gpu;
use crate::features::Extractor;
use crate::features::gpu::GpuExtractor;
use crate::features::options::{self, OptValue, OptionDef};
use crate::features::picture::float_plane_into;
use crate::fixture::{Frame, Geometry};
use crate::scores::Scores;
use anyhow::Result;
use std::sync::Arc;

/// float_ssim.c's option table.
pub static OPTIONS: &[OptionDef] = &[
    OptionDef::flag("enable_lcs", false),
    OptionDef::flag("enable_db", false),
    OptionDef::flag("clip_db", false),
    OptionDef {
        name: "scale",
        alias: None,
        default: OptValue::Int(0),
        min: Some(0.0),
        max: Some(10.0),
        feature_param: false,
    },
];

pub const SSIM: &str = "float_ssim";
/// What `enable_lcs` adds, in the order float_ssim.c appends them.
pub const LCS: [&str; 3] = ["float_ssim_l", "float_ssim_c", "float_ssim_s"];

/// The metrics for `options`.
pub fn metrics(options: &Options) -> Result<Vec<String>> {
    let config = Config::options(options)?;
    let mut out = vec![SSIM.to_string()];
    if config.lcs {
        out.extend(LCS.iter().map(|s| s.to_string()));
    }
    Ok(out)
}

/// float_ssim's options, resolved for a geometry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    pub lcs: bool,
    pub db: bool,
    pub clip_db: bool,
    /// The `scale` option: 0 chooses from the frame size.
    pub scale_option: usize,
}

impl Config {
    pub fn options(options: &Options) -> Result<Self> {
        options::check("float_ssim", options, OPTIONS)?;
        Ok(Config {
            lcs: options::get_bool(options, OPTIONS, "enable_lcs")?,
            db: options::get_bool(options, OPTIONS, "enable_db")?,
            clip_db: options::get_bool(options, OPTIONS, "clip_db")?,
            scale_option: options::get_int(options, OPTIONS, "scale")? as usize,
        })
    }

    /// The decimation factor for a `w x h` luma.
    pub fn scale(&self, w: usize, h: usize) -> usize {
        if self.scale_option > 0 { self.scale_option } else { auto_scale(w, h) }
    }

    pub fn want(&self) -> Want {
        Want { ssim: true, lcs: self.lcs }
    }
}

/// ssim.c `compute_ssim`'s default factor: `_max(1, _round((float)_min(w,
/// h) / 256.0f))`, with iqa/math_utils.c `_round` (halves away from zero).
pub fn auto_scale(w: usize, h: usize) -> usize {
    let a = w.min(h) as f32 / 256.0;
    let t = a as i32;
    let rounded = if f64::from(a - t as f32) >= 0.5 { t + 1 } else { t };
    rounded.max(1) as usize
}

/// float_ssim's refusal: a decimation that reads outside the picture.
pub fn refuses(geometry: &Geometry, options: &Options) -> Option<String> {
    let config = Config::options(options).ok()?;
    let (w, h) = geometry.plane_dims(0);
    let f = config.scale(w, h);
    let (sw, sh) = decimated_dims(w, h, f);
    (f > 1 && sw > 0 && sh > 0 && (decimation_reads_outside(w, f) || decimation_reads_outside(h, f))).then(|| {
        format!(
            "at scale {f} libvmaf's iqa decimation (_iqa_decimate, one KBND_SYMMETRIC reflection) reads outside a \
             {w}x{h} luma: undefined behaviour in libvmaf, so there is no score to reproduce"
        )
    })
}

/// The scores float_ssim.c records from compute_ssim's sums: `float_ssim`
/// (as dB with `enable_db`) and with `enable_lcs` the l, c, s means, each
/// the f32 that `_iqa_ssim` returns, widened.
pub fn record(config: &Config, max_db: f64, ssim: f32, lcs: [f32; 3], index: usize, out: &mut Scores) {
    let mut score = f64::from(ssim);
    if config.db {
        score = db(score, max_db);
    }
    out.record(SSIM, index, score);
    if config.lcs {
        for (name, v) in LCS.iter().zip(lcs) {
            out.record(name, index, f64::from(v));
        }
    }
}

/// [`record`] from the GPU pipeline's means of float_ssim's map (`[l c s,
/// l, c, s]`, those its metrics asked for).
pub fn record_map(config: &Config, max_db: f64, map: [Option<f32>; 4], index: usize, out: &mut Scores) -> Result<()> {
    let [ssim, l, c, s] = map;
    let ssim = ssim.ok_or_else(|| anyhow::anyhow!("no SSIM mean"))?;
    record(config, max_db, ssim, [l, c, s].map(|v| v.unwrap_or(0.0)), index, out);
    Ok(())
}

/// The means of compute_ssim's sums: (ssim, [l, c, s]).
pub fn means(sums: &Sums) -> (f32, [f32; 3]) {
    let m = |v| mean(v, sums.pixels);
    (m(sums.ssim), [m(sums.l), m(sums.c), m(sums.s)])
}

/// The GPU pipeline: the luma, decimated at the scale when it is above 1,
/// and one map with float_ssim's metrics.
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
    let f = config.scale(w, h);
    let mut levels = vec![(w, h)];
    let taps = if f > 1 {
        levels.push(decimated_dims(w, h, f));
        vec![1.0f32 / (f * f) as f32; f * f]
    } else {
        Vec::new()
    };
    let metrics = if config.lcs { vec![Metric::Ssim, Metric::L, Metric::C, Metric::S] } else { vec![Metric::Ssim] };
    let plan = Plan { maps: vec![(levels.len() - 1, metrics)], levels, factor: f, k: f, taps };
    let max_db = super::max_db(config.clip_db, geometry);
    let record = move |means: &[[Option<f32>; 4]], index: usize, out: &mut Scores| {
        record_map(&config, max_db, means[0], index, out)
    };
    let pipeline = SsimGpu::new(&gpu, geometry, plan, totals, shape, Box::new(record))?;
    GpuExtractor::boxed(gpu, pipeline)
}

/// The CPU reference.
pub struct FloatSsimCpu {
    config: Config,
    scale: usize,
    max_db: f64,
    planes: [Vec<f32>; 2],
    decimated: [Vec<f32>; 2],
    decimate: DecimateScratch,
    ssim: SsimScratch,
}

impl FloatSsimCpu {
    pub fn new(geometry: &Geometry, options: &Options) -> Result<Self> {
        let config = Config::options(options)?;
        let (w, h) = geometry.plane_dims(0);
        Ok(FloatSsimCpu {
            config,
            scale: config.scale(w, h),
            max_db: super::max_db(config.clip_db, geometry),
            planes: Default::default(),
            decimated: Default::default(),
            decimate: DecimateScratch::default(),
            ssim: SsimScratch::default(),
        })
    }
}

impl Extractor for FloatSsimCpu {
    fn extract(&mut self, index: usize, reference: &Frame, distorted: &Frame, out: &mut Scores) -> Result<()> {
        let (mut w, mut h) = reference.geometry.plane_dims(0);
        let [r, d] = &mut self.planes;
        float_plane_into(reference, 0, 0, r);
        float_plane_into(distorted, 0, 0, d);
        let f = self.scale;
        let sums = if f > 1 {
            let taps = vec![1.0f32 / (f * f) as f32; f * f];
            let [dr, dd] = &mut self.decimated;
            decimate(r, w, h, f, f, &taps, dr, &mut self.decimate);
            decimate(d, w, h, f, f, &taps, dd, &mut self.decimate);
            (w, h) = decimated_dims(w, h, f);
            iqa_ssim(dr, dd, w, h, self.config.want(), &mut self.ssim)
        } else {
            iqa_ssim(r, d, w, h, self.config.want(), &mut self.ssim)
        };
        let (ssim, lcs) = means(&sums);
        record(&self.config, self.max_db, ssim, lcs, index, out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_scale_rounds_halves_up() {
        assert_eq!(auto_scale(1920, 1080), 4); // 4.22
        assert_eq!(auto_scale(200, 184), 1); // 0.72
        assert_eq!(auto_scale(100, 100), 1); // 0.39: at least 1
        assert_eq!(auto_scale(383, 1000), 1); // 1.496
        assert_eq!(auto_scale(1000, 384), 2); // 1.5
        assert_eq!(auto_scale(3840, 2160), 8); // 8.44
        assert_eq!(auto_scale(640, 640), 3); // 2.5
    }

    #[test]
    fn explicit_scale_overrides() {
        let mut o = Options::new();
        o.insert("scale".into(), 3.into());
        assert_eq!(Config::options(&o).unwrap().scale(1920, 1080), 3);
        o.insert("scale".into(), 11.into());
        assert!(Config::options(&o).unwrap_err().to_string().contains("outside its range [0, 10]"));
    }

    #[test]
    fn tiny_pictures_at_a_large_scale_are_refused() {
        let g = |w, h| Geometry { width: w, height: h, bit_depth: 8, chroma: crate::fixture::Chroma::Yuv444 };
        let mut o = Options::new();
        o.insert("scale".into(), 8.into());
        assert!(refuses(&g(3, 64), &o).is_some_and(|why| why.contains("3x64")));
        assert!(refuses(&g(64, 64), &o).is_none());
        assert!(refuses(&g(1920, 1080), &Options::new()).is_none());
    }
}
