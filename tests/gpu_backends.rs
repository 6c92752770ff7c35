//! The CUDA and OpenCL backends through the binary, on every fixture of the
//! default gate. OpenCL runs for real on whatever the ICD loader finds (in
//! CI: PoCL, which .ci/run installs); CUDA, where it is absent, must say so
//! and never produce an OK cell.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

mod common;
use common::{gate_features, refusal, skipped_as_refused};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// gates/default.yaml with its relative paths made absolute (so it runs
/// from a temporary folder) and `edits` applied; each edit must match.
fn default_gate_with(dir: &Path, name: &str, edits: &[(&str, &str)]) -> PathBuf {
    let root = root();
    let mut text = std::fs::read_to_string(root.join("gates/default.yaml")).expect("gates/default.yaml");
    let mut all = vec![
        ("registry: features.yaml".to_string(), format!("registry: {}", root.join("gates/features.yaml").display())),
        ("../".to_string(), format!("{}/", root.display())),
    ];
    all.extend(edits.iter().map(|(a, b)| (a.to_string(), b.to_string())));
    for (from, to) in all {
        assert!(text.contains(&from), "gates/default.yaml no longer contains `{from}`: update this test");
        text = text.replace(&from, &to);
    }
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write gate");
    path
}

/// The fixture names of the default gate.
fn default_fixtures() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("gates/default.yaml")).expect("gates/default.yaml");
    let gate: Value = serde_yaml::from_str(&text).expect("valid YAML");
    gate["fixtures"]
        .as_array()
        .expect("fixtures")
        .iter()
        .map(|f| f["name"].as_str().expect("name").to_string())
        .collect()
}

/// Runs a gate and returns (exit code, report JSON).
fn run_gate(gate: &Path, args: &[&str]) -> (i32, Value) {
    run_gate_with(gate, args, &[])
}

/// [`run_gate`] with environment variables set.
fn run_gate_with(gate: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, Value) {
    let (code, report, _) = run_gate_traced(gate, args, env);
    (code, report)
}

/// [`run_gate_with`] with `ULPGATE_TRACE=1`; also returns standard error.
fn run_gate_traced(gate: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, Value, String) {
    let out = gate.with_extension("json");
    let result = Command::cargo_bin("ulpgate")
        .expect("binary")
        .envs(env.iter().copied())
        .env("ULPGATE_TRACE", "1")
        .arg("run")
        .arg(gate)
        .args(args)
        .arg("--json-out")
        .arg(&out)
        .arg("--quiet")
        .output()
        .expect("runs");
    let code = result.status.code().expect("exit code");
    let report = std::fs::read_to_string(&out).unwrap_or_else(|_| {
        panic!(
            "no report; stdout: {}\nstderr: {}",
            String::from_utf8_lossy(&result.stdout),
            String::from_utf8_lossy(&result.stderr)
        )
    });
    (code, serde_json::from_str(&report).expect("report JSON"), String::from_utf8_lossy(&result.stderr).into_owned())
}

fn cells_of<'a>(report: &'a Value, backend: &str) -> Vec<&'a Value> {
    report["cells"].as_array().expect("cells").iter().filter(|c| c["backend_b"] == backend).collect()
}

#[test]
fn opencl_matches_cpu_on_every_default_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let gate =
        default_gate_with(dir.path(), "opencl.yaml", &[("opencl: {required: false}", "opencl: {required: true}")]);
    let (code, report) = run_gate(&gate, &["--backends", "cpu,opencl"]);
    let cells = cells_of(&report, "opencl");
    let fixtures = default_fixtures();
    let features = gate_features("gates/default.yaml");
    assert_eq!(cells.len(), features.len() * fixtures.len(), "{features:?} on every fixture");
    for c in &cells {
        if skipped_as_refused("gates/default.yaml", c) {
            continue; // libvmaf refuses the input (cambi below 216x216)
        }
        assert_eq!(c["status"], "OK", "{}: {}", c["id"], c["note"]);
        let arch = c["device_b"]["arch_id"].as_str().unwrap_or_default();
        assert!(arch.starts_with("opencl:"), "{}: ran on {arch}", c["id"]);
        assert_eq!(c["device_b"]["kind"], "gpu");
        // The kernels replicate the CPU's arithmetic: integer sums are
        // exact, squares are rounded to f32 where libvmaf squares in float,
        // and float kernels round op by op like the CPU, so every metric
        // agrees bit for bit.
        // ssimulacra2 adds its f64 map sums in another order on GPUs.
        let allowed =
            if c["feature"] == "ssimulacra2" { ulpgate::features::ssimulacra2::gpu::SUM_ORDER_TOLERANCE } else { 0.0 };
        for (metric, diff) in c["per_metric_max_abs_diff"].as_object().unwrap() {
            assert!(diff.as_f64().unwrap() <= allowed, "{}: {metric} differs by {diff}", c["id"]);
        }
    }
    for f in &fixtures {
        assert!(cells.iter().any(|c| c["fixture"] == f.as_str()), "fixture {f} not run");
    }
    // Every feature compared somewhere: the SKIPs above are libvmaf's
    // refusals, and none may take a whole feature.
    for feature in &features {
        assert!(cells.iter().any(|c| c["feature"] == feature.as_str() && c["status"] == "OK"), "{feature}");
    }
    assert_eq!(code, 0);
}

/// The float_ansnr cells of the default gate again with `ansnr_row_groups`,
/// the kernel GPUs run (PoCL, a CPU device, runs `ansnr_filter_rows` unless
/// told otherwise): every fixture, every metric bit for bit.
#[test]
fn opencl_row_groups_match_cpu_on_every_default_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let gate =
        default_gate_with(dir.path(), "opencl.yaml", &[("opencl: {required: false}", "opencl: {required: true}")]);
    let args = ["--backends", "cpu,opencl", "--features", "float_ansnr"];
    let (code, report, stderr) = run_gate_traced(&gate, &args, &[("ULPGATE_ANSNR_KERNEL", "groups")]);
    common::assert_switch_took_effect(&stderr, "ULPGATE_ANSNR_KERNEL", "groups", &["ansnr_row_groups"], &["opencl"]);
    let cells = cells_of(&report, "opencl");
    let fixtures = default_fixtures();
    assert_eq!(cells.len(), fixtures.len());
    for c in &cells {
        assert_eq!(c["status"], "OK", "{}: {}", c["id"], c["note"]);
        assert!(c["device_b"]["arch_id"].as_str().unwrap_or_default().starts_with("opencl:"));
        let diffs = c["per_metric_max_abs_diff"].as_object().unwrap();
        assert_eq!(diffs.len(), 2, "{}", c["id"]);
        for (metric, diff) in diffs {
            assert_eq!(diff.as_f64(), Some(0.0), "{}: {metric} differs by {diff}", c["id"]);
        }
    }
    assert_eq!(code, 0);
}

/// float_ansnr on rows narrower than a work group, wider than one chunk of
/// `ansnr_row_groups` (1024 pixels, not a multiple of it or of the group's
/// 128) and as wide as a synthetic fixture may be, on lavapipe and PoCL
/// (both required), with each kernel and with the automatic choice: every
/// metric bit for bit.
#[test]
fn both_ansnr_kernels_match_cpu_at_odd_and_wide_widths() {
    let root = root();
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("widths.yaml");
    let text = format!(
        r#"schema_version: 1
name: ansnr-widths
registry: {registry}
calibration: {calibration}
features: [float_ansnr]
backends:
  cpu: {{}}
  vulkan: {{required: true, device: llvmpipe}}
  opencl: {{required: true}}
pairs:
  - [cpu, vulkan]
  - [cpu, opencl]
fixtures:
  - name: synthetic_37x21_8bit_420
    synthetic: {{width: 37, height: 21, frames: 2, bit_depth: 8, chroma: "420", seed: 7}}
  - name: synthetic_2100x16_10bit_444
    synthetic: {{width: 2100, height: 16, frames: 2, bit_depth: 10, chroma: "444", seed: 8}}
  - name: synthetic_8192x16_16bit_420
    synthetic: {{width: 8192, height: 16, frames: 2, bit_depth: 16, chroma: "420", seed: 9}}
"#,
        registry = root.join("gates/features.yaml").display(),
        calibration = root.join("calibration/gpu_ulp_calibration.yaml").display(),
    );
    std::fs::write(&gate, text).unwrap();
    for kernel in ["rows", "groups", ""] {
        let (code, report, stderr) = run_gate_traced(&gate, &[], &[("ULPGATE_ANSNR_KERNEL", kernel)]);
        let built = match kernel {
            "rows" => Some("ansnr_filter_rows"),
            "groups" => Some("ansnr_row_groups"),
            _ => None,
        };
        if let Some(built) = built {
            common::assert_switch_took_effect(&stderr, "ULPGATE_ANSNR_KERNEL", kernel, &[built], &["opencl", "vulkan"]);
        }
        let cells: Vec<&Value> = report["cells"].as_array().unwrap().iter().collect();
        assert_eq!(cells.len(), 6, "{kernel:?}: 3 fixtures x (vulkan, opencl)");
        for c in cells {
            assert_eq!(c["status"], "OK", "{kernel:?}, {}: {}", c["id"], c["note"]);
            for (metric, diff) in c["per_metric_max_abs_diff"].as_object().unwrap() {
                assert_eq!(diff.as_f64(), Some(0.0), "{kernel:?}, {}: {metric} differs by {diff}", c["id"]);
            }
        }
        assert_eq!(code, 0, "{kernel:?}");
    }
}

/// An `ULPGATE_ANSNR_KERNEL` that names no kernel is an ERROR naming the
/// valid values, never a silent fallback to one of them.
#[test]
fn an_unknown_ansnr_kernel_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let gate =
        default_gate_with(dir.path(), "opencl.yaml", &[("opencl: {required: false}", "opencl: {required: true}")]);
    let args = ["--backends", "cpu,opencl", "--features", "float_ansnr", "--fixtures", "synthetic_176x144_8bit_422"];
    let (code, report) = run_gate_with(&gate, &args, &[("ULPGATE_ANSNR_KERNEL", "fast")]);
    assert_eq!(code, 2);
    let cells = cells_of(&report, "opencl");
    assert_eq!(cells.len(), 1);
    let note = cells[0]["note"].as_str().unwrap();
    assert_eq!(cells[0]["status"], "ERROR", "{note}");
    assert!(
        note.contains("ULPGATE_ANSNR_KERNEL=\"fast\"") && note.contains("`rows`") && note.contains("`groups`"),
        "{note}"
    );
}

#[test]
fn opencl_names_the_devices_when_the_selected_one_does_not_exist() {
    let dir = tempfile::tempdir().unwrap();
    let gate = default_gate_with(
        dir.path(),
        "opencl.yaml",
        &[("opencl: {required: false}", "opencl: {required: true, device: 99}")],
    );
    let (code, report) = run_gate(&gate, &["--backends", "cpu,opencl", "--fixtures", "synthetic_176x144_8bit_422"]);
    assert_eq!(code, 2);
    let cells = cells_of(&report, "opencl");
    assert!(!cells.is_empty());
    for c in cells {
        assert_eq!(c["status"], "ERROR");
        let note = c["note"].as_str().unwrap();
        assert!(note.contains("no OpenCL device 99; the devices are 0: "), "{note}");
    }
}

/// `--opencl-device` overrides the gate's `device` for every opencl
/// backend, as `--vulkan-device` does for vulkan.
#[test]
fn the_command_lines_opencl_device_overrides_the_gates() {
    let dir = tempfile::tempdir().unwrap();
    let gate = default_gate_with(
        dir.path(),
        "opencl.yaml",
        &[("opencl: {required: false}", "opencl: {required: true, device: 99}")],
    );
    let fixture = ["--backends", "cpu,opencl", "--fixtures", "synthetic_176x144_8bit_422", "--features", "psnr"];
    let (code, report) = run_gate(&gate, &[&fixture[..], &["--opencl-device", "0"]].concat());
    assert_eq!(code, 0, "{report}");
    let cells = cells_of(&report, "opencl");
    assert_eq!(cells.len(), 1);
    assert_eq!(cells[0]["status"], "OK", "{}", cells[0]);
    assert_eq!(cells[0]["device_b"]["device_type"], "cpu", "PoCL: {}", cells[0]["device_b"]);
}

#[test]
fn cuda_cells_are_never_ok_without_cuda() {
    let reason = ulpgate::backend::cuda::unavailable_reason();
    let dir = tempfile::tempdir().unwrap();
    let fixture = ["--backends", "cpu,cuda", "--fixtures", "synthetic_176x144_8bit_422"];

    let required =
        default_gate_with(dir.path(), "required.yaml", &[("cuda: {required: false}", "cuda: {required: true}")]);
    let (code, report) = run_gate(&required, &fixture);
    let cells = cells_of(&report, "cuda");
    assert_eq!(cells.len(), gate_features("gates/default.yaml").len(), "one cell per feature");
    match &reason {
        // This machine has no usable CUDA (CI): ERROR, with the reason.
        Some(reason) => {
            assert_eq!(code, 2);
            for c in &cells {
                assert_eq!(c["status"], "ERROR");
                assert_eq!(c["note"], format!("cuda unavailable: {reason} (required)"));
            }
        }
        // A CUDA machine: the same gate must pass on the GPU.
        None => {
            assert_eq!(code, 0);
            for c in cells.iter().filter(|c| !skipped_as_refused("gates/default.yaml", c)) {
                assert_eq!(c["status"], "OK", "{}", c["note"]);
                assert!(c["device_b"]["arch_id"].as_str().unwrap().starts_with("cuda:"));
            }
        }
    }

    let optional = default_gate_with(dir.path(), "optional.yaml", &[]);
    let (code, report) = run_gate(&optional, &fixture);
    assert_eq!(code, 0);
    for c in cells_of(&report, "cuda") {
        let refused = refusal("gates/default.yaml", c["feature"].as_str().unwrap(), "synthetic_176x144_8bit_422");
        let expected = if reason.is_some() || refused.is_some() { "SKIP" } else { "OK" };
        assert_eq!(c["status"], expected, "{}", c["note"]);
    }
}

#[test]
fn devices_lists_both_backends_or_says_why_not() {
    let out = Command::cargo_bin("ulpgate").unwrap().args(["devices", "--json"]).output().unwrap();
    assert!(out.status.success());
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let entry = |name: &str| list.as_array().unwrap().iter().find(|e| e["backend"] == name).cloned().unwrap();
    let cuda = entry("cuda");
    match ulpgate::backend::cuda::unavailable_reason() {
        Some(reason) => {
            assert_eq!(cuda["available"], false);
            assert_eq!(cuda["reason"], reason.as_str());
        }
        None => assert!(cuda["devices"][0]["arch_id"].as_str().unwrap().starts_with("cuda:")),
    }
    let opencl = entry("opencl");
    assert_eq!(
        opencl["available"], true,
        "OpenCL must be available for the tests (.ci/run installs PoCL): {}",
        opencl["reason"]
    );
    assert!(opencl["devices"][0]["arch_id"].as_str().unwrap().starts_with("opencl:0x"));

    let table = Command::cargo_bin("ulpgate").unwrap().arg("devices").output().unwrap();
    let text = String::from_utf8_lossy(&table.stdout);
    if let Some(reason) = ulpgate::backend::cuda::unavailable_reason() {
        assert!(text.contains("unavailable: ") && text.contains(&reason[..20]), "{text}");
    }
}
