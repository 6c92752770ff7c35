//! The motion family (`motion`, `float_motion`, `motion_v2`): the CPU
//! reference against the fork's full-precision recordings, every GPU
//! pipeline against the CPU reference bit for bit on Mesa lavapipe (Vulkan)
//! and PoCL (OpenCL) — on the recorded fixtures, on bit depths, chroma
//! layouts, odd and smallest sizes, with every option that changes the
//! arithmetic — and bad options and too-small frames through the binary.

mod common;
use common::synthetic;

use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use ulpgate::backend::gpu::Gpu;
use ulpgate::features::gpu::score_parallel;
use ulpgate::features::motion::gpu::{FloatShape, float_extractor_shaped};
use ulpgate::features::{self, FeatureImpl, Options, run_extractor};
use ulpgate::fixture::{Chroma, Geometry, LoadedFixture};
use ulpgate::scores::{Scores, read_libvmaf_json};

fn reference(folder: &str, dist: &str, geometry: Geometry) -> LoadedFixture {
    common::recorded(folder, dist, geometry, None)
}

/// Random frames of any geometry (synthetic fixtures start at 16x16).
fn random(width: u32, height: u32, bit_depth: u8, chroma: Chroma, frames: usize, seed: u64) -> LoadedFixture {
    use ulpgate::fixture::{Frame, Samples};
    let geometry = Geometry { width, height, bit_depth, chroma };
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let max = (1u64 << bit_depth) - 1;
    let mut frame = || {
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Extremes often, so 16-bit sums need their 64 bits.
            match state % 5 {
                0 => 0,
                1 => max,
                _ => (state >> 11) % (max + 1),
            }
        };
        let n = geometry.frame_samples();
        let samples = if bit_depth == 8 {
            Samples::U8((0..n).map(|_| next() as u8).collect())
        } else {
            Samples::U16((0..n).map(|_| next() as u16).collect())
        };
        Frame::new(geometry, samples).expect("frame")
    };
    let reference = (0..frames).map(|_| frame()).collect();
    let distorted = (0..frames).map(|_| frame()).collect();
    LoadedFixture { geometry, reference, distorted }
}

fn opts(v: Value) -> Options {
    serde_json::from_value(v).expect("options")
}

fn imp(name: &str) -> &'static FeatureImpl {
    features::find(name).expect("implemented")
}

fn cpu(feature: &FeatureImpl, fx: &LoadedFixture, options: &Options) -> Scores {
    let ext = feature.cpu_extractor(&fx.geometry, options).unwrap_or_else(|e| panic!("{}: {e:#}", feature.name));
    run_extractor(ext, fx, &|| {}).unwrap_or_else(|e| panic!("{}: {e:#}", feature.name))
}

/// Largest |a - b| over every metric the feature emits (NaN counts as ∞).
fn max_diff(feature: &FeatureImpl, options: &Options, a: &Scores, b: &Scores, frames: usize) -> f64 {
    let mut worst = 0.0f64;
    for metric in (feature.metrics)(options).unwrap() {
        let (x, y) = (a.get(&metric).expect("cpu metric"), b.get(&metric).expect("gpu metric"));
        assert_eq!((x.len(), y.len()), (frames, frames), "{metric}: frame counts");
        for (p, q) in x.iter().zip(y) {
            let d = if p.is_finite() && q.is_finite() { (p - q).abs() } else { f64::INFINITY };
            worst = worst.max(d);
        }
    }
    worst
}

#[test]
fn integer_motion_equals_the_forks_full_precision_motion_v2() {
    // motion_v2.json is printed at %.17g: the integer arithmetic is exact,
    // so both the fork's motion_v2 and upstream's motion (the same SAD, per
    // fixtures/reference/README.md) must reproduce it to the last bit.
    let pairs = [
        ("testsrc2_200x184_8bit_420", "dist_x264", 200, 184, 8, Chroma::Yuv420),
        ("testsrc2_192x180_10bit_420", "dist_x264", 192, 180, 10, Chroma::Yuv420),
        ("testsrc2_192x180_8bit_444", "dist_x264", 192, 180, 8, Chroma::Yuv444),
    ];
    for (folder, dist, width, height, bit_depth, chroma) in pairs {
        let fx = reference(folder, dist, Geometry { width, height, bit_depth, chroma });
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/reference/scores");
        let recorded = read_libvmaf_json(&root.join(format!("{folder}/{dist}/motion_v2.json"))).unwrap().scores;
        let v2 = cpu(imp("motion_v2"), &fx, &Options::new());
        let v1 = cpu(imp("motion"), &fx, &Options::new());
        for (metric, upstream) in [
            ("VMAF_integer_feature_motion_v2_sad_score", "VMAF_integer_feature_motion_sad_score"),
            ("VMAF_integer_feature_motion2_v2_score", "integer_motion2"),
            ("VMAF_integer_feature_motion3_v2_score", "integer_motion3"),
        ] {
            let want = recorded.get(metric).unwrap();
            assert_eq!(v2.get(metric).unwrap(), want, "{folder} motion_v2 {metric}");
            assert_eq!(v1.get(upstream).unwrap(), want, "{folder} motion {upstream}");
        }
    }
}

/// Every option set that changes what the kernels or the host compute.
fn variants(feature: &str) -> Vec<Options> {
    let mut v = vec![Options::new()];
    match feature {
        "motion" => {
            v.push(opts(json!({"debug": true, "motion_fps_weight": 2.5, "motion_max_val": 9.0})));
            v.push(opts(json!({"motion_five_frame_window": true, "mma": true, "mbf": 0.5, "mbo": 6.0})));
            v.push(opts(json!({"motion_force_zero": true, "debug": true})));
        }
        "motion_v2" => {
            v.push(opts(json!({"motion_moving_average": true, "motion_blend_factor": 0.25})));
            v.push(opts(json!({"force_0": true})));
        }
        _ => {
            v.push(opts(json!({"debug": false, "motion_filter_size": 3, "mfw": 1.5})));
            v.push(opts(json!({"motion_filter_size": 1, "motion_add_scale1": true})));
            v.push(opts(json!({"motion_add_uv": true, "motion_max_val": 4.0, "mbf": 0.5, "mbo": 2.0})));
            v.push(opts(json!({"motion_force_zero": true})));
            // Geometries libvmaf's extract has no defined score for, which
            // motion_force_zero leaves before reading the frame (zeros).
            v.push(opts(json!({"motion_force_zero": true, "motion_add_uv": true, "motion_add_scale1": true})));
        }
    }
    v
}

/// Runs every GPU pipeline of the family on `fixtures` and asserts it
/// equals the CPU reference bit for bit, sequentially (run_extractor, as
/// a gate on a CPU driver runs it) and with 3 workers (score_parallel, as
/// on a GPU: contiguous runs of frames, frames in flight).
fn gpu_matches_cpu(fixtures: &[LoadedFixture], gpus: &[(&'static str, Arc<dyn Gpu>)]) {
    for fx in fixtures {
        for name in ["motion", "float_motion", "motion_v2"] {
            let feature = imp(name);
            for options in variants(name) {
                if (feature.refuses)(&fx.geometry, &options).is_some() {
                    continue;
                }
                let want = cpu(feature, fx, &options);
                // float_motion has two kernel shapes (rows on CPU drivers,
                // planes on GPUs): both run here, on both drivers.
                let shapes: &[Option<FloatShape>] =
                    if name == "float_motion" { &[Some(FloatShape::Rows), Some(FloatShape::Planes)] } else { &[None] };
                for (backend, gpu) in gpus {
                    for &shape in shapes {
                        let what = format!("{name} {options:?} on {backend} ({shape:?}), {}", fx.geometry);
                        // Both runs behind one kernel counter: at least a
                        // kernel a frame each.
                        common::on_gpu(gpu, 2 * fx.frames(), &what, |gpu| {
                            let make = || match shape {
                                Some(shape) => float_extractor_shaped(gpu.clone(), &fx.geometry, &options, shape),
                                None => feature.gpu_extractor(gpu.clone(), &fx.geometry, &options),
                            };
                            let ext = make().unwrap_or_else(|e| panic!("{what}: {e:#}"));
                            let seq = run_extractor(ext, fx, &|| {}).unwrap_or_else(|e| panic!("{what}: {e:#}"));
                            let d = max_diff(feature, &options, &want, &seq, fx.frames());
                            assert_eq!(d, 0.0, "{what}: cpu {want:?}\ngpu {seq:?}");
                            let par = score_parallel(&make, fx, 3, &|| {}).unwrap_or_else(|e| panic!("{what}: {e:#}"));
                            assert_eq!(max_diff(feature, &options, &want, &par, fx.frames()), 0.0, "{what}, 3 workers");
                        });
                    }
                }
            }
        }
    }
}

#[test]
fn gpu_twins_match_the_cpu_on_the_recorded_fixtures() {
    let g = |width, height, bit_depth, chroma| Geometry { width, height, bit_depth, chroma };
    let fixtures = [
        reference("testsrc2_200x184_8bit_420", "dist_x264", g(200, 184, 8, Chroma::Yuv420)),
        reference("testsrc2_192x180_10bit_420", "dist_x264", g(192, 180, 10, Chroma::Yuv420)),
        reference("testsrc2_192x180_8bit_444", "dist_x264", g(192, 180, 8, Chroma::Yuv444)),
    ];
    gpu_matches_cpu(&fixtures, &common::software_gpus());
}

#[test]
fn gpu_twins_match_the_cpu_at_every_geometry() {
    let fixtures = [
        // Bit depths and chroma layouts (16-bit: the split 32-bit sums).
        synthetic(48, 32, 12, Chroma::Yuv422, 4, 1),
        synthetic(40, 20, 16, Chroma::Yuv420, 4, 2),
        synthetic(37, 21, 10, Chroma::Yuv444, 4, 3),
        // Odd sizes, more than one band and work group, a band cut short.
        synthetic(131, 35, 8, Chroma::Yuv420, 3, 4),
        // Wider than a motion_sad group (512 columns), rows not word-aligned.
        synthetic(1030, 18, 8, Chroma::Yuv422, 3, 10),
        synthetic(531, 17, 16, Chroma::Yuv420, 3, 11),
        // The smallest frames each filter takes, one and two frames.
        random(3, 3, 8, Chroma::Yuv444, 3, 5),
        random(2, 2, 16, Chroma::Yuv444, 2, 6),
        random(5, 4, 8, Chroma::Yuv400, 1, 7),
        random(7, 6, 16, Chroma::Yuv420, 5, 8),
        random(6, 5, 12, Chroma::Yuv422, 4, 9),
    ];
    gpu_matches_cpu(&fixtures, &common::software_gpus());
}

/// Rows wide enough to wrap libvmaf's 32-bit row sums: the CPU reference
/// wraps as integer_motion.c does, and the GPU twins, whose per-group sums
/// would not, refuse with an error rather than print another number.
#[test]
fn rows_that_wrap_the_c_row_sum_are_scored_on_the_cpu_and_refused_on_gpus() {
    use ulpgate::fixture::{Frame, Samples};
    // 16-bit 0 then 65535 everywhere: every |val| of frame 1 is 65535, so a
    // row of 65538 sums to 65535 * 65538 = 2^32 + 65534 and wraps to 65534.
    let (width, height) = (65_538u32, 3u32);
    let geometry = Geometry { width, height, bit_depth: 16, chroma: Chroma::Yuv400 };
    let n = geometry.frame_samples();
    let frame = |v: u16| Frame::new(geometry, Samples::U16(vec![v; n])).expect("frame");
    let fx = LoadedFixture { geometry, reference: vec![frame(0), frame(65535)], distorted: vec![frame(0), frame(0)] };
    for name in ["motion", "motion_v2"] {
        let feature = imp(name);
        let scores = cpu(feature, &fx, &Options::default());
        let sad_metric = if name == "motion" {
            "VMAF_integer_feature_motion_sad_score"
        } else {
            "VMAF_integer_feature_motion_v2_sad_score"
        };
        let sad = scores.get(sad_metric).expect("sad score")[1];
        let wrapped = f64::from(height * 65_534) / 256.0 / f64::from(width * height);
        assert_eq!(sad, wrapped, "{name}: frame 1's SAD from wrapped row sums (unwrapped it would be about 256)");
        for (driver, gpu) in common::software_gpus() {
            let err = match feature.gpu_extractor(gpu, &geometry, &Options::default()) {
                Ok(_) => panic!("{name} on {driver} took rows its sums cannot reproduce"),
                Err(e) => format!("{e:#}"),
            };
            assert!(
                err.contains("could wrap libvmaf's 32-bit row sums") && err.contains("the cpu backend scores it"),
                "{err}"
            );
        }
    }
}

#[test]
fn bad_options_and_small_frames_are_clear_through_the_binary() {
    use common::*;
    let dir = tempfile::tempdir().unwrap();
    let gate = |name: &str, features: &str, fixture: &str| {
        write(
            dir.path(),
            name,
            &format!(
                "{HEADER}features:\n{features}backends: {{cpu: {{}}, golden: {{}}}}\npairs: [[golden, cpu]]\nfixtures:\n{fixture}"
            ),
        )
    };
    let validate = |g: &std::path::Path| {
        let out = ulpgate().arg("validate").arg(g).output().unwrap();
        (out.status.code().unwrap(), String::from_utf8_lossy(&out.stderr).to_string())
    };
    let g = gate("typo.yaml", "  - name: motion\n    options: {motion_blend_factr: 0.5}\n", FX_8BIT);
    let (code, err) = validate(&g);
    assert_eq!(code, 2);
    assert!(err.contains("motion has no option `motion_blend_factr`") && err.contains("motion_blend_factor"), "{err}");
    let g = gate("range.yaml", "  - name: float_motion\n    options: {motion_fps_weight: 6.0}\n", FX_8BIT);
    let (code, err) = validate(&g);
    assert_eq!(code, 2);
    assert!(err.contains("motion_fps_weight") && err.contains('5'), "{err}");
    let g = gate("type.yaml", "  - name: motion_v2\n    options: {motion_moving_average: 1}\n", FX_8BIT);
    let (code, err) = validate(&g);
    assert_eq!(code, 2);
    assert!(err.contains("motion_moving_average") && err.contains("wrong type"), "{err}");

    // 2x2 frames: motion and motion_v2 refuse them (SKIP with the reason);
    // float_motion's 5-tap filter too, its 3-tap one takes them.
    for name in ["r.yuv", "d.yuv"] {
        std::fs::write(dir.path().join(name), (0..36u8).map(|v| v.wrapping_mul(37)).collect::<Vec<_>>()).unwrap();
    }
    let tiny = format!(
        "  - name: tiny\n    reference: {0}/r.yuv\n    distorted: {0}/d.yuv\n    geometry: {{width: 2, height: 2, bit_depth: 8, chroma: \"444\"}}\n",
        dir.path().display()
    );
    let run = |features: &str| -> Vec<Value> {
        let g = write(
            dir.path(),
            "tiny.yaml",
            &format!(
                "{HEADER}features:\n{features}backends: {{cpu: {{}}, opencl: {{}}}}\npairs: [[cpu, opencl]]\nfixtures:\n{tiny}"
            ),
        );
        let json = dir.path().join("tiny.json");
        let out = ulpgate().arg("run").arg(&g).arg("--json-out").arg(&json).arg("--quiet").output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        report["cells"].as_array().unwrap().clone()
    };
    let cells = run("  - motion\n  - motion_v2\n  - float_motion\n");
    let cell = |f: &str| cells.iter().find(|c| c["feature"] == f).unwrap_or_else(|| panic!("no {f} cell")).clone();
    for (feature, why) in
        [("motion", "below 3x3"), ("motion_v2", "5-tap filter minimum 3x3"), ("float_motion", "convolution_f32_c_s")]
    {
        let c = cell(feature);
        assert_eq!(c["status"], "SKIP", "{c}");
        assert!(c["note"].as_str().unwrap().contains(why), "{c}");
    }
    let cells = run("  - name: float_motion\n    options: {motion_filter_size: 3}\n");
    assert_eq!(cells[0]["status"], "OK", "{}", cells[0]);
}
