//! ssimulacra2's GPU pipeline on Mesa lavapipe (Vulkan) and PoCL (OpenCL)
//! against the CPU reference, on the default gate's reference clips and on
//! geometry edges (every bit depth and subsampling, odd sizes, frames with
//! one scale or none, wider and taller than a work group):
//!
//! - every per-pixel value is the CPU's: each GPU score equals, bit for
//!   bit, the CPU reference run in the GPU's order of the f64 map sums
//!   (`SumOrder::Columns`);
//! - so Vulkan and OpenCL give the same bits, and both lie within
//!   `SUM_ORDER_TOLERANCE` of the CPU reference (raster order, the fork's);
//! - bad options and inputs the fork cannot take are refused through the
//!   binary with libvmaf-style messages; frames below 8x8 score 100.

mod common;

use common::ulpgate;
use ulpgate::features::ssimulacra2::{self, Params, SSIMULACRA2, Ssimulacra2Cpu, SumOrder, gpu::SUM_ORDER_TOLERANCE};
use ulpgate::features::{Options, run_extractor};
use ulpgate::fixture::{Chroma, FrameSource, Geometry, LoadedFixture, SyntheticSpec};

/// Two frame pairs of `width` x `height`: the generator's synthetic content
/// where it takes the size (16x16 and up), else smooth waves plus noise
/// written to raw files in `dir`.
fn synthetic(
    dir: &std::path::Path,
    width: u32,
    height: u32,
    bit_depth: u8,
    chroma: Chroma,
    seed: u64,
) -> LoadedFixture {
    let geometry = g(width, height, bit_depth, chroma);
    if width >= 16 && height >= 16 {
        let spec = SyntheticSpec {
            width,
            height,
            frames: 2,
            bit_depth,
            chroma,
            seed,
            content: Default::default(),
            distortion: Default::default(),
        };
        let src = |distorted| FrameSource::Synthetic { spec: spec.clone(), distorted };
        return LoadedFixture::load(&src(false), &src(true), None).expect("synthetic frames");
    }
    let max = f64::from(geometry.max_value());
    let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let mut noise = move || {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (state >> 40) as f64 / f64::from(1u32 << 24) - 0.5
    };
    let src = |name: &str, amount: f64, noise: &mut dyn FnMut() -> f64| {
        let mut bytes = Vec::new();
        for frame in 0..2 {
            for p in 0..3 {
                let (w, h) = geometry.plane_dims(p);
                for i in 0..w * h {
                    let (x, y) = ((i % w) as f64, (i / w) as f64);
                    let wave = 0.5 + 0.3 * (0.7 * x + 0.3 * y + f64::from(frame) + p as f64).sin();
                    let v = ((wave + amount * noise()).clamp(0.0, 1.0) * max).round() as u16;
                    if bit_depth > 8 { bytes.extend(v.to_le_bytes()) } else { bytes.push(v as u8) }
                }
            }
        }
        let path = dir.join(format!("{name}_{width}x{height}_{seed}.yuv"));
        std::fs::write(&path, bytes).unwrap();
        FrameSource::Raw { path, geometry }
    };
    let (r, d) = (src("ref", 0.02, &mut noise), src("dist", 0.15, &mut noise));
    LoadedFixture::load(&r, &d, None).expect("raw frames")
}

/// The first `frames` frames of a recorded pair of fixtures/reference.
fn reference(folder: &str, dist: &str, geometry: Geometry, frames: usize) -> LoadedFixture {
    common::recorded(folder, dist, geometry, Some(frames))
}

fn g(width: u32, height: u32, bit_depth: u8, chroma: Chroma) -> Geometry {
    Geometry { width, height, bit_depth, chroma }
}

fn cpu_scores(fx: &LoadedFixture, options: &Options, order: SumOrder) -> Vec<f64> {
    let params = Params::new(&fx.geometry, options).unwrap();
    let scores = run_extractor(Box::new(Ssimulacra2Cpu::new(params, order)), fx, &|| {}).unwrap();
    scores.get("ssimulacra2").unwrap().to_vec()
}

/// Runs every fixture on lavapipe and PoCL; returns the largest |GPU - CPU
/// reference| seen.
fn check(fixtures: &[(LoadedFixture, Options)]) -> f64 {
    let gpus = common::software_gpus();
    let mut worst = 0.0f64;
    for (fx, options) in fixtures {
        let what = format!("{} {options:?}", fx.geometry);
        let reference = cpu_scores(fx, options, SumOrder::Raster);
        let columns = cpu_scores(fx, options, SumOrder::Columns);
        let mut per_backend = Vec::new();
        for (backend, gpu) in &gpus {
            let out = common::on_gpu(gpu, fx.frames(), &format!("{what} on {backend}"), |gpu| {
                let ext = SSIMULACRA2
                    .gpu_extractor(gpu, &fx.geometry, options)
                    .unwrap_or_else(|e| panic!("{what} on {backend}: {e:#}"));
                run_extractor(ext, fx, &|| {}).unwrap_or_else(|e| panic!("{what} on {backend}: {e:#}"))
            });
            let got = out.get("ssimulacra2").unwrap().to_vec();
            assert_eq!(got.len(), fx.frames(), "{what} on {backend}");
            assert!(
                got.iter().zip(&columns).all(|(a, b)| a.to_bits() == b.to_bits()),
                "{what} on {backend}: the per-pixel arithmetic differs from the CPU's: {got:?} vs {columns:?}"
            );
            for (a, b) in got.iter().zip(&reference) {
                worst = worst.max((a - b).abs());
                assert!((a - b).abs() <= SUM_ORDER_TOLERANCE, "{what} on {backend}: {got:?} vs cpu {reference:?}");
            }
            per_backend.push(got);
        }
        assert_eq!(per_backend[0], per_backend[1], "{what}: vulkan and opencl differ");
    }
    worst
}

#[test]
fn gpus_match_the_cpu_on_the_reference_clips() {
    let none = Options::new;
    let fixtures = [
        (reference("testsrc2_200x184_8bit_420", "dist_x264", g(200, 184, 8, Chroma::Yuv420), 3), none()),
        (reference("testsrc2_200x184_8bit_420", "dist_blur", g(200, 184, 8, Chroma::Yuv420), 2), none()),
        (reference("testsrc2_192x180_10bit_420", "dist_x264", g(192, 180, 10, Chroma::Yuv420), 2), none()),
        (reference("testsrc2_192x180_8bit_444", "dist_x264", g(192, 180, 8, Chroma::Yuv444), 2), none()),
    ];
    let worst = check(&fixtures);
    // Measured on lavapipe and PoCL: 8.5e-14 (docs/features/ssimulacra2.md).
    assert!(worst > 0.0 && worst < 1e-12, "{worst}");
}

#[test]
fn gpus_match_the_cpu_at_every_depth_subsampling_and_edge_size() {
    let opt = |m: i64| Options::from([("yuv_matrix".to_string(), m.into())]);
    let none = Options::new;
    let dir = tempfile::tempdir().unwrap();
    let synthetic = |w, h, bit_depth, chroma, seed| synthetic(dir.path(), w, h, bit_depth, chroma, seed);
    let fixtures = [
        // Odd sizes: rows start mid-word, odd chroma planes, odd scales.
        (synthetic(37, 21, 8, Chroma::Yuv420, 1), none()),
        (synthetic(33, 17, 10, Chroma::Yuv422, 2), none()),
        (synthetic(48, 32, 12, Chroma::Yuv444, 3), none()),
        (synthetic(64, 40, 16, Chroma::Yuv420, 4), none()),
        // The other matrices.
        (synthetic(40, 30, 8, Chroma::Yuv420, 5), opt(1)),
        (synthetic(40, 30, 10, Chroma::Yuv444, 6), opt(2)),
        (synthetic(40, 30, 8, Chroma::Yuv422, 7), opt(3)),
        // The smallest frames: one scale (8x8, 16x9), two (15x15), none (7
        // wide: 100, no blur at all).
        (synthetic(8, 8, 8, Chroma::Yuv420, 8), none()),
        (synthetic(16, 9, 8, Chroma::Yuv420, 9), none()),
        (synthetic(15, 15, 10, Chroma::Yuv420, 10), none()),
        (synthetic(7, 30, 8, Chroma::Yuv444, 11), none()),
        // Wider and taller than a work group of columns or rows.
        (synthetic(1100, 9, 8, Chroma::Yuv420, 12), none()),
        (synthetic(9, 300, 12, Chroma::Yuv422, 13), none()),
    ];
    check(&fixtures);
    // Below 8x8 every scale is skipped and pool_score gives 100.
    let tiny = &fixtures[10].0;
    assert_eq!(cpu_scores(tiny, &none(), SumOrder::Raster), vec![100.0; 2]);
    assert_eq!(ssimulacra2::scales(7, 30), vec![]);
}

fn score(args: &[&str]) -> (i32, String, String) {
    let out = ulpgate().args(["score", "--feature", "ssimulacra2"]).args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// Two 6x6 4:2:0 8-bit frames (reference, distorted) in a temporary folder.
fn tiny_clip(dir: &std::path::Path) -> [String; 2] {
    ["r.yuv", "d.yuv"].map(|name| {
        let path = dir.join(name);
        let bytes: Vec<u8> = (0..2 * (36 + 2 * 9)).map(|i| (i * 37 % 251) as u8 ^ name.as_bytes()[0]).collect();
        std::fs::write(&path, bytes).unwrap();
        path.display().to_string()
    })
}

#[test]
fn bad_options_and_untakeable_input_are_refused_through_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let [r, d] = tiny_clip(dir.path());
    let clip = ["--reference", &r, "--distorted", &d, "--width", "6", "--height", "6", "--backend", "cpu"];
    for (option, message) in [
        ("yuv_matrix=4", "ssimulacra2 option `yuv_matrix` is 4, outside its range [0, 3]"),
        ("yuv_matrix=1.5", "ssimulacra2 option `yuv_matrix` must be like its default 0"),
        ("yuv_matrx=1", "ssimulacra2 has no option `yuv_matrx` (did you mean `yuv_matrix`?)"),
    ] {
        let (code, _, err) = score(&[&clip[..], &["--option", option]].concat());
        assert_eq!(code, 2, "{option}: {err}");
        assert!(err.contains(message), "{option}: {err}");
    }
    // 4:0:0 has no chroma to convert: refused with the reason.
    let (code, _, err) = score(&[&clip[..8], &["--backend", "cpu", "--chroma", "400"]].concat());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("4:0:0 picture has no chroma planes"), "{err}");
}

#[test]
fn frames_below_eight_pixels_score_a_hundred_on_every_backend() {
    let dir = tempfile::tempdir().unwrap();
    let [r, d] = tiny_clip(dir.path());
    for backend in ["cpu", "vulkan", "opencl"] {
        let (code, out, err) = score(&[
            "--reference",
            &r,
            "--distorted",
            &d,
            "--width",
            "6",
            "--height",
            "6",
            "--backend",
            backend,
            "--vulkan-device",
            "llvmpipe",
        ]);
        assert_eq!(code, 0, "{backend}: {err}");
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        let frames = doc["frames"].as_array().unwrap();
        assert_eq!(frames.len(), 2, "{backend}");
        assert!(frames.iter().all(|f| f["metrics"]["ssimulacra2"] == 100.0), "{backend}: {out}");
        // Computed there: a GPU side names its device and counts its kernels.
        if backend != "cpu" {
            assert_eq!(doc["device"]["kind"], "gpu", "{backend}: {out}");
            assert!(doc["dispatches"].as_u64().is_some_and(|n| n >= 2), "{backend}: {out}");
        }
    }
}

#[test]
fn a_four_zero_zero_fixture_is_a_skip_cell_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let gate = common::write(
        dir.path(),
        "g.yaml",
        &format!(
            "{}features: [ssimulacra2]\nbackends: {{cpu: {{}}, vulkan: {{required: false}}}}\npairs: [[cpu, vulkan]]\nfixtures:\n  - name: mono\n    synthetic: {{width: 32, height: 32, frames: 2, bit_depth: 8, chroma: \"400\"}}\n",
            common::HEADER
        ),
    );
    let report = common::run_report(dir.path(), &gate, &["--vulkan-device", "llvmpipe"]);
    let cell = &report["cells"][0];
    assert_eq!(cell["status"], "SKIP", "{cell}");
    assert!(cell["note"].as_str().unwrap().contains("no chroma planes"), "{cell}");
}
