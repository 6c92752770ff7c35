//! The external backend: a command run per side whose libvmaf JSON goes
//! through the same diff. `ulpgate score` stands in for a real `vmaf`.

use crate::common::*;
use std::path::Path;

/// An external backend running `ulpgate score --backend cpu` the way a
/// gate would run `vmaf`.
fn score_backend(name: &str) -> String {
    format!(
        r#"  {name}:
    kind: external
    command:
      argv: ["{BIN}", score, --backend, cpu, --feature, "{{feature}}", --reference, "{{reference}}",
             --distorted, "{{distorted}}", --width, "{{width}}", --height, "{{height}}",
             --bit-depth, "{{bit_depth}}", --chroma, "{{chroma}}", --json-out, "{{output}}"]
      timeout_s: 60
      device: {{name: "ulpgate score (CPU)", arch_id: "cpu:external-test", driver_version: "1.0"}}
"#
    )
}

/// A Y4M file (C420jpeg, 8-bit) of a deterministic pattern.
fn write_y4m(path: &Path, w: usize, h: usize, frames: usize, shift: usize) {
    let mut out = format!("YUV4MPEG2 W{w} H{h} F25:1 Ip A1:1 C420jpeg\n").into_bytes();
    for f in 0..frames {
        out.extend_from_slice(b"FRAME\n");
        let plane = |pw: usize, ph: usize, k: usize| -> Vec<u8> {
            (0..pw * ph).map(|i| ((i % pw) * 3 + (i / pw) * 5 + f * 7 + k * 11 + shift * (i % 7)) as u8).collect()
        };
        out.extend(plane(w, h, 0));
        out.extend(plane(w.div_ceil(2), h.div_ceil(2), 1));
        out.extend(plane(w.div_ceil(2), h.div_ceil(2), 2));
    }
    std::fs::write(path, out).unwrap();
}

#[test]
fn an_external_ulpgate_matches_the_cpu_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    write_y4m(&dir.path().join("ref.y4m"), 40, 24, 3, 0);
    write_y4m(&dir.path().join("dis.y4m"), 40, 24, 3, 1);
    let clip = repo().join("fixtures/reference/testsrc2_192x180_10bit_420");
    let body = format!(
        r#"features: [psnr, float_psnr, float_moment, float_ansnr]
backends:
  cpu: {{}}
{}pairs:
  # Any difference at all is a FAIL.
  - a: cpu
    b: vmaf
    tolerance: {{abs: 1.0e-300, adr: "test: bit-exact"}}
fixtures:
  - name: synthetic_8bit_420
    synthetic: {{width: 48, height: 32, frames: 4, bit_depth: 8, chroma: "420", seed: 5}}
  - name: synthetic_10bit_444
    synthetic: {{width: 40, height: 24, frames: 3, bit_depth: 10, chroma: "444", seed: 6}}
  - name: raw_10bit_420
    reference: {}
    distorted: {}
    geometry: {{width: 192, height: 180, bit_depth: 10, chroma: "420"}}
  - name: y4m_8bit_420
    reference: ref.y4m
    distorted: dis.y4m
"#,
        score_backend("vmaf"),
        clip.join("ref.yuv").display(),
        clip.join("dist_x264.yuv").display(),
    );
    let gate = gate(dir.path(), "external.yaml", "external", &body);
    let json = dir.path().join("r.json");
    let o = run(ulpgate().arg("run").arg(&gate).arg("-q").arg("--json-out").arg(&json));
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let report = read_json(&json);
    assert_eq!(cells(&report).len(), 16);
    for c in cells(&report) {
        assert_eq!(c["status"], "OK", "{c:#}");
        for (metric, d) in c["per_metric_max_abs_diff"].as_object().unwrap() {
            assert_eq!(d.as_f64(), Some(0.0), "{metric} in {}", c["id"]);
        }
        // The device the gate declared, recorded as such.
        let dev = &c["device_b"];
        assert_eq!((dev["kind"].as_str(), dev["arch_id"].as_str()), (Some("external"), Some("cpu:external-test")));
        assert_eq!(dev["name"], "ulpgate score (CPU)");
        assert_eq!(dev["driver_version"], "1.0");
    }
    assert!(cells(&report).iter().any(|c| c["fixture"] == "y4m_8bit_420" && c["n_frames"] == 3));
}

#[test]
fn a_failing_command_is_an_error_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let ext = |name: &str, argv: &str, timeout: u64| {
        format!(
            "  {name}:\n    kind: external\n    command:\n      argv: {argv}\n      timeout_s: {timeout}\n      device: {{name: {name}, arch_id: \"cpu:x\"}}\n"
        )
    };
    // Three frames of psnr for a four-frame fixture.
    let frames = (0..3)
        .map(|i| format!(r#"{{"frameNum": {i}, "metrics": {{"psnr_y": 1, "psnr_cb": 1, "psnr_cr": 1}}}}"#))
        .collect::<Vec<_>>()
        .join(", ");
    let short = dir.path().join("short.sh");
    std::fs::write(&short, format!("cat > \"$1\" <<'JSON'\n{{\"frames\": [{frames}]}}\nJSON\n")).unwrap();
    let body = format!(
        "features: [psnr]\nbackends:\n  cpu: {{}}\n{}{}{}{}{}{}pairs:\n{}fixtures:\n  - name: s\n    synthetic: {{width: 32, height: 16, frames: 4, bit_depth: 8, chroma: \"420\"}}\n",
        ext(
            "exits",
            r#"[sh, -c, "echo 'loading model' >&2; echo 'error: no such feature: psnr' >&2; exit 1", "{output}"]"#,
            60
        ),
        ext("short", &format!(r#"[sh, "{}", "{{output}}"]"#, short.display()), 60),
        ext("slow", r#"[sh, -c, "echo started >&2; sleep 20", "{output}"]"#, 1),
        ext("crashes", r#"[sh, -c, "kill -SEGV $$", "{output}"]"#, 60),
        ext("missing", r#"[/nonexistent/vmaf, -o, "{output}"]"#, 60),
        ext("garbage", r#"[sh, -c, "echo 'not json' > \"$0\"", "{output}"]"#, 60),
        ["exits", "short", "slow", "crashes", "missing", "garbage"].map(|b| format!("  - [cpu, {b}]\n")).concat(),
    );
    let gate = gate(dir.path(), "failing.yaml", "failing", &body);
    let json = dir.path().join("r.json");
    let o = run(ulpgate().arg("run").arg(&gate).arg("-q").arg("--json-out").arg(&json));
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert!(json.exists(), "a report, not a configuration error: {}", stderr(&o));
    let report = read_json(&json);
    let expect = [
        ("exits", vec!["`sh` exited with status 1", "stderr: loading model ⏎ error: no such feature: psnr"]),
        ("short", vec!["frame-count mismatch", "reported 3 frames of psnr for fixture `s`, which has 4"]),
        ("slow", vec!["timed out after 1 s and was killed", "stderr: started"]),
        ("crashes", vec!["was killed by signal 11 (SIGSEGV)"]),
        ("missing", vec!["cannot run `/nonexistent/vmaf`"]),
        ("garbage", vec!["wrote output that is not libvmaf JSON"]),
    ];
    for (backend, needles) in expect {
        let c = cell(&report, &format!("cpu-vs-{backend}/"));
        assert_eq!(c["status"], "ERROR", "{c:#}");
        let note = c["note"].as_str().unwrap();
        for n in needles {
            assert!(note.contains(n), "{backend}: `{n}` not in `{note}`");
        }
    }
}

#[test]
fn external_commands_are_checked_with_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let body = "features: [psnr, float_psnr]\nbackends:\n  cpu: {}\n  vmaf:\n    kind: external\n    command:\n      argv: [vmaf, -w, \"{widht}\", --feature, \"{feature}\"]\n      feature_args: {psnr: psnr, float_pnsr: float_psnr}\n      device: {name: vmaf, arch_id: \"cpu:x\", kind: gpuu}\npairs:\n  - [cpu, vmaf]\nfixtures:\n  - name: s\n    synthetic: {width: 32, height: 16, frames: 1, bit_depth: 8, chroma: \"420\"}\n";
    let gate = gate(dir.path(), "bad.yaml", "bad", body);
    let o = run(ulpgate().arg("validate").arg(&gate));
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("`gpuu` is not allowed here") && err.contains("one of: cpu, gpu"), "{err}");

    let fixed = body.replace("gpuu", "gpu");
    let gate = crate::common::gate(dir.path(), "bad.yaml", "bad", &fixed);
    let o = run(ulpgate().arg("validate").arg(&gate));
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    let at = format!("bad.yaml:{}:24: backends.vmaf.command.argv[2]", line_of(&gate, "{widht}"));
    for needle in [
        at.as_str(),
        "unknown placeholder `{widht}`",
        "did you mean `{width}`?",
        "feature `float_pnsr` is not selected by this gate",
        "did you mean `float_psnr`?",
    ] {
        assert!(err.contains(needle), "`{needle}` in {err}");
    }
    let no_output = fixed.replace("{widht}", "{width}");
    let gate = crate::common::gate(dir.path(), "bad.yaml", "bad", &no_output);
    let o = run(ulpgate().arg("validate").arg(&gate));
    assert!(stderr(&o).contains("never told where to write its scores"), "{}", stderr(&o));
}
