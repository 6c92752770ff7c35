//! `ulpgate bench` end to end on lavapipe. No timing is asserted (numbers
//! depend on the machine); what is checked is that every figure comes from
//! a run that happened: sides that scored their frames, kernels that
//! completed, exact upload sizes.

use assert_cmd::Command;
use serde_json::Value;

fn ulpgate() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ulpgate"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"));
    cmd
}

fn run_json(args: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("bench.json");
    let out = ulpgate().args(args).arg("--json-out").arg(&json).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

#[test]
fn gate_mode_times_whole_runs_and_each_side() {
    let r = run_json(&[
        "bench",
        "gates/pr-lavapipe.yaml",
        "--features",
        "psnr,float_ansnr",
        "--fixtures",
        "synthetic_128x80_16bit_420",
        "--vulkan-device",
        "llvmpipe",
        "--runs",
        "2",
        "--repeat",
        "1",
    ]);
    assert_eq!(r["mode"], "gate");
    assert_eq!(r["process"]["exit_codes"], serde_json::json!([0, 0]));
    assert!(r["process"]["wall"]["median"].as_f64().unwrap() > 0.0);
    assert_eq!(r["in_process"]["status"], "OK");
    let sides = r["sides"].as_array().unwrap();
    // cpu and vulkan for each of the two features (golden is not timed).
    assert_eq!(sides.len(), 4, "{sides:?}");
    for s in sides {
        assert!(s["error"].is_null(), "{s}");
        assert_eq!(s["frames"], 4);
        assert!(s["fps"].as_f64().unwrap() > 0.0);
        if s["backend"] == "vulkan" {
            assert!(s["arch_id"].as_str().unwrap().starts_with("vulkan:0x10005"));
            assert!(s["speedup_vs_cpu"].as_f64().is_some());
        }
    }
}

#[test]
fn clip_mode_measures_upload_included_excluded_and_bandwidth() {
    let dir = "fixtures/reference/testsrc2_200x184_8bit_420";
    let (reference, distorted) = (format!("{dir}/ref.yuv"), format!("{dir}/dist_x264.yuv"));
    let r = run_json(&[
        "bench",
        "--clip",
        &reference,
        &distorted,
        "--width",
        "200",
        "--height",
        "184",
        "--frames",
        "8",
        "--features",
        "psnr,float_ansnr",
        "--backends",
        "cpu,vulkan",
        "--vulkan-device",
        "llvmpipe",
        "--bandwidth-mib",
        "4",
    ]);
    assert_eq!(r["mode"], "clip");
    let vulkan = r["backends"].as_array().unwrap().iter().find(|b| b["backend"] == "vulkan").unwrap();
    assert!(vulkan["h2d_bytes_per_second"].as_f64().unwrap() > 0.0);
    assert_eq!(vulkan["device"]["arch_id"], "vulkan:0x10005:0x0000");
    let rows = r["throughput"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for t in rows {
        assert!(t["error"].is_null(), "{t}");
        assert!(t["upload_included_fps"].as_f64().unwrap() > 0.0);
        assert!(t["upload_excluded_fps"].as_f64().unwrap() > 0.0);
    }
    let row = |feature: &str, backend: &str| {
        rows.iter().find(|t| t["feature"] == feature && t["backend"] == backend).unwrap()
    };
    // psnr uploads all three planes of both frames, float_ansnr both lumas.
    assert_eq!(row("psnr", "vulkan")["upload_bytes_per_pair"], 2 * 200 * 184 * 3 / 2);
    assert_eq!(row("float_ansnr", "vulkan")["upload_bytes_per_pair"], 2 * 200 * 184);
    assert!(row("psnr", "vulkan")["dispatches"].as_u64().unwrap() > 0);
    assert!(row("psnr", "vulkan")["upload_included_vs_bound"].as_f64().unwrap() > 0.0);
    assert!(row("psnr", "cpu")["dispatches"].is_null());
}
