//! `psnr` (libvmaf integer_psnr.c) and `float_psnr` (float_psnr.c + psnr.c).

use super::gpu::{GpuExtractor, GpuPipeline, planes_bytes, sum_u64_partials, word_buffer};
use super::options::{self, OptionDef};
use super::picture::{float_peak, float_plane_into, scaler};
use super::sums::{float_sums_are_exact, squared_error_and_bits};
use super::{Extractor, FeatureImpl, Options};
use crate::backend::gpu::{Arg, Buffer, Gpu, Kernel, KernelSpec, Stream, groups_for};
use crate::fixture::{Chroma, Frame, Geometry, PlaneRef};
use crate::scores::Scores;
use anyhow::Result;

pub static PSNR: FeatureImpl = FeatureImpl {
    name: "psnr",
    options: PSNR_OPTIONS,
    metrics: psnr_metrics,
    cpu: |geometry, options| Ok(Box::new(PsnrCpu::new(geometry, options)?)),
    gpu: Some(|gpu, geometry, options| {
        let params = PsnrParams::new(geometry, options)?;
        let sse = SseKernel::new(gpu.as_ref(), geometry, params.planes, false)?;
        GpuExtractor::boxed(gpu, SseGpu { sse, score: SseScore::Psnr(params), geometry: *geometry })
    }),
    kernels: &[&PSNR_SSE],
    temporal: false,
    chroma_metrics: PSNR_CHROMA_METRICS,
    refuses: super::takes_any_geometry,
};

pub static FLOAT_PSNR: FeatureImpl = FeatureImpl {
    name: "float_psnr",
    options: &[],
    metrics: |options| {
        options::check("float_psnr", options, &[])?;
        Ok(vec!["float_psnr".into()])
    },
    cpu: |geometry, options| {
        options::check("float_psnr", options, &[])?;
        Ok(Box::new(FloatPsnrCpu { bit_depth: geometry.bit_depth, r: Vec::new(), d: Vec::new() }))
    },
    gpu: Some(|gpu, geometry, options| {
        options::check("float_psnr", options, &[])?;
        let sse = SseKernel::new(gpu.as_ref(), geometry, 1, true)?;
        GpuExtractor::boxed(gpu, SseGpu { sse, score: SseScore::FloatPsnr, geometry: *geometry })
    }),
    kernels: &[&PSNR_SSE],
    temporal: false,
    chroma_metrics: &[],
    refuses: super::takes_any_geometry,
};

const PSNR_NAMES: [&str; 3] = ["psnr_y", "psnr_cb", "psnr_cr"];
const MSE_NAMES: [&str; 3] = ["mse_y", "mse_cb", "mse_cr"];

/// integer_psnr.c's option table, in its order.
static PSNR_OPTIONS: &[OptionDef] = &[
    OptionDef::flag("enable_chroma", true),
    OptionDef::flag("enable_mse", false),
    OptionDef::flag("enable_apsnr", false),
    OptionDef::flag("reduced_hbd_peak", false),
    OptionDef {
        name: "min_sse",
        alias: None,
        default: options::OptValue::Double(0.0),
        min: Some(0.0),
        max: Some(f64::MAX),
        feature_param: false,
    },
];

/// The chroma planes' metrics (none on 4:0:0).
static PSNR_CHROMA_METRICS: &[&str] = &["psnr_cb", "psnr_cr", "mse_cb", "mse_cr"];

/// The checked options; `enable_apsnr` is refused: libvmaf prints APSNR
/// once per clip, under `aggregate_metrics` (integer_psnr.c `flush`), and
/// ulpgate's scores are per frame.
fn psnr_options(options: &Options) -> Result<(bool, bool)> {
    options::check("psnr", options, PSNR_OPTIONS)?;
    if options::get_bool(options, PSNR_OPTIONS, "enable_apsnr")? {
        anyhow::bail!(
            "psnr option `enable_apsnr`: libvmaf prints APSNR (apsnr_y, apsnr_cb, apsnr_cr) once for the \
             whole clip, under aggregate_metrics, not per frame; ulpgate compares per-frame scores and \
             does not compute it (false is accepted)"
        );
    }
    let chroma = options::get_bool(options, PSNR_OPTIONS, "enable_chroma")?;
    Ok((chroma, options::get_bool(options, PSNR_OPTIONS, "enable_mse")?))
}

fn psnr_metrics(options: &Options) -> Result<Vec<String>> {
    let (chroma, mse) = psnr_options(options)?;
    let planes = if chroma { 3 } else { 1 };
    let mse_names = if mse { &MSE_NAMES[..planes] } else { &[] };
    Ok(PSNR_NAMES[..planes].iter().chain(mse_names).map(|s| s.to_string()).collect())
}

/// The per-plane constants of integer PSNR (integer_psnr.c `init`).
#[derive(Debug, Clone, Copy)]
pub struct PsnrParams {
    pub planes: usize,
    pub peak: u32,
    /// Each plane's largest score.
    pub psnr_max: [f64; 3],
    /// Also record each plane's MSE (`enable_mse`).
    pub mse: bool,
}

impl PsnrParams {
    pub fn new(geometry: &Geometry, options: &Options) -> Result<Self> {
        let (chroma, mse) = psnr_options(options)?;
        let bpc = u32::from(geometry.bit_depth);
        // `255 * 1 << (bpc - 8)`: the 8-bit peak scaled up, or 2^bpc - 1.
        let peak = if options::get_bool(options, PSNR_OPTIONS, "reduced_hbd_peak")? {
            255 << (bpc - 8)
        } else {
            geometry.max_value()
        };
        let min_sse = options::get_double(options, PSNR_OPTIONS, "min_sse")?;
        let (w, h) = (geometry.width, geometry.height);
        let psnr_max = std::array::from_fn(|i| {
            if min_sse == 0.0 {
                return f64::from(6 * bpc + 12);
            }
            // init's plane sizes: the luma's halved (rounded down) where
            // libvmaf's pixel format subsamples, whatever the plane's own
            // size; the peak squared in 32 bits, as C's uint32_t.
            let ss_hor = geometry.chroma != Chroma::Yuv444;
            let ss_ver = geometry.chroma == Chroma::Yuv420;
            let pw = if i > 0 && ss_hor { w / 2 } else { w };
            let ph = if i > 0 && ss_ver { h / 2 } else { h };
            let mse = min_sse / f64::from(pw * ph);
            (10.0 * (f64::from(peak.wrapping_mul(peak)) / mse).log10()).ceil()
        });
        Ok(PsnrParams { planes: if chroma && geometry.planes() == 3 { 3 } else { 1 }, peak, psnr_max, mse })
    }

    /// PSNR in dB of plane `p` from its sum of squared errors, and its MSE:
    /// the end of integer_psnr.c's `psnr` / `psnr_hbd`.
    pub fn psnr(&self, p: usize, sse: u64, samples: usize) -> (f64, f64) {
        let mse = sse as f64 / samples as f64;
        let peak_sq = f64::from(self.peak * self.peak);
        ((10.0 * (peak_sq / mse.max(1e-16)).log10()).min(self.psnr_max[p]), mse)
    }

    pub fn record(&self, sse: &[u64], geometry: &Geometry, index: usize, out: &mut Scores) {
        for p in 0..self.planes {
            let (psnr, mse) = self.psnr(p, sse[p], geometry.plane_samples(p));
            out.record(PSNR_NAMES[p], index, psnr);
            if self.mse {
                out.record(MSE_NAMES[p], index, mse);
            }
        }
    }
}

/// Sum of squared differences of one plane, exactly as the loops of
/// integer_psnr.c's `psnr` (8-bit) and `psnr_hbd` compute it (integer arithmetic, so exact in any order; u64 cannot
/// overflow at the widths the gate accepts).
pub fn plane_sse(reference: PlaneRef<'_>, distorted: PlaneRef<'_>) -> u64 {
    super::sums::squared_error(reference, distorted)
}

struct PsnrCpu {
    params: PsnrParams,
}

impl PsnrCpu {
    fn new(geometry: &Geometry, options: &Options) -> Result<Self> {
        Ok(PsnrCpu { params: PsnrParams::new(geometry, options)? })
    }
}

/// integer_psnr.c's `extract`: each plane's SSE, then its PSNR.
impl Extractor for PsnrCpu {
    fn extract(&mut self, index: usize, reference: &Frame, distorted: &Frame, out: &mut Scores) -> Result<()> {
        let mut sse = [0u64; 3];
        for (p, sse) in sse.iter_mut().enumerate().take(self.params.planes) {
            *sse = plane_sse(reference.plane(p), distorted.plane(p));
        }
        self.params.record(&sse, &reference.geometry, index, out);
        Ok(())
    }
}

/// float_psnr from the noise sum, the end of psnr.c's `compute_psnr`:
/// `min(10 log10(peak² / max(noise/n, 1e-10)), psnr_max)`.
pub fn float_psnr_score(noise: f64, samples: usize, bit_depth: u8) -> f64 {
    let (peak, psnr_max) = float_peak(bit_depth);
    let noise = noise / samples as f64;
    (10.0 * (peak * peak / noise.max(1e-10)).log10()).min(psnr_max)
}

/// psnr.c's noise (the loop of `compute_psnr`), operation for operation: the float planes' difference and
/// its square in float, accumulated in double in pixel order. (`r` and `d`
/// hold the float planes, kept from frame to frame.)
fn float_noise(reference: &Frame, distorted: &Frame, r: &mut Vec<f32>, d: &mut Vec<f32>) -> f64 {
    float_plane_into(reference, 0, 0, r);
    float_plane_into(distorted, 0, 0, d);
    r.iter()
        .zip(d.iter())
        .map(|(&a, &b)| {
            let diff = a - b;
            f64::from(diff * diff)
        })
        .fold(0.0, |acc, v| acc + v)
}

struct FloatPsnrCpu {
    bit_depth: u8,
    // The float planes, kept from frame to frame.
    r: Vec<f32>,
    d: Vec<f32>,
}

impl Extractor for FloatPsnrCpu {
    fn extract(&mut self, index: usize, reference: &Frame, distorted: &Frame, out: &mut Scores) -> Result<()> {
        let geometry = &reference.geometry;
        let samples = geometry.plane_samples(0);
        // The bound is the samples' own (OR-ed), not the bit depth's: a
        // 10-bit file may hold larger words, whose float squares round.
        let (sse, bits) = squared_error_and_bits(reference.plane(0), distorted.plane(0));
        let noise = if float_sums_are_exact(samples, bits) {
            // Every difference, square and partial sum below is exact (see
            // `float_sums_are_exact`), so the noise is the integer sum of
            // squared errors over the scaler²: the same bits, in any order.
            let s = f64::from(scaler(self.bit_depth));
            sse as f64 / (s * s)
        } else {
            float_noise(reference, distorted, &mut self.r, &mut self.d)
        };
        out.record("float_psnr", index, float_psnr_score(noise, samples, self.bit_depth));
        Ok(())
    }
}

/// `psnr_sse` (kernels/psnr.cl, shaders/psnr_sse.comp): exact 64-bit sums of
/// squared sample differences. Work group `(gx, p)` covers samples
/// `[gx * chunk, (gx + 1) * chunk)` of plane `p` (clipped to the plane) and
/// writes its sum as a (lo, hi) u32 pair at `partials[2 * (p * groups_x + gx)]`.
/// Buffers: reference frame, distorted frame, partials. Scalars: luma
/// samples, samples per chroma plane, planes, bytes per sample, chunk,
/// round_squares (1: each square rounded to f32 first, as float_psnr's C
/// squares in float).
pub static PSNR_SSE: KernelSpec =
    KernelSpec { name: "psnr_sse", family: "psnr", workgroup: [256, 1, 1], buffers: 3, scalars: 6 };

/// Samples each `psnr_sse` work group reduces (64 per thread): few enough
/// groups that a CPU driver (lavapipe), where a work group's barrier costs
/// microseconds, spends its time on samples; still over a hundred groups
/// per 1080p plane for a GPU to spread.
const SSE_CHUNK: usize = 256 * 64;

/// The SSE kernel set up for one geometry: shared by psnr and float_psnr,
/// whose sums are integers (float_psnr's of squares rounded to f32, which it
/// divides by the scaler²).
struct SseKernel {
    kernel: Kernel,
    planes: usize,
    groups_x: u32,
    frame_bytes: usize,
    scalars: [u32; 6],
}

impl SseKernel {
    fn new(gpu: &dyn Gpu, geometry: &Geometry, planes: usize, round_squares: bool) -> Result<Self> {
        let luma = geometry.plane_samples(0);
        let chroma = if planes > 1 { geometry.plane_samples(1) } else { 0 };
        Ok(SseKernel {
            kernel: gpu.load_kernel(&PSNR_SSE)?,
            planes,
            groups_x: groups_for(luma, SSE_CHUNK as u32),
            frame_bytes: planes_bytes(geometry, planes),
            scalars: [
                luma as u32,
                chroma as u32,
                planes as u32,
                geometry.bytes_per_sample() as u32,
                SSE_CHUNK as u32,
                u32::from(round_squares),
            ],
        })
    }

    fn partials_bytes(&self) -> usize {
        self.groups_x as usize * self.planes * 8
    }

    fn buffers(&self, gpu: &dyn Gpu) -> Result<[Buffer; 3]> {
        Ok([
            word_buffer(gpu, self.frame_bytes)?,
            word_buffer(gpu, self.frame_bytes)?,
            gpu.create_buffer(self.partials_bytes())?,
        ])
    }

    fn compute(&self, b: &[Buffer; 3], stream: &mut dyn Stream) -> Result<()> {
        let [s0, s1, s2, s3, s4, s5] = self.scalars.map(Arg::U32);
        let args = [Arg::Buffer(&b[0]), Arg::Buffer(&b[1]), Arg::Buffer(&b[2]), s0, s1, s2, s3, s4, s5];
        stream.dispatch(&self.kernel, [self.groups_x, self.planes as u32, 1], &args)?;
        stream.download(&b[2], 0, self.partials_bytes())
    }

    /// Per-plane sums from the downloaded partials.
    fn sums(&self, partials: &[u8]) -> Result<Vec<u64>> {
        let groups = self.groups_x as usize;
        (0..self.planes)
            .map(|p| sum_u64_partials(&partials[p * groups * 8..(p + 1) * groups * 8], 1).map(|v| v[0]))
            .collect()
    }
}

/// How a pipeline turns the shared per-plane sums into scores.
enum SseScore {
    /// psnr: per-plane PSNR (integer_psnr.c).
    Psnr(PsnrParams),
    /// float_psnr: the luma's float noise (float_psnr.c, psnr.c).
    FloatPsnr,
}

/// psnr and float_psnr on a GPU: the same `psnr_sse` sums, scored two ways.
struct SseGpu {
    sse: SseKernel,
    score: SseScore,
    geometry: Geometry,
}

impl GpuPipeline for SseGpu {
    type Slot = [Buffer; 3];

    fn new_slot(&self, gpu: &dyn Gpu) -> Result<Self::Slot> {
        self.sse.buffers(gpu)
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    fn planes(&self) -> usize {
        self.sse.planes
    }

    fn inputs<'a>(&self, slot: &'a Self::Slot) -> [&'a Buffer; 2] {
        [&slot[0], &slot[1]]
    }

    fn compute(&self, slot: &Self::Slot, stream: &mut dyn Stream) -> Result<()> {
        self.sse.compute(slot, stream)
    }

    fn finish(&self, index: usize, downloads: &[Vec<u8>], out: &mut Scores) -> Result<()> {
        let sse = self.sse.sums(&downloads[0])?;
        match &self.score {
            SseScore::Psnr(params) => params.record(&sse, &self.geometry, index, out),
            SseScore::FloatPsnr => {
                // The CPU's float differences are (a - b) / s, exact, and
                // their f32 squares are the kernel's rounded squares over s²
                // (s is a power of two). Its double noise sum in pixel order
                // is then sse / s², exact while the sum stays below 2^53:
                // always below 12 bits, and at 16 bits for any frame under
                // 2^21 samples (a 1080p luma).
                let s = f64::from(scaler(self.geometry.bit_depth));
                let noise = sse[0] as f64 / (s * s);
                let samples = self.geometry.plane_samples(0);
                out.record("float_psnr", index, float_psnr_score(noise, samples, self.geometry.bit_depth));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::{run_extractor, testutil::synthetic};
    use crate::fixture::Chroma;

    #[test]
    fn identical_frames_hit_psnr_max() {
        let fx = synthetic(10, Chroma::Yuv420, 1);
        let geo = fx.geometry;
        let scores =
            run_extractor(PSNR.cpu_extractor(&geo, &Options::new()).unwrap(), &LoadedPair::same(&fx), &|| {}).unwrap();
        assert_eq!(scores.get("psnr_y").unwrap(), &[72.0]);
        assert_eq!(scores.get("psnr_cr").unwrap(), &[72.0]);
    }

    #[test]
    fn psnr_matches_the_closed_form() {
        let p = PsnrParams { planes: 1, peak: 255, psnr_max: [60.0; 3], mse: false };
        // mse = 1 → 10 log10(255²)
        assert!((p.psnr(0, 100, 100).0 - 48.130_803_608_679_1).abs() < 1e-12);
    }

    #[test]
    fn chroma_can_be_disabled() {
        let mut o = Options::new();
        o.insert("enable_chroma".into(), serde_json::json!(false));
        assert_eq!(psnr_metrics(&o).unwrap(), vec!["psnr_y"]);
        o.insert("enable_chroma".into(), serde_json::json!(1));
        assert!(psnr_metrics(&o).is_err());
    }

    #[test]
    fn unknown_options_get_a_suggestion() {
        let mut o = Options::new();
        o.insert("enable_chrome".into(), serde_json::json!(false));
        let err = psnr_metrics(&o).unwrap_err().to_string();
        assert!(err.contains("did you mean `enable_chroma`"), "{err}");
    }

    #[test]
    fn float_psnr_integer_path_has_the_float_loops_bits() {
        use crate::features::sums::random_frame;
        for bit_depth in [8, 10, 12] {
            for (width, height) in [(48, 32), (37, 23), (1, 1)] {
                let geometry = Geometry { width, height, bit_depth, chroma: Chroma::Yuv420 };
                let (r, d) = (random_frame(geometry, 1), random_frame(geometry, 2));
                let mut ext = FloatPsnrCpu { bit_depth, r: Vec::new(), d: Vec::new() };
                let mut out = Scores::default();
                ext.extract(0, &r, &d, &mut out).unwrap();
                ext.extract(1, &d, &r, &mut out).unwrap();
                let float = |a, b| {
                    let noise = float_noise(a, b, &mut Vec::new(), &mut Vec::new());
                    float_psnr_score(noise, geometry.plane_samples(0), bit_depth)
                };
                let expected = [float(&r, &d), float(&d, &r)];
                let got = out.get("float_psnr").unwrap();
                assert!(
                    got.iter().zip(expected).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{geometry}: {got:?} {expected:?}"
                );
            }
        }
    }

    /// Words above the bit depth's maximum (a 10-bit file may hold them)
    /// take the float loop, as libvmaf squares them in float.
    #[test]
    fn float_psnr_of_samples_above_the_bit_depth_takes_the_float_loop() {
        use crate::fixture::{Frame, Samples};
        let geometry = Geometry { width: 64, height: 32, bit_depth: 10, chroma: Chroma::Yuv420 };
        let zeros = Frame::new(geometry, Samples::U16(vec![0; geometry.frame_samples()])).unwrap();
        let words = (0..geometry.frame_samples()).map(|i| if i % 5 == 0 { 65504 - (i % 977) as u16 } else { 7 });
        let big = Frame::new(geometry, Samples::U16(words.collect())).unwrap();
        let mut ext = FloatPsnrCpu { bit_depth: 10, r: Vec::new(), d: Vec::new() };
        let mut out = Scores::default();
        ext.extract(0, &zeros, &big, &mut out).unwrap();
        let noise = float_noise(&zeros, &big, &mut Vec::new(), &mut Vec::new());
        let expected = float_psnr_score(noise, geometry.plane_samples(0), 10);
        assert_eq!(out.get("float_psnr").unwrap()[0].to_bits(), expected.to_bits());
        // The integer sum gives other bits here: the test can tell.
        let exact = plane_sse(zeros.plane(0), big.plane(0)) as f64 / 16.0;
        assert_ne!(float_psnr_score(exact, geometry.plane_samples(0), 10).to_bits(), expected.to_bits());
    }

    /// A fixture whose distorted side is its reference.
    struct LoadedPair;
    impl LoadedPair {
        fn same(fx: &crate::fixture::LoadedFixture) -> crate::fixture::LoadedFixture {
            crate::fixture::LoadedFixture {
                geometry: fx.geometry,
                reference: fx.reference.clone(),
                distorted: fx.reference.clone(),
            }
        }
    }
}
