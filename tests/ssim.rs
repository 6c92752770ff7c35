//! float_ssim and float_ms_ssim on the GPU backends against the CPU
//! reference, on Mesa lavapipe (Vulkan) and PoCL (OpenCL): every metric of
//! every frame bit for bit, on the reference clips, at every bit depth and
//! subsampling, odd sizes, libvmaf's automatic and explicit down-scaling,
//! pictures smaller than the Gaussian window, and with the totals taken
//! from the device's sequential sums (the rarely needed fallback, forced);
//! plus bad options and too-small frames through the binary.

mod common;

use std::path::Path;
use std::sync::Arc;
use ulpgate::backend::gpu::Gpu;
use ulpgate::features::ssim::exact::{self, Exact};
use ulpgate::features::ssim::gpu::{Shape, Totals};
use ulpgate::features::ssim::{self, float_ssim, ms_ssim};
use ulpgate::features::{Extractor, Options, run_extractor};
use ulpgate::fixture::{Chroma, Frame, Geometry, LoadedFixture, Samples};
use ulpgate::scores::Scores;

/// Random frames of any geometry (synthetic fixtures start at 16x16).
fn synthetic(width: u32, height: u32, bit_depth: u8, chroma: Chroma, seed: u64) -> LoadedFixture {
    common::synthetic(width, height, bit_depth, chroma, 2, seed)
}

/// The first `frames` frames of a committed reference pair.
fn reference(folder: &str, dist: &str, geometry: Geometry, frames: usize) -> LoadedFixture {
    common::recorded(folder, dist, geometry, Some(frames))
}

/// Two 8-bit 4:4:4 frame pairs of any size (the synthetic generator needs
/// 16 x 16): a pattern and a perturbed copy.
fn tiny(width: u32, height: u32) -> LoadedFixture {
    let geometry = geometry(width, height, 8, Chroma::Yuv444);
    let n = geometry.frame_samples();
    let frame = |seed: usize, noise: usize| {
        let v: Vec<u8> = (0..n).map(|i| ((i * 37 + seed * 11 + (i * noise) % 13) % 251) as u8).collect();
        Frame::new(geometry, Samples::U8(v)).expect("frame")
    };
    LoadedFixture { geometry, reference: vec![frame(0, 0), frame(1, 0)], distorted: vec![frame(0, 3), frame(1, 5)] }
}

fn geometry(width: u32, height: u32, bit_depth: u8, chroma: Chroma) -> Geometry {
    Geometry { width, height, bit_depth, chroma }
}

fn options(pairs: &[(&str, serde_json::Value)]) -> Options {
    pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

type GpuFactory = fn(Arc<dyn Gpu>, &Geometry, &Options, Totals, Option<Shape>) -> anyhow::Result<Box<dyn Extractor>>;

/// A feature's CPU reference scores of a fixture.
fn cpu_scores(feature: &str, fx: &LoadedFixture, options: &Options) -> Scores {
    let imp = ulpgate::features::find(feature).expect("implemented");
    run_extractor(imp.cpu_extractor(&fx.geometry, options).expect("cpu"), fx, &|| {}).expect("cpu scores")
}

/// Every metric `feature` records with `options`, every frame of `fx`: the
/// same bits in `gpu` as in `cpu` (NaN where the CPU has NaN).
fn assert_same_bits(what: &str, feature: &str, options: &Options, fx: &LoadedFixture, cpu: &Scores, gpu: &Scores) {
    let imp = ulpgate::features::find(feature).expect("implemented");
    for metric in (imp.metrics)(options).expect("metrics") {
        let (a, b) = (cpu.get(&metric).expect("cpu metric"), gpu.get(&metric).expect("gpu metric"));
        assert_eq!(a.len(), fx.frames(), "{what}: {metric}");
        let same = a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()));
        assert!(same && a.len() == b.len(), "{what}: {metric}: cpu {a:?} vs gpu {b:?}");
    }
}

/// CPU reference and GPU pipeline over a fixture: every metric the options
/// ask for, every frame, the same bits (NaN where the CPU has NaN), in
/// both shapes of the filter kernels.
fn assert_bit_identical(feature: &str, fx: &LoadedFixture, options: &Options, totals: Totals) {
    let gpu_factory: GpuFactory =
        if feature == "float_ssim" { float_ssim::gpu_pipeline } else { ms_ssim::gpu_pipeline };
    let cpu = cpu_scores(feature, fx, options);
    let runs = common::software_gpus()
        .into_iter()
        .flat_map(|(b, g)| [Shape::Pixels, Shape::Strips].map(|s| (b, g.clone(), s)));
    for (backend, gpu, shape) in runs {
        let what = format!("{feature} {options:?} {totals:?} {shape:?} on {backend}, {}", fx.geometry);
        let out: Scores = common::on_gpu(&gpu, fx.frames(), &what, |gpu| {
            let ext = gpu_factory(gpu, &fx.geometry, options, totals, Some(shape))
                .unwrap_or_else(|e| panic!("{what}: {e:#}"));
            run_extractor(ext, fx, &|| {}).unwrap_or_else(|e| panic!("{what}: {e:#}"))
        });
        assert_same_bits(&what, feature, options, fx, &cpu, &out);
    }
}

/// The joint passes of both features ([`ssim::joint`]) against each one's
/// CPU reference alone: every metric of each, the same bits, the GPU pass
/// in both shapes.
fn assert_joint_bit_identical(fx: &LoadedFixture, ssim_options: &Options, ms_options: &Options) {
    let both = [("float_ssim", ssim_options), ("float_ms_ssim", ms_options)];
    let cpu: Vec<Scores> = both.iter().map(|(f, o)| cpu_scores(f, fx, o)).collect();
    assert!(ssim::joint::shares(&fx.geometry, &[ssim_options, ms_options]), "{}", fx.geometry);
    // Every metric of each feature, the joint pass's against its alone CPU
    // reference's, bit for bit.
    let assert_alone_bits = |what: &str, joint: &Scores| {
        for ((feature, options), cpu) in both.iter().zip(&cpu) {
            assert_same_bits(what, feature, options, fx, cpu, joint);
        }
    };
    let joint_cpu = ssim::joint::cpu_extractor(&fx.geometry, &[ssim_options, ms_options]).expect("joint cpu");
    assert_alone_bits("joint CPU pass", &run_extractor(joint_cpu, fx, &|| {}).expect("joint cpu scores"));
    let runs = common::software_gpus()
        .into_iter()
        .flat_map(|(b, g)| [Shape::Pixels, Shape::Strips].map(|s| (b, g.clone(), s)));
    for (backend, gpu, shape) in runs {
        let what = format!("joint {ssim_options:?} {ms_options:?} {shape:?} on {backend}, {}", fx.geometry);
        let out = common::on_gpu(&gpu, fx.frames(), &what, |gpu| {
            let ext =
                ssim::joint::gpu_pipeline(gpu, &fx.geometry, &[ssim_options, ms_options], Totals::Decide, Some(shape))
                    .unwrap_or_else(|e| panic!("{what}: {e:#}"));
            run_extractor(ext, fx, &|| {}).unwrap_or_else(|e| panic!("{what}: {e:#}"))
        });
        assert_alone_bits(&what, &out);
    }
}

fn lcs() -> Options {
    options(&[("enable_lcs", true.into())])
}

#[test]
fn both_features_match_the_cpu_on_the_reference_clips() {
    let clips = [
        reference("testsrc2_200x184_8bit_420", "dist_x264", geometry(200, 184, 8, Chroma::Yuv420), 3),
        reference("testsrc2_192x180_10bit_420", "dist_x264", geometry(192, 180, 10, Chroma::Yuv420), 2),
        reference("testsrc2_192x180_8bit_444", "dist_x264", geometry(192, 180, 8, Chroma::Yuv444), 2),
        reference("testsrc2_320x240_8bit_420", "dist_band", geometry(320, 240, 8, Chroma::Yuv420), 2),
    ];
    for fx in &clips {
        assert_bit_identical("float_ssim", fx, &lcs(), Totals::Decide);
        assert_bit_identical("float_ms_ssim", fx, &lcs(), Totals::Decide);
    }
}

#[test]
fn every_bit_depth_subsampling_and_odd_size() {
    for fx in [
        synthetic(181, 177, 12, Chroma::Yuv422, 1),
        synthetic(197, 183, 16, Chroma::Yuv444, 2),
        synthetic(176, 176, 8, Chroma::Yuv400, 3),
        synthetic(179, 190, 10, Chroma::Yuv420, 4),
    ] {
        assert_bit_identical("float_ssim", &fx, &lcs(), Totals::Decide);
        assert_bit_identical("float_ms_ssim", &fx, &lcs(), Totals::Decide);
    }
    // dB output, clipped, on the 16-bit frames.
    let fx = synthetic(197, 183, 16, Chroma::Yuv444, 2);
    let db = options(&[("enable_db", true.into()), ("clip_db", true.into())]);
    assert_bit_identical("float_ssim", &fx, &db, Totals::Decide);
    assert_bit_identical("float_ms_ssim", &fx, &db, Totals::Decide);
}

#[test]
fn the_joint_pass_gives_each_feature_its_own_bits() {
    let clip = reference("testsrc2_200x184_8bit_420", "dist_x264", geometry(200, 184, 8, Chroma::Yuv420), 2);
    assert_joint_bit_identical(&clip, &Options::new(), &Options::new());
    assert_joint_bit_identical(&clip, &lcs(), &lcs());
    let db = options(&[("enable_db", true.into()), ("clip_db", true.into())]);
    let fx = synthetic(181, 177, 12, Chroma::Yuv422, 7);
    assert_joint_bit_identical(&fx, &lcs(), &db);
    assert_joint_bit_identical(&fx, &options(&[("scale", 1.into())]), &lcs());
}

#[test]
fn float_ssim_decimates_as_libvmaf_chooses_and_as_told() {
    // min(w, h) = 384: libvmaf's automatic scale is round(1.5) = 2.
    let auto = synthetic(403, 384, 8, Chroma::Yuv420, 5);
    assert_eq!(float_ssim::auto_scale(403, 384), 2);
    assert_bit_identical("float_ssim", &auto, &lcs(), Totals::Decide);
    let fx = synthetic(133, 97, 10, Chroma::Yuv444, 6);
    for scale in [1, 3, 4, 10] {
        let o = options(&[("scale", scale.into()), ("enable_lcs", true.into())]);
        assert_bit_identical("float_ssim", &fx, &o, Totals::Decide);
    }
}

#[test]
fn pictures_smaller_than_the_window_score_as_in_libvmaf() {
    // No map: 0 / (w - 10)(h - 10) is 0, -0 or NaN, as libvmaf prints.
    for (w, h) in [(8, 8), (10, 20), (5, 20), (11, 11), (12, 30), (30, 12)] {
        assert_bit_identical("float_ssim", &tiny(w, h), &lcs(), Totals::Decide);
    }
}

#[test]
fn the_sequential_totals_give_the_same_bits() {
    // The device's sequential sum (taken for a mean too close to a float
    // boundary to decide from the parallel sum) is libvmaf's own sum.
    // Both ways of making it: one work item in ssim_total (CPU drivers),
    // and exact.rs's parallel walk (GPUs).
    let fx = reference("testsrc2_200x184_8bit_420", "dist_blur", geometry(200, 184, 8, Chroma::Yuv420), 2);
    let odd = synthetic(181, 177, 12, Chroma::Yuv422, 1);
    for exact in [Exact::Inline, Exact::Parallel] {
        assert_bit_identical("float_ssim", &fx, &lcs(), Totals::Sequential(exact));
        assert_bit_identical("float_ms_ssim", &fx, &lcs(), Totals::Sequential(exact));
        assert_bit_identical("float_ms_ssim", &odd, &Options::new(), Totals::Sequential(exact));
    }
}

/// llvmpipe's first pass stores no term (`ssim_vertical_strips_ieee_unstored`):
/// a frame whose mean needs the sequential sum is scored again on the same
/// slot with the terms stored (`features::gpu::Redo`). `Totals::Redone`
/// redoes every frame; the same bits as the CPU reference, alone and in the
/// joint pass (the first pass alone is what every other lavapipe case runs).
/// Where that pass does not run (PoCL), asking for it is an error.
#[test]
fn frames_redone_with_their_terms_stored_keep_their_bits() {
    let gpus = common::software_gpus();
    let lavapipe = gpus.iter().find(|(b, _)| *b == "vulkan").map(|(_, g)| g.clone()).expect("lavapipe");
    let pocl = gpus.iter().find(|(b, _)| *b == "opencl").map(|(_, g)| g.clone()).expect("pocl");
    let fx = reference("testsrc2_200x184_8bit_420", "dist_blur", geometry(200, 184, 8, Chroma::Yuv420), 2);
    let cases: [(&str, GpuFactory, Options); 3] = [
        ("float_ssim", float_ssim::gpu_pipeline, lcs()),
        ("float_ms_ssim", ms_ssim::gpu_pipeline, lcs()),
        ("float_ms_ssim", ms_ssim::gpu_pipeline, Options::new()),
    ];
    for (feature, factory, options) in &cases {
        let what = format!("{feature} {options:?} redone on lavapipe");
        let out = common::on_gpu(&lavapipe, fx.frames(), &what, |gpu| {
            let ext = factory(gpu, &fx.geometry, options, Totals::Redone, Some(Shape::Strips))
                .unwrap_or_else(|e| panic!("{what}: {e:#}"));
            run_extractor(ext, &fx, &|| {}).unwrap_or_else(|e| panic!("{what}: {e:#}"))
        });
        assert_same_bits(&what, feature, options, &fx, &cpu_scores(feature, &fx, options), &out);
        let err = factory(pocl.clone(), &fx.geometry, options, Totals::Redone, Some(Shape::Strips))
            .err()
            .map(|e| format!("{e:#}"))
            .unwrap_or_default();
        assert!(err.contains("redone only after llvmpipe's unstored first pass"), "{feature} on PoCL: {err}");
    }
    let (ssim_options, ms_options) = (Options::new(), lcs());
    let both = [&ssim_options, &ms_options];
    let out = common::on_gpu(&lavapipe, fx.frames(), "joint redone", |gpu| {
        let joint = ssim::joint::gpu_pipeline(gpu, &fx.geometry, &both, Totals::Redone, Some(Shape::Strips))
            .expect("joint pass");
        run_extractor(joint, &fx, &|| {}).expect("joint scores")
    });
    for (feature, options) in [("float_ssim", &ssim_options), ("float_ms_ssim", &ms_options)] {
        assert_same_bits("joint redone", feature, options, &fx, &cpu_scores(feature, &fx, options), &out);
    }
}

/// exact.rs's kernels on their own, on lavapipe and PoCL: for every
/// flagged entry the sum is libvmaf's `sum += t`, bit for bit, on
/// sequences that take every path of the walk (ties, binade edges, sums
/// that fall below zero, non-finite terms); an entry ssim_total decided
/// keeps what it had.
#[test]
fn the_exact_kernels_are_the_sequential_sum_on_lavapipe_and_pocl() {
    use ulpgate::backend::gpu::Arg;
    let mut seqs = exact::samples::all();
    seqs.push(("decided (flag 0)", exact::samples::ssim_like(5000, 8, 0.3)));
    let decided = seqs.len() - 1;
    let (mut layout, mut terms, mut results, mut records) = (Vec::new(), Vec::new(), Vec::new(), 0);
    for (k, (_, seq)) in seqs.iter().enumerate() {
        // One row of the sequence's length; ssim_total's words 1 and 4 are
        // not read.
        layout.extend([(terms.len() / 8) as u32, 0, seq.len() as u32, 1, 0, records as u32]);
        terms.extend(seq.iter().flat_map(|t| t.to_le_bytes()));
        records += seq.len().div_ceil(exact::SEGMENT);
        let flag = if k == decided { 0.0 } else { 1.0 };
        results.extend([0.0, 0.0, 0.0, -7.0, flag].iter().flat_map(|v: &f64| v.to_le_bytes()));
    }
    let longest = seqs.iter().map(|(_, s)| s.len().div_ceil(exact::SEGMENT)).max().unwrap_or(1);
    let groups = longest.min(exact::MAX_GROUPS) as u32;
    let bytes = |words: &[u32]| words.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>();
    for (backend, gpu) in common::software_gpus() {
        let [segments, walk] = [&exact::SSIM_EXACT_SEGMENTS, &exact::SSIM_EXACT_WALK]
            .map(|k| gpu.load_kernel(k).unwrap_or_else(|e| panic!("{backend}: {e:#}")));
        let input = gpu.create_buffer(terms.len()).unwrap();
        let entries = gpu.create_buffer(4 * layout.len()).unwrap();
        let out = gpu.create_buffer(results.len()).unwrap();
        let recs = gpu.create_buffer(4 * exact::RECORD_WORDS * records).unwrap();
        let mut stream = gpu.create_stream().unwrap();
        stream.upload(&input, 0, &terms).unwrap();
        stream.upload(&entries, 0, &bytes(&layout)).unwrap();
        stream.upload(&out, 0, &results).unwrap();
        let buffers = [&input, &entries, &out, &recs].map(Arg::Buffer);
        let count = Arg::U32(seqs.len() as u32);
        for phase in 0..2 {
            let args = [&buffers[..], &[count, Arg::U32(groups), Arg::U32(phase)]].concat();
            stream.dispatch(&segments, [groups, 1, 1], &args).unwrap();
        }
        stream.dispatch(&walk, [seqs.len() as u32, 1, 1], &[&buffers[..], &[count]].concat()).unwrap();
        stream.download(&out, 0, results.len()).unwrap();
        let got = stream.wait().unwrap_or_else(|e| panic!("{backend}: {e:#}")).remove(0);
        for (k, (name, seq)) in seqs.iter().enumerate() {
            let at = 40 * k + 24;
            let g = f64::from_le_bytes(got[at..at + 8].try_into().unwrap());
            let want = if k == decided { -7.0 } else { seq.iter().fold(0.0, |s, &t| s + t) };
            let same = g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan());
            assert!(same, "{name} on {backend}, {} terms: {g:e} vs {want:e}", seq.len());
        }
    }
}

#[test]
fn ms_ssim_refuses_frames_below_176_in_libvmafs_words() {
    let small = geometry(176, 175, 8, Chroma::Yuv420);
    let why = (ssim::FLOAT_MS_SSIM.refuses)(&small, &Options::new()).expect("refused");
    assert!(why.contains("error: scale below 1x1!"), "{why}");
    assert!(ssim::FLOAT_MS_SSIM.cpu_extractor(&small, &Options::new()).is_err());
    for (_, gpu) in common::software_gpus() {
        let err = ssim::FLOAT_MS_SSIM.gpu_extractor(gpu, &small, &Options::new()).err().expect("refused");
        assert!(err.to_string().contains("scale below 1x1"), "{err}");
    }
    assert!((ssim::FLOAT_MS_SSIM.refuses)(&geometry(176, 176, 8, Chroma::Yuv420), &Options::new()).is_none());
}

/// A 2-frame raw 8-bit 4:2:0 pair of `w x h` in `dir`.
fn raw_pair(dir: &Path, w: usize, h: usize) -> (String, String) {
    let frame = w * h + 2 * w.div_ceil(2) * h.div_ceil(2);
    let bytes: Vec<u8> = (0..2 * frame).map(|i| (i * 37 % 251) as u8).collect();
    let noisy: Vec<u8> = bytes.iter().enumerate().map(|(i, v)| v.wrapping_add((i % 7) as u8)).collect();
    let (r, d) = (dir.join("r.yuv"), dir.join("d.yuv"));
    std::fs::write(&r, bytes).expect("write");
    std::fs::write(&d, noisy).expect("write");
    (r.display().to_string(), d.display().to_string())
}

fn score(dir: &Path, feature: &str, w: usize, h: usize, opts: &[&str]) -> (bool, String) {
    let (r, d) = raw_pair(dir, w, h);
    let mut cmd = common::ulpgate();
    cmd.args(["score", "--backend", "cpu", "--feature", feature, "--reference", &r, "--distorted", &d]);
    cmd.args(["--width", &w.to_string(), "--height", &h.to_string()]);
    for o in opts {
        cmd.args(["--option", o]);
    }
    let out = cmd.output().expect("runs");
    (out.status.success(), String::from_utf8_lossy(&out.stderr).to_string())
}

#[test]
fn bad_options_are_clear_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (ok, err) = score(dir.path(), "float_ssim", 64, 48, &["scale=11"]);
    assert!(!ok && err.contains("outside its range [0, 10]"), "{err}");
    let (ok, err) = score(dir.path(), "float_ssim", 64, 48, &["scale=1.5"]);
    assert!(!ok && err.contains("scale"), "{err}");
    let (ok, err) = score(dir.path(), "float_ssim", 64, 48, &["enable_lsc=true"]);
    assert!(!ok && err.contains("did you mean `enable_lcs`"), "{err}");
    let (ok, err) = score(dir.path(), "float_ms_ssim", 200, 200, &["scale=2"]);
    assert!(!ok && err.contains("float_ms_ssim has no option `scale`"), "{err}");
    let (ok, err) = score(dir.path(), "float_ms_ssim", 200, 200, &["enable_db=yes"]);
    assert!(!ok && err.contains("enable_db"), "{err}");
    let (ok, err) = score(dir.path(), "float_ssim", 64, 48, &["scale=3", "enable_lcs=true"]);
    assert!(ok, "{err}");
}

#[test]
fn too_small_frames_are_refused_by_score_and_skipped_by_a_gate() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (ok, err) = score(dir.path(), "float_ms_ssim", 200, 150, &[]);
    assert!(!ok && err.contains("scale below 1x1"), "{err}");
    // In a gate the cell is SKIP with libvmaf's reason, on every backend.
    let gate = common::write(
        dir.path(),
        "g.yaml",
        &format!(
            "{}features: [float_ms_ssim, float_ssim]\nbackends:\n  cpu: {{}}\n  vulkan: {{required: false}}\npairs:\n  - [cpu, vulkan]\nfixtures:\n  - name: small\n    synthetic: {{width: 176, height: 144, frames: 2, bit_depth: 8, chroma: \"420\", seed: 1}}\n",
            common::HEADER
        ),
    );
    let report = common::run_report(dir.path(), &gate, &["--vulkan-device", "llvmpipe"]);
    let cells = report["cells"].as_array().expect("cells");
    let ms = cells.iter().find(|c| c["feature"] == "float_ms_ssim").expect("ms_ssim cell");
    assert_eq!(ms["status"], "SKIP");
    assert!(ms["note"].as_str().unwrap_or_default().contains("scale below 1x1"), "{ms}");
    let ss = cells.iter().find(|c| c["feature"] == "float_ssim").expect("ssim cell");
    assert_eq!(ss["status"], "OK", "{ss}");
}

/// On lavapipe the strips shape divides with the device's own IEEE
/// division (`ssim_vertical_strips_ieee`); the kernel that checks and
/// corrects it, what every other Vulkan driver runs in that shape, forced
/// there (`ULPGATE_DIVISION=checked`), beside PoCL: every metric of both
/// features, l/c/s included, bit for bit with the CPU on the recorded 8-bit
/// clip and a synthetic 10-bit 4:2:2 one.
#[test]
fn the_checked_division_is_bit_exact_on_lavapipe_too() {
    use ulpgate::features::gpu::DIVISION_VAR;
    let features =
        "\n  - {name: float_ssim, options: {enable_lcs: true}}\n  - {name: float_ms_ssim, options: {enable_lcs: true}}";
    let checked = ["ssim_vertical_strips"];
    let stderr =
        common::assert_bit_exact_with_env_at(features, (193, 181), 10, "422", (DIVISION_VAR, "checked"), &checked);
    // The checking kernel, not lavapipe's own `_ieee` one, ran.
    assert!(!stderr.contains("vulkan: pipeline ssim_vertical_strips_ieee"), "{stderr}");
}

/// A gate with both features computes each backend's pair of sides in one
/// pass where float_ssim's scale is 1 (the report's timing says so), alone
/// where it is not (403x384: scale 2); every cell OK with the CPU's bits.
#[test]
fn a_gate_computes_both_features_in_one_pass_where_they_share_work() {
    use common::{FX_8BIT, HEADER, write};
    let dir = tempfile::tempdir().unwrap();
    let gate = format!(
        "{HEADER}features:\n  - {{name: float_ssim, options: {{enable_lcs: true}}}}\n  - float_ms_ssim\nbackends:\n  \
         cpu: {{}}\n  vulkan: {{required: true, device: llvmpipe}}\n  opencl: {{required: true}}\n\
         pairs: [[cpu, vulkan], [cpu, opencl]]\nfixtures:\n{FX_8BIT}  - name: large\n    \
         synthetic: {{width: 403, height: 384, frames: 1, bit_depth: 8, chroma: \"420\", seed: 9}}\n"
    );
    let path = write(dir.path(), "g.yaml", &gate);
    let report = common::run_report(dir.path(), &path, &[]);
    for c in report["cells"].as_array().unwrap() {
        assert_eq!(c["status"], "OK", "{c}");
        for (metric, diff) in c["per_metric_max_abs_diff"].as_object().unwrap() {
            assert_eq!(diff.as_f64(), Some(0.0), "{}: {metric} differs by {diff}", c["id"]);
        }
    }
    let sides = report["timing"]["sides"].as_array().unwrap();
    assert_eq!(sides.len(), 3 * 2 * 2, "backends x features x fixtures");
    for side in sides {
        let (feature, fixture) = (side["feature"].as_str().unwrap(), &side["fixture"]);
        let other = if feature == "float_ssim" { "float_ms_ssim" } else { "float_ssim" };
        let expected = if fixture == "fx" { serde_json::json!([other]) } else { serde_json::Value::Null };
        assert_eq!(side["joint"], expected, "{side}");
    }
}
