//! The Vulkan backend through the binary, on Mesa lavapipe (which `.ci/run`
//! installs): the PR gate for real, a missing driver as ERROR or SKIP, and
//! device selection errors.

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

mod common;
use common::{gate_features, gate_fixtures, skipped_as_refused};

fn ulpgate() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ulpgate"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"));
    cmd
}

/// The loader's variables that point it at a driver file that is not there.
fn without_driver(cmd: &mut Command) -> &mut Command {
    cmd.env("VK_ICD_FILENAMES", "/nonexistent/icd.json").env("VK_DRIVER_FILES", "/nonexistent/icd.json")
}

fn report(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("the report was written")).expect("JSON")
}

fn cells<'a>(report: &'a Value, backend: &str) -> Vec<&'a Value> {
    report["cells"].as_array().expect("cells").iter().filter(|c| c["backend_b"] == backend).collect()
}

/// gates/pr-lavapipe.yaml, vulkan and opencl required, every fixture of
/// the default gate: every cell runs and passes, and each GPU side names
/// its software driver (lavapipe, PoCL).
#[test]
fn the_pr_gate_runs_cpu_vs_lavapipe_and_pocl() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let out = ulpgate()
        .args(["run", "gates/pr-lavapipe.yaml", "--quiet", "--vulkan-device", "llvmpipe", "--json-out"])
        .arg(&json)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let r = report(&json);
    let fixtures: Vec<&str> = r["cells"].as_array().unwrap().iter().filter_map(|c| c["fixture"].as_str()).collect();
    for name in ["8bit_420", "10bit_420", "8bit_444", "8bit_422", "10bit_444", "12bit_420", "16bit_420"] {
        assert!(fixtures.iter().any(|f| f.contains(name)), "no {name} fixture");
    }
    let gate = "gates/pr-lavapipe.yaml";
    for (backend, arch_prefix) in [("vulkan", "vulkan:0x10005"), ("opencl", "opencl:")] {
        let gpu = cells(&r, backend);
        // Every feature of the gate on each of its fixtures; where libvmaf
        // refuses the input (cambi below 216x216), SKIP with its reason.
        assert_eq!(gpu.len(), gate_features(gate).len() * gate_fixtures(gate).len(), "{backend}");
        let mut ran = 0;
        for c in &gpu {
            if skipped_as_refused(gate, c) {
                continue;
            }
            ran += 1;
            assert_eq!(c["status"], "OK", "{c}");
            let arch = c["device_b"]["arch_id"].as_str().unwrap();
            assert!(arch.starts_with(arch_prefix), "{arch}");
            assert_eq!(c["device_b"]["kind"], "gpu");
            assert_eq!(c["device_b"]["device_type"], "cpu", "{backend}: the software driver");
            assert!(c["n_frames"].as_u64().unwrap() > 0);
        }
        // Every feature ran somewhere (cambi on the 320x240 clips).
        assert!(ran > gate_features(gate).len(), "{backend}: {ran} cells ran");
        for feature in gate_features(gate) {
            assert!(
                gpu.iter().any(|c| c["feature"] == feature.as_str() && c["status"] == "OK"),
                "{backend}: {feature}"
            );
        }
        // The kernels replicate the CPU's arithmetic (exact integer sums,
        // squares rounded to f32 where libvmaf squares in float, float
        // filters rounded op by op without FMA): every metric agrees to the
        // last bit, but for ssimulacra2, which adds its f64 map sums in
        // another order on GPUs.
        for c in &gpu {
            let allowed = if c["feature"] == "ssimulacra2" {
                ulpgate::features::ssimulacra2::gpu::SUM_ORDER_TOLERANCE
            } else {
                0.0
            };
            for (metric, diff) in c["per_metric_max_abs_diff"].as_object().unwrap() {
                assert!(diff.as_f64().unwrap() <= allowed, "{metric} in {}: {diff}", c["id"]);
            }
        }
    }
}

/// The PR gate's float_ansnr cells again with `ansnr_row_groups`, the
/// kernel GPUs run (lavapipe, a CPU driver, runs `ansnr_filter_rows` unless
/// told otherwise): every fixture, every metric bit for bit.
#[test]
fn the_row_groups_kernel_matches_the_cpu_on_lavapipe() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let out = ulpgate()
        .env("ULPGATE_ANSNR_KERNEL", "groups")
        .env("ULPGATE_TRACE", "1")
        .args(["run", "gates/pr-lavapipe.yaml", "--quiet", "--vulkan-device", "llvmpipe", "--features", "float_ansnr"])
        .args(["--backends", "cpu,vulkan", "--json-out"])
        .arg(&json)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}{stderr}");
    common::assert_switch_took_effect(&stderr, "ULPGATE_ANSNR_KERNEL", "groups", &["ansnr_row_groups"], &["vulkan"]);
    let r = report(&json);
    let vulkan = cells(&r, "vulkan");
    assert_eq!(vulkan.len(), gate_fixtures("gates/pr-lavapipe.yaml").len(), "float_ansnr on every fixture");
    for c in vulkan {
        assert_eq!(c["status"], "OK", "{c}");
        assert!(c["device_b"]["arch_id"].as_str().unwrap().starts_with("vulkan:0x10005"));
        let diffs = c["per_metric_max_abs_diff"].as_object().unwrap();
        assert_eq!(diffs.len(), 2, "{}", c["id"]);
        for (metric, diff) in diffs {
            assert_eq!(diff.as_f64(), Some(0.0), "{metric} in {}", c["id"]);
        }
    }
}

#[test]
fn a_missing_driver_is_an_error_when_vulkan_is_required() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let out = without_driver(&mut ulpgate())
        .args(["run", "gates/pr-lavapipe.yaml", "--quiet", "--features", "psnr", "--backends", "cpu,vulkan"])
        .arg("--json-out")
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stdout));
    let r = report(&json);
    let vulkan = cells(&r, "vulkan");
    assert_eq!(vulkan.len(), gate_fixtures("gates/pr-lavapipe.yaml").len());
    for c in &vulkan {
        assert_eq!(c["status"], "ERROR");
        let note = c["note"].as_str().unwrap();
        // The loader's own reason, and the variable that caused it.
        assert!(note.contains("vulkan unavailable") && note.contains("(required)"), "{note}");
        assert!(note.contains("ERROR_INCOMPATIBLE_DRIVER"), "{note}");
        assert!(note.contains("/nonexistent/icd.json"), "{note}");
    }
    // --quiet still says why: once, for every cell it stopped.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let n = vulkan.len();
    let line = format!("ERROR {n} cells (cpu vs vulkan; psnr; {n} fixtures): vulkan unavailable");
    assert!(stdout.starts_with(&line), "{stdout}");
    assert_eq!(stdout.matches("ERROR_INCOMPATIBLE_DRIVER").count(), 1, "{stdout}");
}

#[test]
fn a_missing_driver_is_a_skip_when_vulkan_is_optional() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let out = without_driver(&mut ulpgate())
        .args(["run", "gates/default.yaml", "--quiet", "--features", "psnr", "--backends", "cpu,vulkan"])
        .arg("--json-out")
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    let r = report(&json);
    let vulkan = cells(&r, "vulkan");
    // psnr on every fixture of the default gate.
    assert_eq!(vulkan.len(), 12);
    for c in vulkan {
        assert_eq!(c["status"], "SKIP");
        let note = c["note"].as_str().unwrap();
        assert!(note.contains("(optional)") && note.contains("ERROR_INCOMPATIBLE_DRIVER"), "{note}");
        // And where a driver comes from, for a machine without one.
        assert!(note.contains("Debian's mesa-vulkan-drivers"), "{note}");
    }
}

#[test]
fn a_device_that_does_not_exist_names_those_that_do() {
    let out = ulpgate()
        .args(["run", "gates/default.yaml", "--quiet", "--features", "psnr", "--vulkan-device", "99"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no Vulkan device 99"), "{err}");
    assert!(err.contains("0: llvmpipe") && err.contains("[vulkan:0x10005:0x0000]"), "{err}");

    let out = ulpgate()
        .args(["score", "--backend", "vulkan", "--feature", "psnr", "--vulkan-device", "no-such-gpu"])
        .args(["--reference", "r.yuv", "--distorted", "d.yuv", "--width", "8", "--height", "8"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("\"no-such-gpu\"") && err.contains("llvmpipe"), "{err}");
}

#[test]
fn devices_lists_lavapipe_as_a_table_and_as_json() {
    let out = ulpgate().args(["devices", "--json"]).output().unwrap();
    assert!(out.status.success());
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let vulkan = list.as_array().unwrap().iter().find(|b| b["backend"] == "vulkan").expect("a vulkan entry");
    assert_eq!(vulkan["available"], true, "{vulkan}");
    let lavapipe = vulkan["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["arch_id"] == "vulkan:0x10005:0x0000")
        .expect("lavapipe listed");
    for field in ["name", "driver", "driver_version", "api_version", "device_type"] {
        assert!(lavapipe[field].as_str().is_some_and(|s| !s.is_empty()), "{field}: {lavapipe}");
    }
    let out = ulpgate().arg("devices").output().unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("vulkan:0x10005:0x0000") && table.contains("llvmpipe"), "{table}");

    let out = without_driver(&mut ulpgate()).args(["devices", "--json"]).output().unwrap();
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let vulkan = list.as_array().unwrap().iter().find(|b| b["backend"] == "vulkan").unwrap();
    assert_eq!(vulkan["available"], false);
    assert!(vulkan["reason"].as_str().unwrap().contains("ERROR_INCOMPATIBLE_DRIVER"), "{vulkan}");
}

#[test]
fn kernel_times_name_every_kernel_a_feature_dispatched() {
    let out = common::score_reference_clip("vulkan", "float_moment")
        .env("ULPGATE_KERNEL_TIMES", "1")
        .args(["--json-out", "/dev/null"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ulpgate kernel times"), "{err}");
    // One row per kernel: the backend, the kernel, its 12 dispatches (one a frame).
    let row = err.lines().find(|l| l.contains("moment_sums")).unwrap_or_else(|| panic!("no moment_sums row:\n{err}"));
    let fields: Vec<&str> = row.split('┆').map(|f| f.trim_matches(|c: char| c.is_whitespace() || c == '│')).collect();
    assert_eq!(fields[0], "vulkan", "{row}");
    assert_eq!(fields[2], "12", "{row}");
    assert!(fields[3].parse::<f64>().is_ok_and(|ms| ms > 0.0), "{row}");

    // Off by default: nothing printed.
    let out =
        common::score_reference_clip("vulkan", "float_moment").args(["--json-out", "/dev/null"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("kernel times"));
}

/// Uploads submitted apart from the kernels and waited for on a semaphore
/// (the path of GPUs with a transfer queue, forced here on lavapipe's one
/// queue): a temporal feature (uploads of this and the previous frame),
/// windowed filters and the exact sums stay bit for bit the CPU's.
#[test]
fn uploads_apart_from_the_kernels_keep_every_feature_bit_exact() {
    common::assert_bit_exact_with_env(
        "[psnr, motion, float_ssim, psnr_hvs]",
        10,
        "420",
        "ULPGATE_VK_UPLOADS",
        "split",
        &[],
    );
}
