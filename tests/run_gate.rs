//! `ulpgate run` end to end: the default gate, report contents, schema
//! validity, determinism, and re-rendering.

mod common;
use common::*;

#[test]
fn default_gate_pins_the_cpu_to_libvmaf_and_skips_absent_gpus_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let (json, md) = (dir.path().join("r.json"), dir.path().join("r.md"));
    let out = ulpgate()
        .args(["run", "--backends", "golden,fork,cpu", "--json-out"])
        .arg(&json)
        .arg("--md-out")
        .arg(&md)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["schema_version"], 1);
    let cells = report["cells"].as_array().unwrap();
    // Every recording of every feature of the gate (upstream libvmaf's on
    // the 8 recorded pairs, the fork's on the 4 it recorded), each held to
    // it within 1e-6: a feature left out of the recorded pairs fails here.
    let expected = recorded_cells("gates/default.yaml");
    assert!(expected >= gate_features("gates/default.yaml").len() * 4);
    // libvmaf itself refused some inputs (cambi below 216x216): those cells
    // SKIP with its reason.
    assert_eq!(cells.len(), expected);
    let mut skipped = 0;
    for c in cells {
        if skipped_as_refused("gates/default.yaml", c) {
            skipped += 1;
            continue;
        }
        assert_eq!(c["status"], "OK", "{c}");
        assert_eq!(c["tolerance_abs"], 1e-6);
        let recorder = c["backend_a"].as_str().unwrap();
        assert_eq!(c["tolerance_source"], format!("pair:{recorder}-vs-cpu"));
        let tool = c["device_a"]["name"].as_str().unwrap();
        assert_eq!(c["device_b"]["kind"], "cpu");
        let worst =
            c["per_metric_max_abs_diff"].as_object().unwrap().values().map(|v| v.as_f64().unwrap()).fold(0.0, f64::max);
        assert!(worst <= 1e-6, "{c}");
        match recorder {
            "golden" => {
                assert!(tool.starts_with("libvmaf 3.2.0"), "{c}");
                assert!(worst > 0.0, "printed %.6f values differ a little from full precision: {worst}");
            }
            // Full precision (%.17g): exact doubles.
            "fork" => assert!(tool.starts_with("lusoris fork"), "{c}"),
            other => panic!("unexpected recorder {other}: {c}"),
        }
    }
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.starts_with("<!-- ulpgate-report -->"));
    let ok = expected - skipped;
    assert!(md.contains(&format!("{expected} cells: **{ok} OK**, 0 FAIL, 0 ERROR, {skipped} SKIP")), "{md}");
}

#[test]
fn gpu_backends_absent_from_this_build_or_machine_are_skipped_not_ok() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = ulpgate().args(["run", "--json-out"]).arg(&json).output().unwrap();
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for c in report["cells"].as_array().unwrap() {
        let gpu = ["vulkan", "cuda", "opencl"].contains(&c["backend_b"].as_str().unwrap());
        if gpu && c["status"] != "OK" {
            assert_eq!(c["status"], "SKIP", "{c}");
            let note = c["note"].as_str().unwrap();
            // An absent backend, or an input libvmaf refuses (cambi below
            // 216x216) where the backend is there.
            let refused = refusal("gates/default.yaml", c["feature"].as_str().unwrap(), c["fixture"].as_str().unwrap());
            assert!(
                note.contains("unavailable")
                    || note.contains("no GPU")
                    || refused.is_some_and(|why| note.contains(&why)),
                "{c}"
            );
        }
        if gpu && c["status"] == "OK" {
            // Only a side proven to have run on a GPU device may be OK.
            assert_eq!(c["device_b"]["kind"], "gpu", "{c}");
        }
    }
    assert_eq!(out.status.code(), Some(report["exit_code"].as_i64().unwrap() as i32));
}

#[test]
fn the_report_validates_against_the_checked_in_schema() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    ulpgate().args(["run", "--json-out"]).arg(&json).output().unwrap();
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("schemas/report.schema.json")).unwrap()).unwrap();
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&report).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn two_runs_give_identical_reports_apart_from_timing() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    for p in [&a, &b] {
        ulpgate().args(["run", "--backends", "golden,fork,cpu", "--json-out"]).arg(p).output().unwrap();
    }
    let (a, b) = (std::fs::read_to_string(a).unwrap(), std::fs::read_to_string(b).unwrap());
    assert_eq!(without_timing(&a), without_timing(&b));
    // And textually: everything before the timing block is the same bytes.
    let cut = |s: &str| s[..s.find("\"timing\"").unwrap()].to_string();
    assert_eq!(cut(&a), cut(&b));
}

#[test]
fn render_reproduces_the_markdown_of_a_saved_report() {
    let dir = tempfile::tempdir().unwrap();
    let (json, md) = (dir.path().join("r.json"), dir.path().join("r.md"));
    ulpgate()
        .args(["run", "--backends", "golden,fork,cpu", "--json-out"])
        .arg(&json)
        .arg("--md-out")
        .arg(&md)
        .output()
        .unwrap();
    let out = ulpgate().arg("render").arg(&json).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), std::fs::read_to_string(&md).unwrap());
    let summary = ulpgate().arg("render").arg(&json).args(["--builtin", "step-summary"]).output().unwrap();
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let skipped = report["cells"].as_array().unwrap().iter().filter(|c| c["status"] == "SKIP").count();
    let n = recorded_cells("gates/default.yaml");
    let summary = String::from_utf8(summary.stdout).unwrap();
    assert!(
        summary.contains(&format!("ulpgate OK: {}/{n} OK, 0 FAIL, 0 ERROR, {skipped} SKIP", n - skipped)),
        "{summary}"
    );
}

#[test]
fn a_custom_template_renders_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    ulpgate()
        .args(["run", "--backends", "golden,cpu", "--features", "psnr", "--json-out"])
        .arg(&json)
        .output()
        .unwrap();
    let t = write(dir.path(), "t.j2", "{% for c in report.cells %}{{ c.feature }}={{ c.status }};{% endfor %}");
    let out = ulpgate().arg("render").arg(&json).arg("--template").arg(&t).output().unwrap();
    // One cell per recorded pair.
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "psnr=OK;".repeat(8));
}

#[test]
fn filters_narrow_the_cells_and_typos_get_suggestions() {
    let out = ulpgate().args(["run", "--quiet", "--features", "psnr", "--backends", "golden,cpu"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("OK: 8 cells, 8 OK"));
    let out = ulpgate().args(["run", "--features", "pnsr"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--features: no feature `pnsr`") && err.contains("did you mean `psnr`?"), "{err}");
    // Names that exist but select no cell together: a run that checks
    // nothing must not pass.
    let out = ulpgate().args(["run", "--quiet", "--backends", "cpu"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no cell of the gate matches --backends cpu") && err.contains("cpu vs vulkan"), "{err}");
}

#[test]
fn score_prints_libvmaf_json_at_full_precision() {
    let out = score_reference_clip("cpu", "psnr").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let frames = doc["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 12);
    assert_eq!(frames[0]["frameNum"], 0);
    // libvmaf printed 26.051694 for frame 0; we print every digit.
    let v = frames[0]["metrics"]["psnr_y"].as_f64().unwrap();
    assert!((v - 26.051694).abs() < 5e-7 && v.to_string().len() > 12, "{v}");
    let pooled = &doc["pooled_metrics"]["psnr_y"];
    assert!((pooled["mean"].as_f64().unwrap() - 24.975759).abs() < 1e-6);
    assert!(pooled["harmonic_mean"].is_number());
    assert_eq!(doc["device"]["kind"], "cpu");
}

/// `score` reads raw files frame by frame as it scores them (README): a
/// windowed feature (motion reads earlier frames again) on the CPU and on
/// lavapipe lands on libvmaf's recorded scores, frame by frame.
#[test]
fn score_of_raw_and_y4m_files_matches_libvmaf_for_a_windowed_feature() {
    let golden: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string("fixtures/reference/scores/testsrc2_200x184_8bit_420/dist_x264/motion.json").unwrap(),
    )
    .unwrap();
    for backend in ["cpu", "vulkan"] {
        let out = score_reference_clip(backend, "motion").args(["--vulkan-device", "llvmpipe"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{backend}: {}", String::from_utf8_lossy(&out.stderr));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let frames = doc["frames"].as_array().unwrap();
        assert_eq!(frames.len(), 12, "{backend}");
        let mut compared = 0;
        for metric in ["integer_motion2", "integer_motion3"] {
            let expected = golden["metrics"][metric].as_array().unwrap();
            for (i, frame) in frames.iter().enumerate() {
                let ours = frame["metrics"][metric].as_f64().unwrap();
                let theirs = expected[i].as_f64().unwrap();
                assert!((ours - theirs).abs() <= 1e-6, "{backend} {metric} frame {i}: {ours} vs {theirs}");
                compared += 1;
            }
        }
        assert_eq!(compared, 24);
        // The same clip as Y4M (every other frame header with parameters,
        // so its frames lie at no fixed stride) scores the same, read frame
        // by frame through an index of its frame headers.
        let dir = tempfile::tempdir().unwrap();
        let y4m = |name: &str| {
            let raw = std::fs::read(format!("fixtures/reference/testsrc2_200x184_8bit_420/{name}.yuv")).unwrap();
            let mut out = b"YUV4MPEG2 W200 H184 F24:1 Ip A1:1 C420jpeg\n".to_vec();
            for (i, frame) in raw.chunks(200 * 184 * 3 / 2).enumerate() {
                out.extend_from_slice(if i % 2 == 1 { b"FRAME Ip\n".as_slice() } else { b"FRAME\n" });
                out.extend_from_slice(frame);
            }
            let path = dir.path().join(format!("{name}.y4m"));
            std::fs::write(&path, out).unwrap();
            path
        };
        let (reference, distorted) = (y4m("ref"), y4m("dist_x264"));
        let score = |extra: &[&str]| {
            ulpgate()
                .args(["score", "--backend", backend, "--feature", "motion"])
                .args(extra)
                .arg("--reference")
                .arg(&reference)
                .arg("--distorted")
                .arg(&distorted)
                .output()
                .unwrap()
        };
        let out = score(&["--vulkan-device", "llvmpipe"]);
        assert_eq!(out.status.code(), Some(0), "{backend} y4m: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap(), doc, "{backend} y4m");
        // Geometry flags that contradict a Y4M header are refused, not ignored.
        let out = score(&["--width", "100", "--height", "92"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("its Y4M header says 200x184 8-bit 420, --width says 100")
        );
    }
}

#[test]
fn the_summary_lists_failures_one_by_one_and_folds_what_passed() {
    // psnr against libvmaf at 1e-7 fails (printed at %.6f); float_psnr at
    // the pair's default 1e-6 passes.
    let dir = tempfile::tempdir().unwrap();
    let fx = |name: &str, dist: &str| {
        format!(
            "  - name: {name}\n    reference: @ROOT@/fixtures/reference/testsrc2_200x184_8bit_420/ref.yuv\n    distorted: @ROOT@/fixtures/reference/testsrc2_200x184_8bit_420/{dist}.yuv\n    geometry: {{width: 200, height: 184, bit_depth: 8, chroma: \"420\"}}\n    golden: @ROOT@/fixtures/reference/scores/testsrc2_200x184_8bit_420/{dist}\n"
        )
    };
    let g = write(
        dir.path(),
        "g.yaml",
        &format!(
            "{HEADER}features:\n  - float_psnr\n  - {{name: psnr, tolerance: 1.0e-7, adr: a test}}\nbackends: {{cpu: {{}}, golden: {{}}}}\npairs: [[golden, cpu]]\nfixtures:\n{}{}",
            fx("x264", "dist_x264"),
            fx("blur", "dist_blur")
        ),
    );
    let out = ulpgate().arg("run").arg(&g).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("│ ")).collect();
    let fail: Vec<&&str> = rows.iter().filter(|l| l.contains("FAIL")).collect();
    assert_eq!(fail.len(), 2, "one row per failing cell:\n{text}");
    assert!(fail.iter().any(|l| l.contains("x264")) && fail.iter().any(|l| l.contains("blur")), "{text}");
    let ok: Vec<&&str> = rows.iter().filter(|l| l.contains(" OK ")).collect();
    assert_eq!(ok.len(), 1, "the passing cells folded into one row:\n{text}");
    assert!(ok[0].contains("float_psnr") && ok[0].contains("2 fixtures"), "{text}");
    assert!(text.contains("FAIL: 4 cells, 2 OK, 2 FAIL"), "{text}");
}

/// cpu against PoCL and lavapipe, both required: a cell is never a SKIP.
const ON_BOTH_DRIVERS: &str = "backends: {cpu: {}, opencl: {required: true}, vulkan: {required: true, device: llvmpipe}}\n\
                               pairs: [[cpu, opencl], [cpu, vulkan]]\n";

/// libvmaf's psnr emits only `psnr_y` on 4:0:0 input (integer_psnr.c turns
/// `enable_chroma` off for YUV400P): such a cell expects that metric alone,
/// where it used to ERROR with "produced no psnr_cb, psnr_cr".
#[test]
fn psnr_on_luma_only_input_expects_luma_only() {
    let dir = tempfile::tempdir().unwrap();
    let gate = write(
        dir.path(),
        "g.yaml",
        &format!(
            "{HEADER}features: [psnr]\n{ON_BOTH_DRIVERS}fixtures:\n  - name: mono\n    \
             synthetic: {{width: 64, height: 48, frames: 3, bit_depth: 10, chroma: \"400\", seed: 3}}\n"
        ),
    );
    let report = run_report(dir.path(), &gate, &[]);
    let cells = report["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    for cell in cells {
        // Compared on PoCL and lavapipe (required: never a SKIP), psnr_y
        // alone, bit for bit.
        assert_eq!(cell["status"], "OK", "{cell}");
        assert_eq!(cell["metrics"], serde_json::json!(["psnr_y"]), "{cell}");
        assert_eq!(cell["per_metric_max_abs_diff"], serde_json::json!({"psnr_y": 0.0}), "{cell}");
    }
}

/// float_psnr and float_moment square in float (psnr.c, moment.c): at 16
/// bits a square of 2^24 or more rounds to f32, and the kernels round it
/// the same way. A heavily distorted 16-bit pair (differences far past
/// 4096), with psnr's options besides, on lavapipe and PoCL (required):
/// every metric bit for bit, and the pair does round (the CPU's float_psnr
/// differs from the exact-square one).
#[test]
fn sixteen_bit_squares_round_as_libvmaf_rounds_them_on_both_drivers() {
    let dir = tempfile::tempdir().unwrap();
    let gate = write(
        dir.path(),
        "g.yaml",
        &format!(
            "{HEADER}features:\n  - float_psnr\n  - float_moment\n  - {{name: psnr, options: {{enable_mse: true, min_sse: 0.5, reduced_hbd_peak: true}}}}\n\
             {ON_BOTH_DRIVERS}fixtures:\n  - name: loud\n    \
             synthetic: {{width: 61, height: 37, frames: 2, bit_depth: 16, chroma: \"420\", seed: 5, \
             distortion: {{blur: 2, quantize: 64, noise: 100.0}}}}\n"
        ),
    );
    let report = run_report(dir.path(), &gate, &[]);
    let cells = report["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 6, "3 features x 2 pairs");
    for cell in cells {
        assert_eq!(cell["status"], "OK", "{cell}");
        assert_eq!(cell["device_b"]["kind"], "gpu", "{cell}");
        for (metric, diff) in cell["per_metric_max_abs_diff"].as_object().unwrap() {
            assert_eq!(diff.as_f64(), Some(0.0), "{}: {metric}", cell["id"]);
        }
    }
    // The content does round: the sum of exact squares scores otherwise.
    use ulpgate::features::{self, Options, run_extractor};
    let spec: ulpgate::fixture::SyntheticSpec = serde_yaml::from_str(
        "{width: 61, height: 37, frames: 2, bit_depth: 16, chroma: \"420\", seed: 5, \
         distortion: {blur: 2, quantize: 64, noise: 100.0}}",
    )
    .unwrap();
    let src = |distorted| ulpgate::fixture::FrameSource::Synthetic { spec: spec.clone(), distorted };
    let fx = ulpgate::fixture::LoadedFixture::load(&src(false), &src(true), None).unwrap();
    let imp = features::find("float_psnr").unwrap();
    let cpu = run_extractor(imp.cpu_extractor(&fx.geometry, &Options::new()).unwrap(), &fx, &|| {}).unwrap();
    let s = f64::from(ulpgate::features::picture::scaler(16));
    for (i, (r, d)) in fx.reference.iter().zip(&fx.distorted).enumerate() {
        let (r, d) = (r.plane_u16(0), d.plane_u16(0));
        // Exact in f64: under 2^53.
        let sse: u64 = r.iter().zip(&d).map(|(&a, &b)| u64::from(a.abs_diff(b)).pow(2)).sum();
        let exact = features::psnr::float_psnr_score(sse as f64 / (s * s), r.len(), 16);
        let rounded = cpu.get("float_psnr").unwrap()[i];
        assert!(rounded != exact && (rounded - exact).abs() < 1e-6, "frame {i}: {rounded} vs exact {exact}");
    }
}
