//! The calibration workflow through the binary, on OpenCL for real (PoCL in
//! CI): collect → fit → --write-table → run (the new row decides) → run
//! --gpu-calibrated; --arch-id; --smoke; and every kind of bad corpus.

use crate::common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A gate pairing the CPU with OpenCL (required) on two small synthetic
/// fixtures (12 + 8 frames: 20 per cell, enough for 5 held-out folds),
/// looking tolerances up in `table`.
fn opencl_gate(dir: &Path, table: &Path) -> PathBuf {
    let body = format!(
        r#"calibration: {}
features: [psnr, float_psnr, float_moment, float_ansnr]
backends:
  cpu: {{}}
  opencl: {{required: true}}
pairs:
  - [cpu, opencl]
fixtures:
  - name: s8
    synthetic: {{width: 64, height: 48, frames: 12, bit_depth: 8, chroma: "420", seed: 11}}
  - name: s16
    synthetic:
      width: 64
      height: 48
      frames: 8
      bit_depth: 16
      chroma: "420"
      seed: 12
      content: {{texture: 0.9, squares: 5, motion: [-2, 3], grain: 6.0}}
      distortion: {{blur: 0, quantize: 1, noise: 12.0}}
"#,
        table.display()
    );
    gate(dir, "cal.yaml", "cal", &body)
}

/// A copy of the repository's calibration table in `dir`.
fn table_copy(dir: &Path) -> PathBuf {
    let path = dir.join("table.yaml");
    std::fs::copy(repo().join("calibration/gpu_ulp_calibration.yaml"), &path).unwrap();
    path
}

fn ok(cmd: &mut std::process::Command) -> std::process::Output {
    let out = run(cmd);
    assert!(out.status.success(), "exit {:?}\nstdout: {}\nstderr: {}", out.status.code(), stdout(&out), stderr(&out));
    out
}

struct CsvRow {
    arch_id: String,
    backend: String,
    feature: String,
    metric: String,
    fixture: String,
    frame: usize,
    gpu: f64,
    cpu: f64,
}

/// Reads a corpus CSV independently of ulpgate (no quoted fields here).
fn read_csv(path: &Path) -> (Vec<String>, Vec<CsvRow>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            CsvRow {
                arch_id: f[0].into(),
                backend: f[1].into(),
                feature: f[2].into(),
                metric: f[3].into(),
                fixture: f[4].into(),
                frame: f[5].parse().unwrap(),
                gpu: f[6].parse().unwrap(),
                cpu: f[7].parse().unwrap(),
            }
        })
        .collect();
    (header, rows)
}

#[test]
fn collect_fit_write_table_then_run_on_opencl() {
    let dir = tempfile::tempdir().unwrap();
    let table = table_copy(dir.path());
    let gate = opencl_gate(dir.path(), &table);
    let corpus = dir.path().join("corpus.csv");

    // Collect: one row per (arch_id, backend, feature, metric, fixture, frame).
    ok(ulpgate().args(["calibrate", "collect", "--gate"]).arg(&gate).arg("--out").arg(&corpus));
    let (header, rows) = read_csv(&corpus);
    assert_eq!(header, ["arch_id", "backend", "feature", "metric", "fixture", "frame", "gpu_score", "cpu_score"]);
    let metrics = 3 + 1 + 4 + 2;
    assert_eq!(rows.len(), metrics * 20);
    let arch = rows[0].arch_id.clone();
    assert!(arch.starts_with("opencl:0x"), "{arch}");
    assert!(rows.iter().all(|r| r.arch_id == arch && r.backend == "opencl"));
    let keys: std::collections::BTreeSet<(&str, &str, &str, usize)> =
        rows.iter().map(|r| (r.feature.as_str(), r.metric.as_str(), r.fixture.as_str(), r.frame)).collect();
    assert_eq!(keys.len(), rows.len(), "one row per feature, metric, fixture and frame");
    assert!(rows.iter().all(|r| r.frame < if r.fixture == "s8" { 12 } else { 8 }));
    assert_eq!(rows.iter().filter(|r| r.feature == "float_moment").count(), 4 * 20);

    let manifest = read_json(&dir.path().join("corpus.csv.manifest.json"));
    assert_eq!(manifest["kind"], "ulpgate-calibration-corpus");
    assert_eq!(manifest["rows"], rows.len());
    assert_eq!(manifest["tool"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(manifest["command_line"].as_array().unwrap().iter().any(|a| a == "collect"));
    let sha = manifest["corpus"]["sha256"].as_str().unwrap();
    assert_eq!(sha.len(), 64);
    let opencl = manifest["backends"].as_array().unwrap().iter().find(|b| b["name"] == "opencl").unwrap();
    assert_eq!(opencl["device"]["arch_id"], arch.as_str());
    assert_eq!(opencl["device"]["kind"], "gpu");
    let fixtures = manifest["fixtures"].as_array().unwrap();
    assert_eq!(fixtures.len(), 2);
    assert_eq!(fixtures[1]["geometry"]["bit_depth"], 16);
    assert_eq!(fixtures[1]["frames"], 8);
    assert_ne!(fixtures[0]["reference_sha256"], fixtures[0]["distorted_sha256"]);
    assert!(manifest["features"].as_array().unwrap().iter().all(|f| f["status"] == "collected"));

    // Fit, and check its numbers against the CSV, recomputed here.
    let fit_json = dir.path().join("fit.json");
    let md = dir.path().join("fit.md");
    ok(ulpgate().args(["calibrate", "fit"]).arg(&corpus).arg("--json-out").arg(&fit_json).arg("--md-out").arg(&md));
    let fit = read_json(&fit_json);
    assert_eq!(fit["kind"], "ulpgate-calibration-fit");
    assert_eq!(fit["manifest"]["path"], dir.path().join("corpus.csv.manifest.json").display().to_string());
    let fitted = fit["cells"].as_array().unwrap();
    assert_eq!(fitted.len(), metrics);
    for c in fitted {
        let mine: Vec<&CsvRow> = rows.iter().filter(|r| r.metric == c["metric"]).collect();
        assert_eq!(c["n"], 20);
        let worst = mine.iter().map(|r| (r.cpu - r.gpu).abs()).fold(0.0, f64::max);
        assert_eq!(c["worst_abs_diff"].as_f64(), Some(worst), "{c:#}");
        let exact = mine.iter().all(|r| r.cpu == r.gpu);
        assert_eq!(c["decision"] == "bit-exact", exact, "{c:#}");
        if exact {
            assert_eq!(c["offset"], 0.0);
        } else {
            assert!(["offset", "model", "undetermined"].contains(&c["decision"].as_str().unwrap()), "{c:#}");
        }
        assert!(c["holdout"]["worst_abs_residual"].is_number(), "{c:#}");
    }
    let md_text = std::fs::read_to_string(&md).unwrap();
    assert!(md_text.contains("**Decision rule.**") && md_text.contains(&arch), "{md_text}");

    // Before the write-back the arch's cells fall to some other rule.
    let report = dir.path().join("before.json");
    let out = run(ulpgate().arg("run").arg(&gate).arg("--json-out").arg(&report).arg("-q"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let before = read_json(&report);
    for c in cells(&before) {
        assert_ne!(c["tolerance_source"], format!("calibrated:{arch}"));
        assert_eq!(c["device_b"]["arch_id"], arch.as_str(), "the detected id is looked up");
    }

    // Write the table: only a new exact-id row appears, every other byte stays.
    let original = std::fs::read_to_string(&table).unwrap();
    let out = ok(ulpgate().args(["calibrate", "fit", "-q"]).arg(&corpus).arg("--write-table").arg(&table));
    let written = std::fs::read_to_string(&table).unwrap();
    assert!(stdout(&out).contains(&format!("{}: {arch}: ", table.display())), "{}", stdout(&out));
    let (a, b): (Vec<&str>, Vec<&str>) =
        (original.split_inclusive('\n').collect(), written.split_inclusive('\n').collect());
    let first = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len());
    let added = b.len() - a.len();
    assert_eq!(a[..first], b[..first]);
    assert_eq!(a[first..], b[first + added..], "every line after the new row is kept byte for byte");
    let block = b[first..first + added].concat();
    assert!(block.contains(&format!("  - arch_id: \"{arch}\"\n    label: ")), "{block}");
    assert!(block.contains("    status: calibrated\n") && block.contains("corpus_manifest_sha256: "));
    assert!(block.contains("      frames: 20\n"), "{block}");
    let validate = ok(ulpgate().arg("validate").arg(&table));
    assert!(stdout(&validate).contains("ok: "), "{}", stdout(&validate));

    // Now the detected arch finds its own row, automatically.
    let out = run(ulpgate().arg("run").arg(&gate).arg("--json-out").arg(&report).arg("-q"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let after = read_json(&report);
    for c in cells(&after) {
        assert_eq!(c["tolerance_source"], format!("calibrated:{arch}"), "{c:#}");
    }

    // The offset tier: GPU side only; raw and calibrated side by side.
    let out = run(ulpgate()
        .arg("run")
        .arg(&gate)
        .arg("--gpu-calibrated")
        .arg(&fit_json)
        .arg("--json-out")
        .arg(&report)
        .arg("--md-out")
        .arg(dir.path().join("run.md"))
        .arg("-q"));
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    let calibrated = read_json(&report);
    let offsets: BTreeMap<String, f64> =
        fitted.iter().map(|c| (c["metric"].as_str().unwrap().to_string(), c["offset"].as_f64().unwrap())).collect();
    for (c, raw) in cells(&calibrated).iter().zip(cells(&before)) {
        let block = &c["calibrated"];
        assert_eq!(block["offsets_file"], fit_json.display().to_string());
        assert_eq!(block["per_metric_max_abs_diff_raw"], raw["per_metric_max_abs_diff"], "raw diffs kept");
        assert_eq!(block["status_raw"], raw["status"]);
        for (metric, max) in c["per_metric_max_abs_diff"].as_object().unwrap() {
            let off = offsets[metric];
            assert_eq!(block["offsets"]["opencl"][metric]["offset"].as_f64(), Some(off));
            assert!(block["offsets"].get("cpu").is_none(), "never the CPU reference");
            let expect = rows
                .iter()
                .filter(|r| r.metric == *metric && r.fixture == c["fixture"])
                .map(|r| (r.cpu - (r.gpu + off)).abs())
                .fold(0.0, f64::max);
            assert_eq!(max.as_f64(), Some(expect), "{metric} on {}", c["fixture"]);
        }
    }
    let md = std::fs::read_to_string(dir.path().join("run.md")).unwrap();
    assert!(md.contains("| Max \\|Δ\\| | Raw |"), "{md}");
}

#[test]
fn jsonl_corpora_and_too_few_frames_to_fit() {
    let dir = tempfile::tempdir().unwrap();
    let gate = opencl_gate(dir.path(), &repo().join("calibration/gpu_ulp_calibration.yaml"));
    let corpus = dir.path().join("c.jsonl");
    let manifest = dir.path().join("m.json");
    ok(ulpgate()
        .args(["calibrate", "collect", "-q", "--features", "psnr", "--frames", "2", "--gate"])
        .arg(&gate)
        .arg("--out")
        .arg(&corpus)
        .arg("--manifest-out")
        .arg(&manifest));
    let text = std::fs::read_to_string(&corpus).unwrap();
    assert_eq!(text.lines().count(), 3 * 2 * 2, "3 metrics, 2 fixtures, --frames 2");
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert!(first["gpu_score"].is_number() && first["frame"] == 0);
    let m = read_json(&manifest);
    assert_eq!(m["frames_limit"], 2);
    assert_eq!(m["corpus"]["format"], "jsonl");
    assert!(m["fixtures"].as_array().unwrap().iter().all(|f| f["frames"] == 2));

    let fit = dir.path().join("fit.json");
    let out = ok(ulpgate()
        .args(["calibrate", "fit"])
        .arg(&corpus)
        .arg("--manifest")
        .arg(&manifest)
        .arg("--json-out")
        .arg(&fit));
    assert!(stdout(&out).contains("unfit opencl/psnr/psnr_y on"), "{}", stdout(&out));
    for c in read_json(&fit)["cells"].as_array().unwrap() {
        assert_eq!(c["decision"], "unfit");
        assert_eq!(c["reason"], "4 frames; a fit needs at least 15 (each of the 5 held-out folds needs 3 frames)");
        assert!(c.get("offset").is_none() && c.get("linear").is_none(), "nothing fabricated: {c:#}");
    }
    // A smaller K lowers the bar: 4 frames still fall short of 3 × 2.
    let out =
        ok(ulpgate().args(["calibrate", "fit", "--holdout-every", "2"]).arg(&corpus).arg("--manifest").arg(&manifest));
    assert!(stdout(&out).contains("a fit needs at least 6"), "{}", stdout(&out));
}

/// `collect --smoke` on Mesa lavapipe (which `.ci/run` installs): the five
/// features of Research-0041's smoke set collected; then fit, the table
/// written after the lavapipe glob, and a run
/// that looks lavapipe's detected id up in the new row.
/// The manifest's hashes are of the frames scored: for a raw clip and
/// `--frames 3`, the SHA-256 of the file's first three frames' bytes.
#[test]
fn the_manifest_hashes_the_frames_that_were_scored() {
    use sha2::{Digest, Sha256};
    let dir = tempfile::tempdir().unwrap();
    let body = format!(
        "features: [psnr]\nbackends:\n  cpu: {{}}\n  opencl: {{required: true}}\npairs:\n  - [cpu, opencl]\nfixtures:\n{}",
        reference_fixture("clip", "dist_blur")
    );
    let gate = gate(dir.path(), "clip.yaml", "clip", &body);
    let frame_bytes = 200 * 184 * 3 / 2;
    let hash = |file: &str| {
        let bytes = std::fs::read(repo().join("fixtures/reference/testsrc2_200x184_8bit_420").join(file)).unwrap();
        Sha256::digest(&bytes[..3 * frame_bytes]).iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    // Held in memory (the default), and read from the files frame by frame.
    for memory in [None, Some("0")] {
        let corpus = dir.path().join("c.csv");
        let mut collect = ulpgate();
        collect.args(["calibrate", "collect", "-q", "--frames", "3", "--gate"]).arg(&gate).arg("--out").arg(&corpus);
        if let Some(mib) = memory {
            collect.args(["--fixture-memory", mib]);
        }
        ok(&mut collect);
        let m = read_json(&dir.path().join("c.csv.manifest.json"));
        let fixture = &m["fixtures"][0];
        assert_eq!(fixture["frames"], 3, "{memory:?}");
        assert_eq!(fixture["reference_sha256"], hash("ref.yuv").as_str(), "{memory:?}");
        assert_eq!(fixture["distorted_sha256"], hash("dist_blur.yuv").as_str(), "{memory:?}");
    }
}

#[test]
fn smoke_on_lavapipe_fit_write_table_and_run() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("smoke.csv");
    let out = ok(ulpgate().current_dir(repo()).args(["calibrate", "collect", "--smoke", "--out"]).arg(&corpus));
    // The smoke set's features with their rows (metrics x 100 frames).
    const COLLECTED: [(&str, u64); 5] =
        [("float_ssim", 100), ("motion", 300), ("psnr", 300), ("psnr_hvs", 400), ("vif", 400)];
    let rows: u64 = COLLECTED.iter().map(|c| c.1).sum();
    assert!(stdout(&out).contains(&format!("wrote {rows} rows")), "{}", stdout(&out));
    let m = read_json(&dir.path().join("smoke.csv.manifest.json"));
    assert_eq!(m["smoke"], true);
    assert_eq!(m["frames_limit"], 100);
    let features: BTreeMap<&str, &Value> =
        m["features"].as_array().unwrap().iter().map(|f| (f["name"].as_str().unwrap(), f)).collect();
    assert_eq!(features.keys().copied().collect::<Vec<_>>(), ["float_ssim", "motion", "psnr", "psnr_hvs", "vif"]);
    for (name, n) in COLLECTED {
        let f = features[name];
        assert_eq!((f["status"].as_str(), f["rows"].as_u64()), (Some("collected"), Some(n)), "{name}");
    }
    let vulkan = m["backends"].as_array().unwrap().iter().find(|b| b["name"] == "vulkan").unwrap();
    let arch = vulkan["device"]["arch_id"].as_str().unwrap().to_string();
    assert!(arch.starts_with("vulkan:0x10005:"), "{arch}");
    assert_eq!(m["fixtures"][0]["frames"], 100);

    let table = table_copy(dir.path());
    let out = ok(ulpgate().args(["calibrate", "fit"]).arg(&corpus).arg("--write-table").arg(&table));
    // One cell a metric, every one bit-exact on lavapipe (the float
    // features too: their kernels keep libvmaf's order).
    let n = rows / 100;
    assert!(stdout(&out).contains(&format!("{n} cells: {n} bit-exact")), "integer features: {}", stdout(&out));
    // The checked-in table has lavapipe's row (every feature of the default
    // gate): the smoke corpus rewrites it in place, and the features it did
    // not measure fall back to their defaults, saying so.
    assert!(stdout(&out).contains(&format!("{arch}: rewrote row `{arch}` (lines 38-")), "{}", stdout(&out));
    assert!(stdout(&out).contains("; dropped adm, cambi, ciede, "), "{}", stdout(&out));
    let body = format!(
        "calibration: {}\nfeatures: [psnr]\nbackends:\n  cpu: {{}}\n  vulkan: {{required: true}}\npairs:\n  - [cpu, vulkan]\n\
         fixtures:\n  - name: s\n    synthetic: {{width: 48, height: 32, frames: 2, bit_depth: 8, chroma: \"420\"}}\n",
        table.display()
    );
    let gate = gate(dir.path(), "g.yaml", "g", &body);
    let report = dir.path().join("r.json");
    let out =
        run(ulpgate().arg("run").arg(&gate).args(["-q", "--vulkan-device", "llvmpipe", "--json-out"]).arg(&report));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(cells(&read_json(&report))[0]["tolerance_source"], format!("calibrated:{arch}"));
}

#[test]
fn smoke_without_lavapipe_fails_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(ulpgate()
        .current_dir(repo())
        .env("VK_ICD_FILENAMES", "/nonexistent/icd.json")
        .env("VK_DRIVER_FILES", "/nonexistent/icd.json")
        .args(["calibrate", "collect", "--smoke", "--out"])
        .arg(dir.path().join("smoke.csv")));
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("--smoke collects on Mesa lavapipe (vulkan), and vulkan is unavailable"), "{err}");
    assert!(err.contains("install lavapipe (Debian: mesa-vulkan-drivers)"), "{err}");
    assert_eq!(extra_files(dir.path(), &[]), Vec::<PathBuf>::new(), "nothing written");
    // --smoke is the fixed set: it takes no selection.
    let out = run(ulpgate().args(["calibrate", "collect", "--smoke", "--features", "psnr", "--out", "x.csv"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot be used with"), "{}", stderr(&out));
}

#[test]
fn the_smoke_gate_is_research_0041s_set() {
    let text = std::fs::read_to_string(repo().join("gates/calibration-smoke.yaml")).unwrap();
    let gate: Value = serde_yaml::from_str(&text).unwrap();
    assert_eq!(gate["features"], serde_json::json!(["vif", "motion", "psnr", "float_ssim", "psnr_hvs"]));
    assert_eq!(gate["pairs"], serde_json::json!([["cpu", "vulkan"]]));
    let fixtures = gate["fixtures"].as_array().unwrap();
    assert_eq!(fixtures.len(), 1);
    assert_eq!(fixtures[0]["synthetic"]["frames"], 100);
}

const HEADER: &str = "arch_id,backend,feature,metric,fixture,frame,gpu_score,cpu_score\n";

/// Runs `calibrate fit` on `text` with --json-out, expecting exit 2 and no
/// output file; returns stderr.
fn bad_corpus(name: &str, text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join(name);
    std::fs::write(&corpus, text).unwrap();
    let json = dir.path().join("fit.json");
    let out = run(ulpgate().args(["calibrate", "fit"]).arg(&corpus).arg("--json-out").arg(&json));
    assert_eq!(out.status.code(), Some(2), "stdout: {}\nstderr: {}", stdout(&out), stderr(&out));
    assert!(!json.exists(), "no half-written output");
    assert_eq!(extra_files(dir.path(), &[&corpus]), Vec::<PathBuf>::new());
    stderr(&out).replace(&format!("{}/", dir.path().display()), "")
}

#[test]
fn bad_corpora_are_exit_2_with_file_and_line() {
    let err = bad_corpus("c.csv", "arch_id,backend,feature,fixture,frame,gpu_score\n");
    assert!(err.contains("c.csv:1: the corpus has no column metric, cpu_score"), "{err}");

    let err = bad_corpus("c.csv", &format!("{HEADER}a,vk,f,m,x,0,1.0,1.0\na,vk,f,m,x,1,1.0.0,1.0\n"));
    assert!(err.contains("c.csv:3: gpu_score `1.0.0` is not a number"), "{err}");

    let err = bad_corpus("c.csv", &format!("{HEADER}a1,vk,psnr,psnr_y,x,0,1,1\na2,vk,psnr,psnr_y,x,0,1,1\n"));
    assert!(
        err.contains("c.csv:3: line 2 already claims vk/psnr/psnr_y on x frame 0 with a different arch_id a1 vs a2"),
        "{err}"
    );

    let err = bad_corpus("c.jsonl", "{\"arch_id\": \"a\"}\nnot json\n");
    assert!(err.contains("c.jsonl:1: no backend, feature, metric, fixture, frame, gpu_score, cpu_score"), "{err}");
    assert!(err.contains("c.jsonl:2: not JSON"), "{err}");

    let err = bad_corpus("c.csv", HEADER);
    assert!(err.contains("c.csv: the corpus has no rows"), "{err}");
    let err = bad_corpus("c.data", HEADER);
    assert!(err.contains("give --format csv|jsonl"), "{err}");
}

#[test]
fn non_finite_scores_make_a_cell_unfit_not_a_fit() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = HEADER.to_string();
    for i in 0..20 {
        let gpu = if i == 4 { "NaN".to_string() } else { format!("{}", 30.0 + i as f64) };
        text.push_str(&format!("a,vk,psnr,psnr_y,x,{i},{gpu},{}\n", 30.0 + i as f64));
        text.push_str(&format!("a,vk,psnr,psnr_cb,x,{i},{},{}\n", 40.0 + i as f64, 40.0 + i as f64 + 2e-7));
    }
    let corpus = dir.path().join("c.csv");
    std::fs::write(&corpus, text).unwrap();
    let json = dir.path().join("fit.json");
    ok(ulpgate().args(["calibrate", "fit"]).arg(&corpus).arg("--json-out").arg(&json));
    let fit = read_json(&json);
    let cells = fit["cells"].as_array().unwrap();
    let y = cells.iter().find(|c| c["metric"] == "psnr_y").unwrap();
    assert_eq!(y["decision"], "unfit");
    assert!(
        y["reason"].as_str().unwrap().starts_with("1 of 20 frames have a non-finite score (first: x frame 4, line 10"),
        "{y:#}"
    );
    assert!(y.get("offset").is_none());
    let cb = cells.iter().find(|c| c["metric"] == "psnr_cb").unwrap();
    assert_eq!(cb["decision"], "offset", "{cb:#}");
    assert!((cb["offset"].as_f64().unwrap() - 2e-7).abs() < 1e-12);
    assert_eq!(cb["holdout"]["pass"], true);

    // --write-table refuses a corpus with no manifest, and the table stays.
    let table = table_copy(dir.path());
    let before = std::fs::read(&table).unwrap();
    let out = run(ulpgate().args(["calibrate", "fit"]).arg(&corpus).arg("--write-table").arg(&table));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--write-table records the corpus manifest's sha256"), "{}", stderr(&out));
    assert_eq!(std::fs::read(&table).unwrap(), before);
}

#[test]
fn a_manifest_of_another_corpus_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let gate = opencl_gate(dir.path(), &repo().join("calibration/gpu_ulp_calibration.yaml"));
    let corpus = dir.path().join("c.csv");
    ok(ulpgate()
        .args(["calibrate", "collect", "-q", "--features", "float_psnr", "--gate"])
        .arg(&gate)
        .arg("--out")
        .arg(&corpus));
    let mut text = std::fs::read_to_string(&corpus).unwrap();
    text.push('\n');
    std::fs::write(&corpus, text).unwrap();
    let out = run(ulpgate().args(["calibrate", "fit"]).arg(&corpus));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not its manifest (or the corpus changed since)"), "{}", stderr(&out));
}

#[test]
fn arch_id_overrides_are_used_and_never_silent() {
    let dir = tempfile::tempdir().unwrap();
    let gate = opencl_gate(dir.path(), &repo().join("calibration/gpu_ulp_calibration.yaml"));
    let report = dir.path().join("r.json");
    let md = dir.path().join("r.md");
    let out = run(ulpgate()
        .arg("run")
        .arg(&gate)
        .args(["--features", "psnr", "--fixtures", "s8", "--arch-id", "opencl=cuda:8.9", "-q", "--json-out"])
        .arg(&report)
        .arg("--md-out")
        .arg(&md));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = read_json(&report);
    let c = &cells(&r)[0];
    let detected = c["device_b"]["arch_id"].as_str().unwrap().to_string();
    assert_ne!(detected, "cuda:8.9");
    assert_eq!(c["tolerance_source"], "placeholder-default:cuda:8.9", "the override's row decides");
    assert_eq!(
        c["arch_overrides"],
        serde_json::json!([{"backend": "opencl", "detected": detected, "used": "cuda:8.9"}])
    );
    let warning = "--arch-id opencl=cuda:8.9 contradicts the detected device";
    assert!(r["warnings"][0].as_str().unwrap().starts_with(warning), "{r:#}");
    assert!(stderr(&out).contains(&format!("warning: {warning}")), "{}", stderr(&out));
    assert!(std::fs::read_to_string(&md).unwrap().contains("> [!WARNING]"));

    // The detected id itself: used, recorded, no warning.
    let out = run(ulpgate()
        .arg("run")
        .arg(&gate)
        .args(["--features", "psnr", "--fixtures", "s8", "-q", "--arch-id"])
        .arg(format!("opencl={detected}"))
        .arg("--json-out")
        .arg(&report));
    assert_eq!(out.status.code(), Some(0));
    let r = read_json(&report);
    assert!(r.get("warnings").is_none(), "{r:#}");
    assert_eq!(cells(&r)[0]["arch_overrides"][0]["used"], detected.as_str());

    for (arg, msg) in [
        ("opencll=x", "`opencll` is not a GPU backend of the gate (did you mean `opencl`?)"),
        ("cpu=x", "`cpu` is not a GPU backend"),
        ("opencl", "expected BACKEND=ID"),
        ("opencl=vulkan:*", "not a pattern"),
    ] {
        let out = run(ulpgate().arg("run").arg(&gate).args(["-q", "--arch-id", arg]));
        assert_eq!(out.status.code(), Some(2), "{arg}");
        assert!(stderr(&out).contains(msg), "{arg}: {}", stderr(&out));
    }
}

#[test]
fn cells_without_a_fitted_offset_say_so_and_bad_offset_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let gate = opencl_gate(dir.path(), &repo().join("calibration/gpu_ulp_calibration.yaml"));
    // A fit with offsets for psnr_y only, written by hand as fit would.
    let mut text = HEADER.to_string();
    let arch = {
        let devices: Value = serde_json::from_str(&stdout(&ok(ulpgate().args(["devices", "--json"])))).unwrap();
        let cl = devices.as_array().unwrap().iter().find(|b| b["backend"] == "opencl").unwrap().clone();
        cl["devices"][0]["arch_id"].as_str().unwrap().to_string()
    };
    for i in 0..20 {
        text.push_str(&format!("{arch},opencl,psnr,psnr_y,x,{i},{},{}\n", 20.0 + i as f64, 20.0 + i as f64));
    }
    let corpus = dir.path().join("c.csv");
    std::fs::write(&corpus, text).unwrap();
    let fit = dir.path().join("fit.json");
    ok(ulpgate().args(["calibrate", "fit", "-q"]).arg(&corpus).arg("--json-out").arg(&fit));
    let report = dir.path().join("r.json");
    let out = run(ulpgate()
        .arg("run")
        .arg(&gate)
        .args(["--features", "psnr", "--fixtures", "s8", "-q", "--gpu-calibrated"])
        .arg(&fit)
        .arg("--json-out")
        .arg(&report));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let c = cells(&read_json(&report))[0].clone();
    assert_eq!(c["calibrated"]["offsets"]["opencl"]["psnr_y"]["decision"], "bit-exact");
    assert_eq!(c["calibrated"]["missing"], serde_json::json!([format!("opencl on {arch} (psnr_cb, psnr_cr)")]));
    assert!(c["note"].as_str().unwrap().contains("no fitted offset in"), "{c:#}");

    // Not a fit: a report.
    let out = run(ulpgate().arg("run").arg(&gate).args(["-q", "--gpu-calibrated"]).arg(&report));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is not a calibration fit"), "{}", stderr(&out));
}

#[test]
fn an_offset_moves_the_gpu_side_only_and_both_statuses_show() {
    let dir = tempfile::tempdir().unwrap();
    let gate = opencl_gate(dir.path(), &repo().join("calibration/gpu_ulp_calibration.yaml"));
    let arch = {
        let devices: Value = serde_json::from_str(&stdout(&ok(ulpgate().args(["devices", "--json"])))).unwrap();
        let cl = devices.as_array().unwrap().iter().find(|b| b["backend"] == "opencl").unwrap().clone();
        cl["devices"][0]["arch_id"].as_str().unwrap().to_string()
    };
    // A fit that says cpu = gpu + 0.5 for psnr_y: an exact offset.
    let mut text = HEADER.to_string();
    for i in 0..20 {
        text.push_str(&format!("{arch},opencl,psnr,psnr_y,x,{i},{},{}\n", 20.0 + i as f64, 20.5 + i as f64));
    }
    let corpus = dir.path().join("c.csv");
    std::fs::write(&corpus, text).unwrap();
    let fit = dir.path().join("fit.json");
    ok(ulpgate().args(["calibrate", "fit", "-q"]).arg(&corpus).arg("--json-out").arg(&fit));
    assert_eq!(read_json(&fit)["cells"][0]["offset"], 0.5);
    // PoCL's psnr is bit-exact, so the calibrated GPU is 0.5 above the CPU
    // on every frame: FAIL after the offset, OK before it.
    let report = dir.path().join("r.json");
    let md = dir.path().join("r.md");
    let out = run(ulpgate()
        .arg("run")
        .arg(&gate)
        .args(["--features", "psnr", "--fixtures", "s8", "-q", "--gpu-calibrated"])
        .arg(&fit)
        .arg("--json-out")
        .arg(&report)
        .arg("--md-out")
        .arg(&md));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let r = read_json(&report);
    let c = &cells(&r)[0];
    assert_eq!(c["status"], "FAIL");
    assert_eq!(c["per_metric_max_abs_diff"]["psnr_y"], 0.5);
    assert_eq!(
        c["per_metric"]["psnr_y"]["worst_b"].as_f64().unwrap() - c["per_metric"]["psnr_y"]["worst_a"].as_f64().unwrap(),
        0.5
    );
    assert_eq!(c["calibrated"]["status_raw"], "OK");
    assert_eq!(c["calibrated"]["per_metric_max_abs_diff_raw"]["psnr_y"], 0.0);
    assert_eq!(c["per_metric_max_abs_diff"]["psnr_cb"], 0.0, "no offset for psnr_cb: compared raw");
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("| `psnr_y` | 0.5 | 12 | 0 | 0 | opencl +5.00e-1 (offset) |"), "{md}");
    assert!(md.contains("Raw status: OK; the values shown are after the offsets."), "{md}");
}
