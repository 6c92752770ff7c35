//! Feature extractors. One module per feature family holds the CPU
//! reference (a faithful port of libvmaf's arithmetic) and the GPU host
//! pipeline, written once against [`crate::backend::gpu::Gpu`].

pub mod adm;
pub mod ansnr;
pub mod cambi;
pub mod ciede;
pub mod gpu;
pub mod moment;
pub mod motion;
pub mod options;
pub mod picture;
pub mod psnr;
pub mod psnr_hvs;
pub mod seqsum;
pub mod ssim;
pub mod ssimulacra2;
pub mod sums;
pub mod vif;

use crate::backend::gpu::Gpu;
use crate::fixture::{Frame, Geometry, PairSource};
use crate::scores::Scores;
use anyhow::Result;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Extractor options as given in YAML (`enable_chroma: false`, ...).
pub type Options = BTreeMap<String, Value>;

/// Scores a sequence of frame pairs, one pair at a time, like libvmaf's
/// `extract`/`flush`. Temporal features may record a frame's score late.
pub trait Extractor: Send {
    fn extract(&mut self, index: usize, reference: &Frame, distorted: &Frame, out: &mut Scores) -> Result<()>;

    /// Called once after the last frame: record whatever is pending.
    fn flush(&mut self, _out: &mut Scores) -> Result<()> {
        Ok(())
    }

    /// Direct control of a GPU extractor's frames in flight (benchmarks);
    /// `None` for CPU extractors.
    fn gpu_driver(&mut self) -> Option<&mut dyn gpu::GpuDriver> {
        None
    }

    /// `Some` for a *windowed* temporal extractor: one whose score of frame
    /// `i` reads the earlier frames it needs from the source
    /// ([`Extractor::extract_at`]) instead of carrying them from call to
    /// call, and whose cross-frame rules (libvmaf's `flush`: motion2's
    /// minimum with the next frame, motion3) run once over the whole
    /// sequence ([`Extractor::finish_sequence`]). The engine may then score
    /// its frames on several workers, in any order (gpu.rs says why and how).
    fn window(&self) -> Option<gpu::Window> {
        None
    }

    /// Scores frame `index` of `source`, reading what it needs from it: a
    /// windowed extractor also reads earlier frames; a GPU extractor reads
    /// straight into its upload staging. The default reads the pair and
    /// calls [`Extractor::extract`].
    fn extract_at(&mut self, index: usize, source: &dyn PairSource, out: &mut Scores) -> Result<()> {
        let (r, d) = (source.frame(index, false)?, source.frame(index, true)?);
        self.extract(index, &r, &d, out)
    }

    /// Called once on the scores of every frame of the fixture, in frame
    /// order, after every worker's [`Extractor::flush`]: a windowed
    /// extractor turns its per-frame values into the final metrics here
    /// (libvmaf's `flush`). Nothing by default.
    fn finish_sequence(&self, _scores: &mut Scores, _frames: usize) -> Result<()> {
        Ok(())
    }
}

pub type CpuFactory = fn(&Geometry, &Options) -> Result<Box<dyn Extractor>>;
pub type GpuFactory = fn(Arc<dyn Gpu>, &Geometry, &Options) -> Result<Box<dyn Extractor>>;

/// A joint pass's CPU extractor: [`CpuFactory`] with each feature's options.
pub type JointCpuFactory = fn(&Geometry, &[&Options]) -> Result<Box<dyn Extractor>>;

/// A joint pass's GPU pipeline: [`GpuFactory`] with each feature's options.
pub type JointGpuFactory = fn(Arc<dyn Gpu>, &Geometry, &[&Options]) -> Result<Box<dyn Extractor>>;

/// A feature this build can compute.
pub struct FeatureImpl {
    /// The name libvmaf's `--feature` takes, and the registry's key.
    pub name: &'static str,
    /// The metrics it emits under the given options (libvmaf's names).
    pub metrics: fn(&Options) -> Result<Vec<String>>,
    /// libvmaf's option table for the extractor: every option it takes,
    /// which the registry must list the same way (a test keeps them equal).
    pub options: &'static [options::OptionDef],
    /// The CPU reference. Callers go through [`FeatureImpl::cpu_extractor`],
    /// which refuses what libvmaf refuses first, so a factory need not.
    pub(crate) cpu: CpuFactory,
    /// The host pipeline shared by every GPU backend; `None` until the
    /// feature has kernels. Called through [`FeatureImpl::gpu_extractor`].
    pub(crate) gpu: Option<GpuFactory>,
    /// Every kernel the GPU pipeline may load (tests check each one's
    /// dialects against its spec; a kernel listed nowhere is an error).
    pub kernels: &'static [&'static crate::backend::gpu::KernelSpec],
    /// Whether a frame's score depends on other frames (motion). Its
    /// extractors must be windowed ([`Extractor::window`]): each frame's
    /// score reads the earlier frames it needs, and the cross-frame rules
    /// run once over the whole sequence, so the engine still spreads its
    /// frames over workers and frames in flight (features/gpu.rs).
    pub temporal: bool,
    /// Metrics of the chroma planes, which libvmaf does not emit for 4:0:0
    /// input (integer_psnr.c turns `enable_chroma` off for YUV400P): a
    /// cell on a 4:0:0 fixture expects the others only.
    pub chroma_metrics: &'static [&'static str],
    /// Why libvmaf's extractor refuses input of this geometry (cambi below
    /// its minimum size, a bit depth it does not take), in libvmaf's terms;
    /// `None` when it takes it. Such a cell is SKIP with this reason — the
    /// feature has no score there, on any backend — and the CPU reference
    /// refuses it too (`tests/reference.rs` checks it against libvmaf).
    pub refuses: fn(&Geometry, &Options) -> Option<String>,
}

impl FeatureImpl {
    /// The metrics of `metrics` (the feature's under its options) that it
    /// emits on input of `geometry`.
    pub fn metrics_on(&self, metrics: &[String], geometry: &Geometry) -> Vec<String> {
        let luma_only = geometry.planes() == 1;
        metrics.iter().filter(|m| !(luma_only && self.chroma_metrics.contains(&m.as_str()))).cloned().collect()
    }

    /// Why this input has no score, as every refusal is worded (a SKIP
    /// cell's note, an extractor's error): `None` when libvmaf takes it.
    pub fn refusal(&self, geometry: &Geometry, options: &Options) -> Option<String> {
        (self.refuses)(geometry, options).map(|why| format!("{} does not take {geometry} input: {why}", self.name))
    }

    /// The one guard in front of both factories: the options' own errors
    /// first (as a gate reports them), then libvmaf's refusal. Behind it a
    /// factory may assume the input is one libvmaf scores (float_ansnr's
    /// filter would read outside a 2-pixel picture).
    pub fn ensure_takes(&self, geometry: &Geometry, options: &Options) -> Result<()> {
        (self.metrics)(options)?;
        match self.refusal(geometry, options) {
            Some(why) => anyhow::bail!(why),
            None => Ok(()),
        }
    }

    /// The CPU reference's extractor for this input.
    pub fn cpu_extractor(&self, geometry: &Geometry, options: &Options) -> Result<Box<dyn Extractor>> {
        self.ensure_takes(geometry, options)?;
        (self.cpu)(geometry, options)
    }

    /// Whether the feature has GPU kernels.
    pub fn has_gpu(&self) -> bool {
        self.gpu.is_some()
    }

    /// The GPU pipeline's extractor for this input on `gpu`.
    pub fn gpu_extractor(
        &self,
        gpu: Arc<dyn Gpu>,
        geometry: &Geometry,
        options: &Options,
    ) -> Result<Box<dyn Extractor>> {
        let factory = self.gpu.ok_or_else(|| anyhow::anyhow!("{} has no GPU kernels yet", self.name))?;
        self.ensure_takes(geometry, options)?;
        factory(gpu, geometry, options)
    }
}

/// [`FeatureImpl::refuses`] of a feature that takes every geometry.
pub fn takes_any_geometry(_: &Geometry, _: &Options) -> Option<String> {
    None
}

/// Every feature this build implements. One line per feature: families add
/// theirs without touching each other's.
static IMPLEMENTATIONS: &[&FeatureImpl] = &[
    &psnr::PSNR,
    &psnr::FLOAT_PSNR,
    &moment::FLOAT_MOMENT,
    &ansnr::FLOAT_ANSNR,
    &motion::MOTION,
    &motion::FLOAT_MOTION,
    &motion::MOTION_V2,
    &ssim::FLOAT_SSIM,
    &ssim::FLOAT_MS_SSIM,
    &ciede::CIEDE,
    &psnr_hvs::PSNR_HVS,
    &vif::VIF,
    &vif::FLOAT_VIF,
    &adm::ADM,
    &adm::FLOAT_ADM,
    &ssimulacra2::SSIMULACRA2,
    &cambi::CAMBI,
];

/// Features one pass can compute together because they share work: the
/// same kernels over the same pictures, each output once. The engine
/// computes such sides of a backend and fixture in one pass where
/// [`JointImpl::shares`] says the options and geometry let them, and each
/// alone otherwise (or when the pass fails, so every side keeps its own
/// outcome). Each feature's scores are the bits it gets alone.
pub struct JointImpl {
    /// The features, in the order the factory takes their options.
    pub features: &'static [&'static str],
    /// Whether these options at this geometry have work to share.
    pub shares: fn(&Geometry, &[&Options]) -> bool,
    /// The CPU pass, recording every feature's metrics.
    pub cpu: JointCpuFactory,
    /// The GPU pass, likewise.
    pub gpu: JointGpuFactory,
}

/// Each feature's own metrics of a joint pass's `scores`, in the order of
/// `features` (name, options).
pub fn split_joint_scores(scores: &Scores, features: &[(&str, &Options)]) -> Result<Vec<Scores>> {
    features
        .iter()
        .map(|(name, options)| {
            let imp = find(name).ok_or_else(|| anyhow::anyhow!("this build does not implement {name}"))?;
            let mut own = scores.clone();
            own.retain(&(imp.metrics)(options)?);
            Ok(own)
        })
        .collect()
}

/// Every joint pass of this build.
static JOINT: &[&JointImpl] = &[&ssim::JOINT];

/// Every joint pass of this build.
pub fn joint_implementations() -> impl Iterator<Item = &'static JointImpl> {
    JOINT.iter().copied()
}

/// The joint pass of exactly `features`, in its order.
pub fn find_joint(features: &[&str]) -> Option<&'static JointImpl> {
    joint_implementations().find(|j| j.features == features)
}

/// Every feature implemented in this build.
pub fn implementations() -> impl Iterator<Item = &'static FeatureImpl> {
    IMPLEMENTATIONS.iter().copied()
}

pub fn find(name: &str) -> Option<&'static FeatureImpl> {
    implementations().find(|f| f.name == name)
}

/// Every kernel of this build, once each: the features' and the dialect
/// self-test's.
pub fn kernel_specs() -> Vec<&'static crate::backend::gpu::KernelSpec> {
    let mut out: Vec<&'static crate::backend::gpu::KernelSpec> = vec![
        &crate::backend::selftest::SELFTEST_INT64,
        &crate::backend::selftest::SELFTEST_WIDEN,
        &crate::backend::selftest::SELFTEST_FLOAT,
    ];
    for spec in implementations().flat_map(|f| f.kernels.iter().copied()) {
        if !out.iter().any(|s| std::ptr::eq(*s, spec)) {
            out.push(spec);
        }
    }
    out
}

/// Runs an extractor over every frame of a fixture, in memory or read
/// frame by frame from its files; `on_frame` is called after each frame
/// (progress).
pub fn run_extractor(
    mut extractor: Box<dyn Extractor>,
    fixture: &dyn PairSource,
    on_frame: &dyn Fn(),
) -> Result<Scores> {
    let mut scores = Scores::default();
    let windowed = extractor.window().is_some();
    // Read into the same storage frame after frame (a file's frames).
    let (mut reference, mut distorted) = (None, None);
    for i in 0..fixture.frames() {
        if windowed {
            extractor.extract_at(i, fixture, &mut scores)?;
        } else {
            let r = fixture.frame_into(i, false, &mut reference)?;
            let d = fixture.frame_into(i, true, &mut distorted)?;
            extractor.extract(i, r, d, &mut scores)?;
        }
        on_frame();
    }
    extractor.flush(&mut scores)?;
    extractor.finish_sequence(&mut scores, fixture.frames())?;
    Ok(scores)
}

#[cfg(test)]
mod registry_tests {
    use super::*;
    use crate::config::features::FeatureRegistry;
    use crate::fixture::Chroma;
    use std::collections::BTreeSet;

    fn registry() -> FeatureRegistry {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("gates/features.yaml");
        crate::config::resolve::load_registry(&path).unwrap_or_else(|e| panic!("{e}")).value
    }

    fn sorted(v: impl IntoIterator<Item = String>) -> Vec<String> {
        v.into_iter().collect::<BTreeSet<_>>().into_iter().collect()
    }

    /// The registry (what gates, validate and the docs see) and the
    /// implementations (what runs) agree on every feature's metrics, with
    /// default options and with each boolean option that adds metrics, and
    /// on the options each feature takes.
    #[test]
    fn registry_and_implementations_agree() {
        let registry = registry();
        for imp in implementations() {
            let spec = registry.features.get(imp.name).unwrap_or_else(|| panic!("{} is not registered", imp.name));
            let ours = (imp.metrics)(&Options::new()).unwrap();
            assert_eq!(sorted(ours), sorted(spec.metrics.clone()), "{}: default metrics", imp.name);
            let registered: BTreeSet<&str> = spec.options.keys().map(String::as_str).collect();
            let implemented: BTreeSet<&str> = imp.options.iter().map(|d| d.name).collect();
            assert_eq!(registered, implemented, "{}: options", imp.name);
            for d in imp.options {
                let r = &spec.options[d.name];
                let what = format!("{} option {}", imp.name, d.name);
                assert_eq!(r.default, d.default.to_json(), "{what}: default");
                assert_eq!(r.alias.as_deref(), d.alias, "{what}: alias");
                assert_eq!((r.min, r.max), (d.min, d.max), "{what}: range");
                assert_eq!(r.feature_param, d.feature_param, "{what}: feature_param");
            }
            for (key, opt) in &spec.options {
                // A default outside its own range (float_adm's
                // adm_skip_aim_scale = -1) cannot be given explicitly.
                let v = opt.default.as_f64();
                if v.is_some_and(|v| opt.min.is_some_and(|lo| v < lo) || opt.max.is_some_and(|hi| v > hi)) {
                    let mut options = Options::new();
                    options.insert(key.clone(), opt.default.clone());
                    assert!((imp.metrics)(&options).is_err(), "{} {key}: its out-of-range default given", imp.name);
                    continue;
                }
                let mut options = Options::new();
                options.insert(key.clone(), opt.default.clone());
                // A default outside the range means "not set" (cambi's
                // enc_width 0): libvmaf's opt.c refuses it given explicitly.
                let outside = opt
                    .default
                    .as_f64()
                    .is_some_and(|v| opt.min.is_some_and(|lo| v < lo) || opt.max.is_some_and(|hi| v > hi));
                if outside {
                    assert!((imp.metrics)(&options).is_err(), "{} {key}: an explicit out-of-range default", imp.name);
                    continue;
                }
                let at_default = (imp.metrics)(&options).unwrap_or_else(|e| panic!("{} {key}: {e:#}", imp.name));
                assert_eq!(sorted(at_default), sorted(spec.metrics.clone()), "{} {key} at its default", imp.name);
                if !opt.adds_metrics.is_empty() {
                    options.insert(key.clone(), Value::Bool(true));
                    let added = (imp.metrics)(&options).unwrap();
                    let want = spec.metrics.iter().chain(&opt.adds_metrics).cloned();
                    assert_eq!(sorted(added), sorted(want), "{} {key}: true", imp.name);
                }
            }
            let mut bad = Options::new();
            bad.insert("no_such_option".into(), Value::Bool(true));
            assert!((imp.metrics)(&bad).is_err(), "{}: an unknown option is refused", imp.name);
        }
    }

    /// `temporal` says the extractors are windowed, and nothing else checks
    /// it: a temporal feature whose CPU extractor had no window would have
    /// its frames spread over workers that never see their neighbours. (The
    /// GPU side of each temporal feature is held to the CPU frame by frame,
    /// with several workers, in `tests/motion.rs`.)
    #[test]
    fn temporal_features_and_only_they_are_windowed() {
        let geometry = crate::fixture::Geometry { width: 320, height: 240, bit_depth: 8, chroma: Chroma::Yuv420 };
        let mut temporal = Vec::new();
        for imp in implementations() {
            let extractor =
                imp.cpu_extractor(&geometry, &Options::new()).unwrap_or_else(|e| panic!("{}: {e:#}", imp.name));
            assert_eq!(extractor.window().is_some(), imp.temporal, "{}: temporal, and windowed", imp.name);
            if imp.temporal {
                temporal.push(imp.name);
            }
        }
        assert_eq!(temporal, ["motion", "float_motion", "motion_v2"]);
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use crate::fixture::synthetic::{Content, Distortion};
    use crate::fixture::{Chroma, LoadedFixture, SyntheticSpec};

    /// A small synthetic fixture for unit tests.
    pub fn synthetic(bit_depth: u8, chroma: Chroma, frames: u32) -> LoadedFixture {
        let spec = SyntheticSpec {
            width: 48,
            height: 32,
            frames,
            bit_depth,
            chroma,
            seed: 3,
            content: Content::default(),
            distortion: Distortion::default(),
        };
        let src = |distorted| crate::fixture::FrameSource::Synthetic { spec: spec.clone(), distorted };
        LoadedFixture::load(&src(false), &src(true), None).unwrap()
    }
}
