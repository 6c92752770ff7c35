//! `vif` and `float_vif`: the CPU reference against libvmaf's recordings of
//! option variants (gain limit, skipped scale 0, kernel scales, noise
//! variance, score floors and every prescale method), and every GPU
//! pipeline against the CPU reference on Mesa lavapipe (Vulkan) and PoCL
//! (OpenCL): bit for bit, on the default gate's fixtures, on edge
//! geometries (every bit depth and subsampling, odd sizes, the smallest
//! pictures libvmaf scores) and under every option.

mod common;
use common::synthetic;

use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use ulpgate::backend::gpu::Gpu;
use ulpgate::features::{self, FeatureImpl, Options, run_extractor};
use ulpgate::fixture::{Chroma, FrameSource, Geometry, LoadedFixture};
use ulpgate::scores::read_libvmaf_json;

fn reference_root() -> PathBuf {
    common::root().join("fixtures/reference")
}

/// libvmaf's `--feature` argument (`float_vif=debug=true:vif_kernelscale=0.5`)
/// as a feature name and options.
fn parse_feature(arg: &str) -> (String, Options) {
    let (name, rest) = arg.split_once('=').unwrap_or((arg, ""));
    let mut options = Options::new();
    for pair in rest.split(':').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').expect("option=value");
        let value = match v {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => match v.parse::<f64>() {
                Ok(x) => serde_json::json!(x),
                Err(_) => Value::String(v.to_string()),
            },
        };
        options.insert(k.to_string(), value);
    }
    (name.to_string(), options)
}

fn load_pair(folder: &str, dist: &str, geometry: Geometry, frames: usize) -> LoadedFixture {
    let src =
        |name: &str| FrameSource::Raw { path: reference_root().join(folder).join(format!("{name}.yuv")), geometry };
    LoadedFixture::load(&src("ref"), &src(dist), Some(frames)).expect("reference fixture")
}

/// Every recording of a vif option variant: `scores/<fixture>/<dist>/`
/// `vif_*.json` and `float_vif_*.json` beside the registry's own.
fn option_recordings() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for fixture in std::fs::read_dir(reference_root().join("scores")).unwrap() {
        for dist in std::fs::read_dir(fixture.unwrap().path()).unwrap() {
            for file in std::fs::read_dir(dist.unwrap().path()).unwrap() {
                let path = file.unwrap().path();
                let name = path.file_stem().unwrap().to_str().unwrap().to_string();
                let default = ["vif", "float_vif", "vif_debug", "float_vif_debug"].contains(&name.as_str());
                if (name.starts_with("vif_") || name.starts_with("float_vif_")) && !default {
                    out.push(path);
                }
            }
        }
    }
    out.sort();
    out
}

fn geometry_of(doc: &Value) -> Geometry {
    let chroma =
        if doc["pixel_format"].as_str().unwrap().starts_with("yuv444") { Chroma::Yuv444 } else { Chroma::Yuv420 };
    Geometry {
        width: doc["width"].as_u64().unwrap() as u32,
        height: doc["height"].as_u64().unwrap() as u32,
        bit_depth: doc["bitdepth"].as_u64().unwrap() as u8,
        chroma,
    }
}

/// Frames checked per option recording: the first few (the debug build's
/// CPU reference is slow; every option changes every frame alike).
const RECORDED_FRAMES: usize = 3;

#[test]
fn cpu_reference_reproduces_every_option_recording() {
    let recordings = option_recordings();
    assert!(recordings.len() >= 30, "expected the option recordings, found {}", recordings.len());
    for path in &recordings {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let (name, options) = parse_feature(doc["feature"].as_str().unwrap());
        let imp: &FeatureImpl = features::find(&name).unwrap();
        let geometry = geometry_of(&doc);
        let dir = path.parent().unwrap();
        let fixture = load_pair(
            dir.parent().unwrap().file_name().unwrap().to_str().unwrap(),
            dir.file_name().unwrap().to_str().unwrap(),
            geometry,
            RECORDED_FRAMES,
        );
        let recorded = read_libvmaf_json(path).unwrap();
        let ours = run_extractor(imp.cpu_extractor(&geometry, &options).unwrap(), &fixture, &|| {}).unwrap();
        let metrics = (imp.metrics)(&options).unwrap();
        let printed: Vec<&str> = recorded.scores.metrics().map(|(m, _)| m).collect();
        assert_eq!(metrics.len(), printed.len(), "{}: libvmaf printed {printed:?}", path.display());
        for metric in metrics {
            let want = recorded.scores.get(&metric).unwrap_or_else(|| panic!("{}: no {metric}", path.display()));
            let got = ours.get(&metric).unwrap();
            assert_eq!(got.len(), RECORDED_FRAMES);
            for (i, (w, g)) in want.iter().zip(got).enumerate() {
                assert!((w - g).abs() <= 1e-6, "{} {metric} frame {i}: libvmaf {w}, ours {g}", path.display());
            }
        }
    }
}

/// Lavapipe and PoCL, opened once for every test of this file: PoCL's
/// device discovery is not safe to run from two threads at once (a second
/// concurrent open finds no device, or crashes).
fn gpus() -> &'static [(&'static str, Arc<dyn Gpu>)] {
    static GPUS: OnceLock<Vec<(&'static str, Arc<dyn Gpu>)>> = OnceLock::new();
    GPUS.get_or_init(common::software_gpus)
}

/// Every metric of `feature` under `options`, CPU reference against each
/// software GPU, bit for bit.
fn assert_gpus_match_cpu(feature: &str, options: &Options, fixtures: &[(&str, &LoadedFixture)]) {
    let imp = features::find(feature).unwrap();
    for (backend, gpu) in gpus() {
        for &(name, fx) in fixtures {
            let cpu = run_extractor(imp.cpu_extractor(&fx.geometry, options).unwrap(), fx, &|| {})
                .unwrap_or_else(|e| panic!("{feature} cpu on {name}: {e:#}"));
            let what = format!("{feature} on {backend}, {name} {options:?}");
            let out = common::on_gpu(gpu, fx.frames(), &what, |gpu| {
                let ext = imp.gpu_extractor(gpu, &fx.geometry, options).unwrap_or_else(|e| panic!("{what}: {e:#}"));
                run_extractor(ext, fx, &|| {}).unwrap_or_else(|e| panic!("{what}: {e:#}"))
            });
            for metric in (imp.metrics)(options).unwrap() {
                let (a, b) = (cpu.get(&metric).unwrap(), out.get(&metric).unwrap());
                assert_eq!(a.len(), fx.frames(), "{metric} on {name}");
                common::assert_same_bits(a, b, &format!("{what}: {metric}"));
            }
        }
    }
}

/// The default gate's fixtures, their first `frames` frames (the debug
/// build's CPU reference is slow; the gate itself runs every frame).
fn default_gate_fixtures(frames: usize) -> Vec<(String, LoadedFixture)> {
    let gate = ulpgate::config::resolve::load_gate(&common::root().join("gates/default.yaml")).expect("default gate");
    gate.fixtures
        .iter()
        .map(|f| (f.name.clone(), LoadedFixture::load(&f.reference, &f.distorted, Some(frames)).expect(&f.name)))
        .collect()
}

/// Geometries at the edges: every bit depth and subsampling, odd sizes,
/// the smallest picture libvmaf scores (16x16), widths around the
/// horizontal kernel's 256-column groups and heights around its 8 rows.
fn edge_fixtures() -> Vec<(String, LoadedFixture)> {
    let cases = [
        (16, 16, 8, Chroma::Yuv420),
        (17, 16, 10, Chroma::Yuv422),
        (16, 17, 12, Chroma::Yuv444),
        (33, 19, 16, Chroma::Yuv420),
        (101, 67, 8, Chroma::Yuv400),
        (257, 23, 10, Chroma::Yuv420),
        (300, 41, 16, Chroma::Yuv444),
    ];
    cases
        .iter()
        .enumerate()
        .map(|(k, &(w, h, bd, c))| {
            (format!("{w}x{h} {bd}-bit {}", c.as_str()), synthetic(w, h, bd, c, 2, k as u64 + 7))
        })
        .collect()
}

fn opts(v: Value) -> Options {
    serde_json::from_value(v).unwrap()
}

fn check_all(feature: &str, options: &Options, fixtures: &[(String, LoadedFixture)]) {
    let refs: Vec<(&str, &LoadedFixture)> = fixtures.iter().map(|(n, f)| (n.as_str(), f)).collect();
    assert_gpus_match_cpu(feature, options, &refs);
}

#[test]
fn vif_gpus_match_the_cpu_on_the_default_gate_and_edge_geometries() {
    check_all("vif", &Options::new(), &default_gate_fixtures(1));
    check_all("vif", &Options::new(), &edge_fixtures());
}

#[test]
fn float_vif_gpus_match_the_cpu_on_the_default_gate_and_edge_geometries() {
    check_all("float_vif", &Options::new(), &default_gate_fixtures(1));
    check_all("float_vif", &Options::new(), &edge_fixtures());
}

#[test]
fn vif_gpus_match_the_cpu_under_every_option() {
    let fx = vec![("67x45 10-bit".to_string(), synthetic(67, 45, 10, Chroma::Yuv420, 2, 3))];
    for o in [
        json!({"debug": true}),
        json!({"vif_enhn_gain_limit": 1.0, "debug": true}),
        json!({"egl": 1.7, "vif_skip_scale0": true, "debug": true}),
    ] {
        check_all("vif", &opts(o), &fx);
    }
}

#[test]
fn float_vif_gpus_match_the_cpu_under_every_option() {
    let fx = vec![("67x45 8-bit".to_string(), synthetic(67, 45, 8, Chroma::Yuv420, 2, 4))];
    for o in [
        json!({"debug": true}),
        json!({"vif_enhn_gain_limit": 1.0}),
        json!({"vif_kernelscale": 0.5, "debug": true}),
        json!({"vif_kernelscale": 1.5}),
        json!({"vif_sigma_nsq": 0.0, "debug": true}),
        json!({"vif_sigma_nsq": 1.0, "vif_scale1_min_val": 0.5, "vif_scale2_min_val": 0.6, "vif_scale3_min_val": 0.7}),
        json!({"vif_skip_scale0": true, "debug": true}),
        json!({"vif_prescale": 0.75}),
        json!({"vif_prescale": 1.5, "vif_prescale_method": "bilinear"}),
        json!({"vif_prescale": 0.6, "vif_prescale_method": "bilinear"}),
        json!({"vif_prescale": 1.3, "vif_prescale_method": "bicubic"}),
        json!({"vif_prescale": 0.5, "vif_prescale_method": "bicubic"}),
        json!({"vif_prescale": 2.0, "vif_prescale_method": "lanczos4"}),
        json!({"vif_prescale": 0.7, "vif_prescale_method": "lanczos4"}),
    ] {
        check_all("float_vif", &opts(o), &fx);
    }
    // A wide kernel on a larger picture (scale 0: 65 taps).
    let big = vec![("160x128 12-bit".to_string(), synthetic(160, 128, 12, Chroma::Yuv422, 1, 5))];
    check_all("float_vif", &opts(json!({"vif_kernelscale": 3.7113402})), &big);
}

/// A gate of `features` (YAML) on one raw 8-bit 4:2:0 fixture of `w` x `h`
/// written into `dir`, cpu vs vulkan.
fn raw_gate(dir: &std::path::Path, features: &str, (w, h): (usize, usize)) -> PathBuf {
    let bytes = 2 * (w * h + 2 * w.div_ceil(2) * h.div_ceil(2));
    std::fs::write(dir.join("r.yuv"), (0..bytes).map(|i| (i * 7 % 251) as u8).collect::<Vec<_>>()).unwrap();
    std::fs::write(dir.join("d.yuv"), (0..bytes).map(|i| (i * 5 % 241) as u8).collect::<Vec<_>>()).unwrap();
    common::write(
        dir,
        "g.yaml",
        &format!(
            "{}features: {features}\nbackends: {{cpu: {{}}, vulkan: {{}}}}\npairs: [[cpu, vulkan]]\nfixtures:\n  - name: raw\n    reference: {}\n    distorted: {}\n    geometry: {{width: {w}, height: {h}, bit_depth: 8, chroma: \"420\"}}\n",
            common::HEADER,
            dir.join("r.yuv").display(),
            dir.join("d.yuv").display()
        ),
    )
}

/// Runs a gate through the binary: exit code, stderr, report cells.
fn run_binary(gate: &std::path::Path) -> (i32, String, Vec<Value>) {
    let json = gate.with_file_name("report.json");
    let out = common::ulpgate().arg("run").arg(gate).arg("--json-out").arg(&json).output().unwrap();
    let cells = std::fs::read_to_string(&json)
        .ok()
        .map(|s| serde_json::from_str::<Value>(&s).unwrap()["cells"].as_array().unwrap().clone())
        .unwrap_or_default();
    (out.status.code().unwrap(), String::from_utf8_lossy(&out.stderr).into(), cells)
}

#[test]
fn bad_vif_options_are_refused_with_the_nearest_name_range_and_type() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("[{name: vif, options: {vif_enhn_gain_limt: 1.0}}]", "did you mean `vif_enhn_gain_limit`?"),
        ("[{name: vif, options: {vif_enhn_gain_limit: 0.5}}]", "is 0.5, below its minimum 1"),
        ("[{name: vif, options: {vif_skip_scale0: 3}}]", "has the wrong type"),
        (
            "[{name: float_vif, options: {vif_kernelscale: 1.0, vif_prescale_methd: bicubic}}]",
            "did you mean `vif_prescale_method`?",
        ),
        ("[{name: float_vif, options: {vif_prescale: 100.0}}]", "above its maximum"),
    ];
    for (features, expected) in cases {
        let gate = raw_gate(dir.path(), features, (32, 32));
        let (code, stderr, cells) = run_binary(&gate);
        assert_eq!(code, 2, "{features}: {stderr}");
        assert!(stderr.contains(expected), "{features}: {stderr}");
        assert!(cells.is_empty(), "{features}: no report for a bad gate");
    }
}

#[test]
fn frames_too_small_for_the_filters_are_skipped_with_libvmafs_reason() {
    let dir = tempfile::tempdir().unwrap();
    // 15 columns: scale 3 is 1 wide, not more than its 3-tap filter's half.
    let gate = raw_gate(dir.path(), "[vif, float_vif]", (15, 16));
    let (code, stderr, cells) = run_binary(&gate);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(cells.len(), 2);
    for c in &cells {
        assert_eq!(c["status"], "SKIP", "{c}");
        let note = c["note"].as_str().unwrap();
        assert!(note.contains("has no score to reproduce at 15x16: scale 3 is 1x2"), "{note}");
    }
    // 16 x 16, the smallest picture both take, is scored on both sides.
    let gate = raw_gate(dir.path(), "[vif, float_vif]", (16, 16));
    let (code, stderr, cells) = run_binary(&gate);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(cells.len(), 2);
    assert!(cells.iter().all(|c| c["status"] == "OK"), "{cells:?}");
}

/// Both kernel shapes on both CPU drivers, through the binary: the choice
/// by driver (strip on lavapipe, per pixel on PoCL) leaves each driver one
/// shape by default, so each run here forces one shape on both, bit for
/// bit with the CPU on the recorded 8-bit clip and a synthetic 10-bit
/// 4:2:2 one.
#[test]
fn both_kernel_shapes_are_bit_exact_on_lavapipe_and_pocl() {
    for (shape, kernels) in [
        ("strip", ["vif_horizontal_strip", "float_vif_horizontal_strip"]),
        ("pixel", ["vif_horizontal", "float_vif_horizontal"]),
    ] {
        common::assert_bit_exact_with_env("[vif, float_vif]", 10, "422", features::vif::SHAPE_VAR, shape, &kernels);
    }
}
