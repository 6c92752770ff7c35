//! `ulpgate bench` end to end on lavapipe. No timing is asserted (numbers
//! depend on the machine); what is checked is that every figure comes from
//! a run that happened: sides that scored their frames, kernels that
//! completed, exact upload sizes.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

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
    // cpu, vulkan and opencl for each of the two features (golden is not
    // timed).
    assert_eq!(sides.len(), 6, "{sides:?}");
    for s in sides {
        assert!(s["error"].is_null(), "{s}");
        assert_eq!(s["frames"], 4);
        assert!(s["fps"].as_f64().unwrap() > 0.0);
        if s["backend"] == "vulkan" {
            assert!(s["arch_id"].as_str().unwrap().starts_with("vulkan:0x10005"));
            assert!(s["speedup_vs_cpu"].as_f64().is_some());
        }
        if s["backend"] == "opencl" {
            assert!(s["arch_id"].as_str().unwrap().starts_with("opencl:"), "{s}");
        }
    }
}

#[test]
fn gate_mode_reads_fixtures_as_told_by_fixture_memory() {
    // 0: every file fixture read frame by frame, in the process runs, the
    // in-process run and the sides alone; the same cells and frames.
    let r = run_json(&[
        "bench",
        "gates/pr-lavapipe.yaml",
        "--features",
        "psnr",
        "--fixtures",
        "testsrc2_200x184_8bit_420/dist_x264",
        "--backends",
        "cpu,vulkan",
        "--vulkan-device",
        "llvmpipe",
        "--runs",
        "1",
        "--repeat",
        "1",
        "--fixture-memory",
        "0",
    ]);
    let command: Vec<&str> = r["process"]["command"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(command.windows(2).any(|w| w == ["--fixture-memory", "0"]), "{command:?}");
    assert_eq!(r["process"]["exit_codes"], serde_json::json!([0]));
    assert_eq!(r["in_process"]["status"], "OK");
    let sides = r["sides"].as_array().unwrap();
    assert_eq!(sides.len(), 2, "{sides:?}");
    for s in sides {
        assert!(s["error"].is_null(), "{s}");
        assert_eq!(s["frames"], 12, "{s}");
    }
}

#[test]
fn clip_mode_refuses_fixture_memory() {
    let out = ulpgate().args(clip_args(&["--fixture-memory", "0"])).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--fixture-memory is for gates"), "{err}");
}

/// Each mode's flags are refused by the other, not ignored.
#[test]
fn gate_mode_and_clip_mode_refuse_each_others_flags() {
    for (args, wanted) in [
        (vec!["bench", "--frames", "12"], "--clip <REF> <DIST>"),
        (vec!["bench", "--width", "200", "--height", "184"], "describe a --clip's raw YUV"),
    ] {
        let out = ulpgate().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(wanted), "{args:?}: {err}");
    }
    let out = ulpgate().args(clip_args(&["--runs", "2"])).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot be used with") && err.contains("--runs <N>"), "{err}");
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
    let h2d = vulkan["h2d"].as_array().unwrap();
    assert_eq!(h2d.len(), 1, "{h2d:?}");
    assert!(h2d[0]["bytes_per_second"].as_f64().unwrap() > 0.0);
    assert_eq!(vulkan["device"]["arch_id"], "vulkan:0x10005:0x0000");
    let rows = r["throughput"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for t in rows {
        assert!(t["error"].is_null(), "{t}");
        assert!(t["upload_included_fps"].as_f64().unwrap() > 0.0);
        assert!(t["upload_excluded_fps"].as_f64().unwrap() > 0.0);
        // A GPU backend's set-up is timed apart from its steady state.
        if t["backend"] == "vulkan" {
            assert!(t["setup_seconds"].as_f64().unwrap() > 0.0, "{t}");
        } else {
            assert!(t["setup_seconds"].is_null(), "{t}");
        }
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

const CLIP: &str = "fixtures/reference/testsrc2_200x184_8bit_420";

/// `bench --clip` on the 200x184 reference clip (12 frames) with `extra`.
fn clip_args(extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "bench",
        "--clip",
        &format!("{CLIP}/ref.yuv"),
        &format!("{CLIP}/dist_x264.yuv"),
        "--width",
        "200",
        "--height",
        "184",
        "--frames",
        "12",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// A stand-in for libvmaf's `vmaf` tool: it takes vmaf's arguments (and
/// prints a version on stderr, as vmaf does), logs each argv to `log`, and
/// writes `ulpgate score`'s libvmaf JSON; with `frames: Some(n)`, n frames
/// of made-up psnr scores instead (a command that reports a wrong count).
fn fake_vmaf(dir: &Path, frames: Option<usize>) -> (PathBuf, PathBuf) {
    let (script, log) = (dir.join("fake-vmaf"), dir.join("argv.log"));
    let score = match frames {
        None => format!(
            r#""{}" score --backend cpu --feature "$f" --reference "$r" --distorted "$d" --width "$w" --height "$h" \
  --bit-depth "$b" --chroma "$p" --json-out "$o" >/dev/null"#,
            env!("CARGO_BIN_EXE_ulpgate")
        ),
        Some(n) => {
            let frames: Vec<String> = (0..n)
                .map(|i| format!(r#"{{"frameNum": {i}, "metrics": {{"psnr_y": 1, "psnr_cb": 1, "psnr_cr": 1}}}}"#))
                .collect();
            format!("cat > \"$o\" <<'JSON'\n{{\"frames\": [{}]}}\nJSON", frames.join(", "))
        }
    };
    let body = format!(
        r#"#!/bin/sh
if [ "$1" = "--version" ]; then echo "9.9.9-test" >&2; exit 0; fi
echo "$*" >> "{log}"
while [ $# -gt 0 ]; do
  case "$1" in
    -r) r=$2; shift;; -d) d=$2; shift;; -w) w=$2; shift;; -h) h=$2; shift;;
    -p) p=$2; shift;; -b) b=$2; shift;; --feature) f=$2; shift;; -o) o=$2; shift;;
    --threads) shift;;
  esac
  shift
done
{score}
"#,
        log = log.display(),
    );
    std::fs::write(&script, body).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    (script, log)
}

#[test]
fn clip_mode_times_a_vmaf_binary_beside_the_cpu_at_each_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let (vmaf, log) = fake_vmaf(dir.path(), None);
    let vmaf = vmaf.display().to_string();
    let args = clip_args(&[
        "--features",
        "psnr,float_ansnr",
        "--backends",
        "cpu,vmaf",
        "--vmaf",
        &vmaf,
        "--threads",
        "1,2",
        "--rounds",
        "2",
    ]);
    let r = run_json(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!((r["clip_frames"].as_u64(), r["rounds"].as_u64()), (Some(12), Some(2)));
    let vmaf_backend = r["backends"].as_array().unwrap().iter().find(|b| b["backend"] == "vmaf").unwrap();
    assert_eq!(vmaf_backend["device"]["kind"], "external");
    assert_eq!(vmaf_backend["device"]["driver_version"], "9.9.9-test");
    let rows = r["throughput"].as_array().unwrap();
    // (cpu, vmaf) x (psnr, float_ansnr) x (1, 2 threads).
    assert_eq!(rows.len(), 8, "{rows:#?}");
    for t in rows {
        assert!(t["error"].is_null(), "{t}");
        let fps = t["upload_included_fps"].as_f64().unwrap();
        let rounds: Vec<f64> =
            t["upload_included_fps_rounds"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        // The median of two rounds: their mean.
        assert_eq!(rounds.len(), 2, "{t}");
        assert!(fps > 0.0 && (fps - (rounds[0] + rounds[1]) / 2.0).abs() <= 1e-9 * fps, "{t}");
        if t["backend"] == "vmaf" {
            // One untimed run, then 12 frames' worth of timed runs: 1.
            assert_eq!((t["process_runs"].as_u64(), t["frames"].as_u64()), (Some(1), Some(12)), "{t}");
            assert!(t["upload_excluded_fps"].is_null());
            // ulpgate score prints full precision: the same numbers.
            assert_eq!(t["max_abs_diff_vs_cpu"].as_f64(), Some(0.0), "{t}");
            assert!(t["speedup_vs_cpu"].as_f64().unwrap() > 0.0);
        } else {
            assert!(t["process_runs"].is_null() && t["max_abs_diff_vs_cpu"].is_null());
            // libvmaf's model: one more thread reads where a core is left
            // for it (its scores are the ones compared above: the same).
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
            assert_eq!(t["reading_thread"].as_bool(), Some(t["threads"].as_u64().unwrap() < cores), "{t}");
        }
    }
    let comparisons = r["comparisons"].as_array().unwrap();
    let keys: Vec<(String, u64)> =
        comparisons.iter().map(|c| (c["feature"].as_str().unwrap().into(), c["threads"].as_u64().unwrap())).collect();
    let expected = [("psnr", 1), ("psnr", 2), ("float_ansnr", 1), ("float_ansnr", 2)];
    assert_eq!(keys, expected.map(|(f, t)| (f.to_string(), t)));
    for c in comparisons {
        let ratio = c["cpu_fps"].as_f64().unwrap() / c["backend_fps"].as_f64().unwrap();
        assert!((c["cpu_over_backend"].as_f64().unwrap() - ratio).abs() < 1e-9 * ratio, "{c}");
    }
    // Per (feature, threads): an untimed and a timed run, then a timed run
    // in the second round; vmaf's --threads set to the count.
    let argvs = std::fs::read_to_string(&log).unwrap();
    assert_eq!(argvs.lines().count(), 12, "{argvs}");
    assert_eq!(argvs.lines().filter(|l| l.contains("--threads 2 ")).count(), 6, "{argvs}");
    for line in argvs.lines() {
        assert!(line.contains("-w 200 -h 184 -p 420 -b 8 --feature ") && line.contains(" --no_prediction "), "{line}");
    }
}

#[test]
fn clip_mode_takes_external_backends_from_a_gate() {
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("decl.yaml");
    let registry = Path::new(env!("CARGO_MANIFEST_DIR")).join("gates/features.yaml");
    std::fs::write(
        &gate,
        format!(
            r#"schema_version: 1
name: decl
registry: {registry}
features: [psnr]
backends:
  cpu: {{}}
  mine:
    kind: external
    command:
      argv: ["{bin}", score, --backend, cpu, --feature, "{{feature}}", --reference, "{{reference}}",
             --distorted, "{{distorted}}", --width, "{{width}}", --height, "{{height}}",
             --bit-depth, "{{bit_depth}}", --chroma, "{{chroma}}", --json-out, "{{output}}"]
      device: {{name: "ulpgate score", arch_id: "cpu:test"}}
pairs:
  - [cpu, mine]
fixtures:
  - name: s
    synthetic: {{width: 32, height: 16, frames: 2, bit_depth: 8, chroma: "420"}}
"#,
            registry = registry.display(),
            bin = env!("CARGO_BIN_EXE_ulpgate"),
        ),
    )
    .unwrap();
    let gate = gate.display().to_string();
    let args = clip_args(&["--features", "float_psnr", "--backends", "cpu,mine", "--gate", &gate]);
    let r = run_json(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let mine = r["throughput"].as_array().unwrap().iter().find(|t| t["backend"] == "mine").unwrap();
    assert_eq!(mine["max_abs_diff_vs_cpu"].as_f64(), Some(0.0), "{mine}");
    assert_eq!(r["comparisons"].as_array().unwrap().len(), 1);
}

#[test]
fn clip_mode_refuses_backends_it_cannot_place() {
    let dir = tempfile::tempdir().unwrap();
    let (vmaf, _) = fake_vmaf(dir.path(), None);
    let vmaf = vmaf.display().to_string();
    let fails = |extra: &[&str], needle: &str| {
        let out = ulpgate().args(clip_args(extra)).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(needle), "{needle:?} not in: {err}");
    };
    fails(&["--backends", "cpu,vmfa", "--vmaf", &vmaf], "--vmaf declares backend `vmaf`: name it in --backends");
    fails(&["--backends", "cpu,vmfa"], "unknown backend `vmfa`");
    fails(&["--backends", "cpu,vmaf"], "neither --gate nor --vmaf declares it");
    fails(&["--backends", "cpu,vmaf", "--vmaf", "/nonexistent/vmaf"], "cannot run `/nonexistent/vmaf --version`");
}

#[test]
fn an_external_reporting_other_frame_counts_is_an_error_row() {
    let dir = tempfile::tempdir().unwrap();
    let (vmaf, _) = fake_vmaf(dir.path(), Some(11));
    let vmaf = vmaf.display().to_string();
    let json = dir.path().join("b.json");
    let json_arg = json.display().to_string();
    let args = clip_args(&["--features", "psnr", "--backends", "cpu,vmaf", "--vmaf", &vmaf, "--json-out", &json_arg]);
    let out = ulpgate().args(&args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let row = r["throughput"].as_array().unwrap().iter().find(|t| t["backend"] == "vmaf").unwrap();
    assert!(row["error"].as_str().unwrap().contains("reported 11 frames of a 12-frame clip"), "{row}");
    assert!(r["comparisons"].as_array().unwrap().is_empty());
}
