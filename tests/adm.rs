//! adm and float_adm: the one GPU host pipeline (four kernels per feature)
//! against the CPU reference on Mesa lavapipe (Vulkan) and PoCL (OpenCL),
//! every metric bit for bit, on the geometries the reference clips do not
//! reach (12 and 16 bits, 4:2:2, odd sizes, the smallest frames each
//! feature is defined for) and under options that change the kernels' work
//! (debug sums, skipped scale 0, the enhancement gain limit, CSF modes,
//! float_adm's p-norm and bypassed masking). The reference clips run in
//! `tests/gpu_backends.rs` and `tests/vulkan.rs` through the default gate.
//! Then, through the binary: frames below the minimum size are SKIP with
//! the reason, and bad options get a clear error.

mod common;
use common::*;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use ulpgate::backend::gpu::Gpu;
use ulpgate::features::adm::gpu::{self, Shape};
use ulpgate::features::adm::{ADM, FLOAT_ADM};
use ulpgate::features::{FeatureImpl, Options, run_extractor};
use ulpgate::fixture::{Chroma, Frame, LoadedFixture, Samples};

fn fixture(width: u32, height: u32, bit_depth: u8, chroma: Chroma, seed: u64) -> LoadedFixture {
    synthetic(width, height, bit_depth, chroma, 2, seed)
}

fn options(pairs: &[(&str, Value)]) -> Options {
    pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

/// PoCL crashes (in clGetDeviceInfo) when two threads open it at once, so
/// the GPU tests hold this while they run, and open the devices once.
static SOFTWARE_GPUS: Mutex<()> = Mutex::new(());

type Gpus = Vec<(&'static str, Arc<dyn Gpu>)>;

/// Runs `feature` under `opts` on the CPU and on both software GPUs and
/// asserts every metric of every frame equal bit for bit.
fn assert_twins(gpus: &Gpus, feature: &FeatureImpl, fixtures: &[LoadedFixture], opts: &Options) {
    for shape in [Shape::Groups, Shape::Rows] {
        assert_shape_twins(gpus, feature, fixtures, opts, shape);
    }
}

/// [`assert_twins`] with the kernels of one [`Shape`].
fn assert_shape_twins(gpus: &Gpus, feature: &FeatureImpl, fixtures: &[LoadedFixture], opts: &Options, shape: Shape) {
    let gpu_factory = match feature.name {
        "adm" => gpu::integer_extractor_shaped,
        _ => gpu::float_extractor_shaped,
    };
    for (backend, gpu) in gpus {
        for fx in fixtures {
            let cpu = run_extractor(feature.cpu_extractor(&fx.geometry, opts).unwrap(), fx, &|| {}).unwrap();
            let what = format!("{} {shape:?} {opts:?} on {backend}, {}", feature.name, fx.geometry);
            let out = common::on_gpu(gpu, fx.frames(), &what, |gpu| {
                let ext = gpu_factory(gpu, &fx.geometry, opts, shape).unwrap_or_else(|e| panic!("{what}: {e:#}"));
                run_extractor(ext, fx, &|| {}).unwrap_or_else(|e| panic!("{what}: {e:#}"))
            });
            let metrics = (feature.metrics)(opts).unwrap();
            assert!(metrics.len() >= 7);
            for metric in &metrics {
                let (a, b) = (cpu.get(metric).unwrap(), out.get(metric).unwrap());
                assert_eq!(a.len(), 2);
                common::assert_same_bits(a, b, &format!("{what}: {metric}"));
            }
        }
    }
}

fn geometries(min: u32) -> Vec<LoadedFixture> {
    vec![
        // The smallest frame the feature is defined for, square.
        fixture(min, min, 8, Chroma::Yuv420, 1),
        // Odd sizes at every scale (37 -> 19 -> 10 -> 5 -> 3), 4:2:2.
        fixture(37, 35, 10, Chroma::Yuv422, 2),
        fixture(70, 41, 12, Chroma::Yuv444, 3),
        // 16 bits: the integer wavelet's int32 sums wrap as C's do.
        fixture(66, 50, 16, Chroma::Yuv420, 4),
        // Wider than a work group (64) at scale 0.
        fixture(161, 34, 8, Chroma::Yuv444, 5),
        // 8-bit rows on 32-bit words: the CPU drivers' wavelet reads whole
        // words in its inner strips (adm_dwt0_words), mirrors at both ends.
        fixture(132, 36, 8, Chroma::Yuv420, 6),
        // Three strips a row: one inner strip between the two edge ones.
        fixture(68, 34, 8, Chroma::Yuv420, 7),
    ]
}

#[test]
fn adm_gpu_equals_cpu_bit_for_bit() {
    let _one_at_a_time = SOFTWARE_GPUS.lock().unwrap_or_else(|e| e.into_inner());
    let gpus = software_gpus();
    let fixtures = geometries(33);
    assert_twins(&gpus, &ADM, &fixtures, &Options::new());
    let small = &fixtures[1..2];
    assert_twins(&gpus, &ADM, small, &options(&[("debug", json!(true))]));
    assert_twins(
        &gpus,
        &ADM,
        small,
        &options(&[("adm_skip_scale0", json!(true)), ("adm_enhn_gain_limit", json!(1.0))]),
    );
    assert_twins(&gpus, &ADM, small, &options(&[("adm_csf_mode", json!(1)), ("adm_ref_display_height", json!(2160))]));
    assert_twins(&gpus, &ADM, small, &options(&[("adm_csf_mode", json!(3)), ("adm_norm_view_dist", json!(4.5))]));
}

/// 16-bit 0/65535 vertical stripes (two columns each), 35x34, and the same
/// with nine pixels set to 65535: scale 1's decoupling meets angle tests
/// whose double products a float product would flip. Mesa 25.0.7's
/// lavapipe computed them as float products while the WGSL kernel widened
/// with `f64()` (integer_adm_scale1 and integer_aim off; found by the
/// twin-diff session's GPU differential test, scripts/gpu_difftest).
fn angle_test_stripes() -> LoadedFixture {
    let mut fx = fixture(35, 34, 16, Chroma::Yuv420, 8);
    let (w, h) = (35usize, 34usize);
    let stripes: Vec<u16> = (0..w * h).map(|i| if (i % w / 2) % 2 == 1 { 65535 } else { 0 }).collect();
    let mut spikes = stripes.clone();
    for (y, x) in [(17, 25), (17, 28), (19, 29), (20, 33), (21, 25), (21, 33), (24, 32), (25, 25), (26, 32)] {
        spikes[y * w + x] = 65535;
    }
    let geometry = fx.geometry;
    let frame = |luma: &[u16]| {
        let mut samples = luma.to_vec();
        samples.resize(geometry.frame_samples(), 32768);
        Frame::new(geometry, Samples::U16(samples)).unwrap()
    };
    fx.reference = vec![frame(&stripes), frame(&stripes)];
    fx.distorted = vec![frame(&spikes), frame(&spikes)];
    fx
}

#[test]
fn adm_angle_test_is_bit_exact_on_16_bit_stripes() {
    let _one_at_a_time = SOFTWARE_GPUS.lock().unwrap_or_else(|e| e.into_inner());
    let gpus = software_gpus();
    assert_twins(&gpus, &ADM, &[angle_test_stripes()], &Options::new());
}

#[test]
fn float_adm_gpu_equals_cpu_bit_for_bit() {
    let _one_at_a_time = SOFTWARE_GPUS.lock().unwrap_or_else(|e| e.into_inner());
    let gpus = software_gpus();
    let fixtures = geometries(17);
    assert_twins(&gpus, &FLOAT_ADM, &fixtures, &Options::new());
    let small = &fixtures[1..2];
    assert_twins(&gpus, &FLOAT_ADM, small, &options(&[("debug", json!(true)), ("adm_p_norm", json!(2.5))]));
    assert_twins(
        &gpus,
        &FLOAT_ADM,
        small,
        &options(&[("adm_skip_scale0", json!(true)), ("adm_enhn_gain_limit", json!(1.2))]),
    );
    assert_twins(&gpus, &FLOAT_ADM, small, &options(&[("adm_bypass_cm", json!(1)), ("adm_csf_mode", json!(3))]));
}

/// A gate of `feature` (one entry, YAML) on one synthetic fixture, the CPU
/// against PoCL; returns exit code, stderr and the report.
fn run_cpu_gate(feature: &str, width: u32, height: u32) -> (i32, String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "{HEADER}features:\n  - {feature}\nbackends: {{cpu: {{}}, opencl: {{required: true}}}}\npairs: [[cpu, opencl]]\nfixtures:\n  - name: small\n    \
         synthetic: {{width: {width}, height: {height}, frames: 2, bit_depth: 8, chroma: \"420\", seed: 1}}\n"
    );
    let gate = write(dir.path(), "g.yaml", &yaml);
    let json = dir.path().join("report.json");
    let out = ulpgate().arg("run").arg(&gate).arg("--json-out").arg(&json).output().unwrap();
    let report = std::fs::read_to_string(&json).ok().map(|s| serde_json::from_str(&s).unwrap()).unwrap_or(Value::Null);
    (out.status.code().unwrap(), String::from_utf8_lossy(&out.stderr).into(), report)
}

#[test]
fn frames_below_the_minimum_are_skipped_with_the_reason() {
    for (feature, min) in [("adm", 33), ("float_adm", 17)] {
        let (code, err, report) = run_cpu_gate(feature, min - 1, 64);
        assert_eq!(code, 0, "{feature}: {err}");
        let cells = report["cells"].as_array().expect("cells");
        assert!(!cells.is_empty(), "{feature}: {report}");
        for c in cells {
            assert_eq!(c["status"], "SKIP", "{feature}: {c}");
            let note = c["note"].as_str().unwrap();
            assert!(note.contains(&format!("needs frames of at least {min}x{min}")), "{feature}: {note}");
        }
        // At the minimum it runs, and PoCL agrees.
        let (code, err, report) = run_cpu_gate(feature, min, min);
        assert_eq!(code, 0, "{feature} at {min}x{min}: {err}");
        for c in report["cells"].as_array().expect("cells") {
            assert_eq!(c["status"], "OK", "{feature} at {min}x{min}: {c}");
        }
    }
}

#[test]
fn bad_options_are_refused_with_a_clear_error() {
    let cases = [
        ("{name: adm, options: {adm_enhn_gain_limt: 1.0}}", "did you mean `adm_enhn_gain_limit`?"),
        ("{name: adm, options: {adm_enhn_gain_limit: 0.5}}", "adm_enhn_gain_limit"),
        ("{name: adm, options: {adm_csf_mode: 4}}", "adm_csf_mode"),
        ("{name: float_adm, options: {adm_p_norm: \"three\"}}", "adm_p_norm"),
        ("{name: float_adm, options: {adm_skip_aim_scale: 4}}", "adm_skip_aim_scale"),
    ];
    for (entry, expected) in cases {
        let (code, err, _) = run_cpu_gate(entry, 64, 64);
        assert_eq!(code, 2, "{entry}: {err}");
        assert!(err.contains(expected), "{entry}: {err}");
        assert!(!err.contains("panicked"), "{entry}: {err}");
    }
}
