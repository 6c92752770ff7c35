//! Bad input of every kind gets a clear message, the documented exit code
//! (2), and never a half-written report.

mod common;
use common::*;
use std::path::Path;

fn run_gate(dir: &Path, gate: &Path) -> (i32, String, String, std::path::PathBuf) {
    let json = dir.join("report.json");
    let out = ulpgate().arg("run").arg(gate).arg("--json-out").arg(&json).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
        json,
    )
}

/// A gate that runs anywhere in a blink: psnr, cpu vs an optional opencl,
/// one synthetic 32x32 pair of two frames.
fn small_gate() -> String {
    format!(
        "{HEADER}features: [psnr]\nbackends: {{cpu: {{}}, opencl: {{required: false}}}}\npairs: [[cpu, opencl]]\n\
         fixtures:\n  - name: s\n    synthetic: {{width: 32, height: 32, frames: 2, bit_depth: 8, chroma: \"420\", seed: 1}}\n"
    )
}

fn validate(path: &Path) -> (i32, String) {
    let out = ulpgate().arg("validate").arg(path).output().unwrap();
    (out.status.code().unwrap(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn malformed_yaml_names_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let g = write(dir.path(), "g.yaml", &format!("{HEADER}features: [psnr\nbackends: {{cpu: {{}}}}\n"));
    let (code, err) = validate(&g);
    assert_eq!(code, 2);
    assert!(err.contains("g.yaml:5:") && err.contains("invalid YAML"), "{err}");
    // `run` on the same file: exit 2, and no report written.
    let (code, _, _, json) = run_gate(dir.path(), &g);
    assert_eq!(code, 2);
    assert!(!json.exists());
}

#[test]
fn misspelt_feature_gets_the_nearest_name() {
    let dir = tempfile::tempdir().unwrap();
    let g = write(
        dir.path(),
        "g.yaml",
        &format!(
            "{HEADER}features: [psnr, float_pnsr]\nbackends: {{cpu: {{}}, golden: {{}}}}\npairs: [[golden, cpu]]\nfixtures:\n{FX_8BIT}"
        ),
    );
    let (code, err) = validate(&g);
    assert_eq!(code, 2);
    assert!(err.contains("g.yaml:4:18: features[1]: unknown feature `float_pnsr`"), "{err}");
    assert!(err.contains("help: did you mean `float_psnr`?"), "{err}");
}

#[test]
fn negative_tolerance_is_refused_with_what_was_expected() {
    let dir = tempfile::tempdir().unwrap();
    let g = write(
        dir.path(),
        "g.yaml",
        &format!(
            "{HEADER}features:\n  - name: psnr\n    tolerance: -1.0e-5\n    adr: ADR-1\nbackends: {{cpu: {{}}, golden: {{}}}}\npairs: [[golden, cpu]]\nfixtures:\n{FX_8BIT}"
        ),
    );
    let (code, err) = validate(&g);
    assert_eq!(code, 2);
    assert!(err.contains("g.yaml:6:16: features[0].tolerance: -1.0e-5 is too small"), "{err}");
    assert!(err.contains("expected: a number greater than 0"), "{err}");
}

#[test]
fn missing_tolerance_in_the_registry_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let r = write(
        dir.path(),
        "features.yaml",
        "schema_version: 1\nfeatures:\n  psnr:\n    metrics: [psnr_y]\n    adr: ADR-1\n",
    );
    let (code, err) = validate(&r);
    assert_eq!(code, 2);
    assert!(err.contains("features.yaml:4:5: features.psnr: missing required key `tolerance`"), "{err}");
}

#[test]
fn a_tolerance_override_needs_its_adr() {
    let dir = tempfile::tempdir().unwrap();
    let g = write(
        dir.path(),
        "g.yaml",
        &format!(
            "{HEADER}features:\n  - name: psnr\n    tolerance: 1.0e-3\nbackends: {{cpu: {{}}, golden: {{}}}}\npairs: [[golden, cpu]]\nfixtures:\n{FX_8BIT}"
        ),
    );
    let (code, err) = validate(&g);
    assert_eq!(code, 2);
    assert!(err.contains("a tolerance override needs the `adr`"), "{err}");
}

#[test]
fn unknown_backend_and_unknown_keys_get_suggestions() {
    let dir = tempfile::tempdir().unwrap();
    let g = write(
        dir.path(),
        "g.yaml",
        &format!(
            "{HEADER}features: [psnr]\nbackends: {{cpu: {{}}, vulkn: {{requird: false}}}}\npairs: [[cpu, vulkan]]\nfixtures:\n{FX_8BIT}"
        ),
    );
    let (code, err) = validate(&g);
    assert_eq!(code, 2);
    assert!(err.contains("unknown key `requird`") && err.contains("did you mean `required`?"), "{err}");
    // With the key fixed, the backend name itself is refused.
    let g = write(
        dir.path(),
        "g.yaml",
        &format!(
            "{HEADER}features: [psnr]\nbackends: {{cpu: {{}}, vulkn: {{required: false}}}}\npairs: [[cpu, vulkan]]\nfixtures:\n{FX_8BIT}"
        ),
    );
    let (code, err) = validate(&g);
    assert_eq!(code, 2);
    assert!(
        err.contains("g.yaml:5:21: backends.vulkn: unknown backend `vulkn`") && err.contains("did you mean `vulkan`?"),
        "{err}"
    );
    assert!(err.contains("pairs[0][1]: backend `vulkan` is not declared under `backends`"), "{err}");
}

#[test]
fn github_actions_gets_annotations_for_config_errors() {
    let dir = tempfile::tempdir().unwrap();
    let g = write(
        dir.path(),
        "g.yaml",
        &format!("{HEADER}features: [pnsr]\nbackends: {{cpu: {{}}}}\npairs: [[cpu, cpu]]\nfixtures:\n{FX_8BIT}"),
    );
    let out = ulpgate().env("GITHUB_ACTIONS", "true").arg("validate").arg(&g).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("::error file={},line=4,col=12,", g.display())), "{stdout}");
    assert!(stdout.contains("did you mean `psnr`?"), "{stdout}");
}

/// A gate over one fixture whose files are given.
fn file_gate(dir: &Path, reference: &str, distorted: &str) -> std::path::PathBuf {
    write(
        dir,
        "g.yaml",
        &format!(
            "{HEADER}features: [psnr, float_psnr]\nbackends: {{cpu: {{}}, golden: {{}}}}\npairs: [[golden, cpu]]\nfixtures:\n  - name: fx\n    reference: {reference}\n    distorted: {distorted}\n    geometry: {{width: 200, height: 184, bit_depth: 8, chroma: \"420\"}}\n    golden: @ROOT@/fixtures/reference/scores/testsrc2_200x184_8bit_420/dist_x264\n"
        ),
    )
}

fn cells(json: &Path) -> Vec<serde_json::Value> {
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    report["cells"].as_array().unwrap().clone()
}

#[test]
fn missing_fixture_is_an_error_cell_and_other_cells_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let g = file_gate(dir.path(), "missing.yuv", "@ROOT@/fixtures/reference/testsrc2_200x184_8bit_420/dist_x264.yuv");
    let (code, stdout, _, json) = run_gate(dir.path(), &g);
    assert_eq!(code, 2, "{stdout}");
    for c in cells(&json) {
        assert_eq!(c["status"], "ERROR");
        assert!(c["note"].as_str().unwrap().contains("missing.yuv: file not found"), "{c}");
    }
}

#[test]
fn truncated_fixture_says_how_many_bytes_are_left_over() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read(root().join("fixtures/reference/testsrc2_200x184_8bit_420/dist_x264.yuv")).unwrap();
    std::fs::write(dir.path().join("short.yuv"), &src[..src.len() - 1000]).unwrap();
    let g = file_gate(dir.path(), "@ROOT@/fixtures/reference/testsrc2_200x184_8bit_420/ref.yuv", "short.yuv");
    let (code, _, _, json) = run_gate(dir.path(), &g);
    assert_eq!(code, 2);
    let note = cells(&json)[0]["note"].as_str().unwrap().to_string();
    assert!(
        note.contains("is not a whole number of 55200-byte frames")
            && note.contains("11 whole frames and 54200 bytes left over"),
        "{note}"
    );
}

#[test]
fn frame_count_mismatch_is_an_error_naming_both_counts() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read(root().join("fixtures/reference/testsrc2_200x184_8bit_420/dist_x264.yuv")).unwrap();
    std::fs::write(dir.path().join("eleven.yuv"), &src[..55200 * 11]).unwrap();
    let g = file_gate(dir.path(), "@ROOT@/fixtures/reference/testsrc2_200x184_8bit_420/ref.yuv", "eleven.yuv");
    let (code, _, _, json) = run_gate(dir.path(), &g);
    assert_eq!(code, 2);
    let note = cells(&json)[0]["note"].as_str().unwrap().to_string();
    assert!(note.contains("frame-count mismatch: reference has 12 frames, distorted has 11"), "{note}");
}

#[test]
fn recorded_scores_with_another_frame_count_are_an_error() {
    // The fixture has 11 frames on both sides; libvmaf recorded 12.
    let dir = tempfile::tempdir().unwrap();
    for (name, f) in [("r.yuv", "ref"), ("d.yuv", "dist_x264")] {
        let src = std::fs::read(root().join(format!("fixtures/reference/testsrc2_200x184_8bit_420/{f}.yuv"))).unwrap();
        std::fs::write(dir.path().join(name), &src[..55200 * 11]).unwrap();
    }
    let g = file_gate(dir.path(), "r.yuv", "d.yuv");
    let (code, _, _, json) = run_gate(dir.path(), &g);
    assert_eq!(code, 2);
    let note = cells(&json)[0]["note"].as_str().unwrap().to_string();
    assert!(note.contains("frame-count mismatch: golden has 12 frames, cpu has 11"), "{note}");
}

#[test]
fn geometry_mismatch_between_y4m_sides_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let y4m = |w: u32, h: u32| {
        let mut v = format!("YUV4MPEG2 W{w} H{h} F24:1 C420jpeg\n").into_bytes();
        v.extend_from_slice(b"FRAME\n");
        v.extend(std::iter::repeat_n(128u8, (w * h * 3 / 2) as usize));
        v
    };
    std::fs::write(dir.path().join("a.y4m"), y4m(16, 16)).unwrap();
    std::fs::write(dir.path().join("b.y4m"), y4m(32, 16)).unwrap();
    let g = write(
        dir.path(),
        "g.yaml",
        &format!(
            "{HEADER}features: [psnr]\nbackends: {{cpu: {{}}, golden: {{}}}}\npairs: [[golden, cpu]]\nfixtures:\n  - name: fx\n    reference: a.y4m\n    distorted: b.y4m\n    golden: .\n"
        ),
    );
    let (code, _, _, json) = run_gate(dir.path(), &g);
    assert_eq!(code, 2);
    let note = cells(&json)[0]["note"].as_str().unwrap().to_string();
    assert!(note.contains("geometry mismatch: reference is 16x16 8-bit 420, distorted is 32x16 8-bit 420"), "{note}");
}

#[test]
fn an_unwritable_output_path_writes_nothing_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("ok.json");
    let md = dir.path().join("no/such/dir/r.md");
    let out = ulpgate()
        .env("ULPGATE_TRACE", "1")
        .args(["run", "--backends", "golden,cpu", "--features", "psnr", "--json-out"])
        .arg(&json)
        .arg("--md-out")
        .arg(&md)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot write") && err.contains("r.md") && err.contains("there is no folder"), "{err}");
    // Found before any work: no backend opened, no fixture read.
    assert!(!err.contains("backends open") && !err.contains("read:"), "{err}");
    assert!(!json.exists(), "the JSON report must not land when the Markdown cannot");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no temporary files left");
}

#[test]
fn every_long_command_refuses_an_unwritable_output_before_it_works() {
    // Each command is also given `--vulkan-device nosuch`, an error it would
    // report on opening its backends: the output's error must come instead.
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/dir/out.json");
    let missing = missing.to_str().unwrap();
    let corpus = dir.path().join("no/such/dir/corpus.csv");
    let corpus = corpus.to_str().unwrap();
    let clip = "fixtures/reference/testsrc2_200x184_8bit_420";
    let (reference, distorted) = (format!("{clip}/ref.yuv"), format!("{clip}/dist_x264.yuv"));
    let geometry = ["--width", "200", "--height", "184"];
    let later = ["--vulkan-device", "nosuch"];
    let commands: Vec<Vec<&str>> = vec![
        [
            &[
                "score",
                "--backend",
                "vulkan",
                "--feature",
                "psnr",
                "--reference",
                &reference,
                "--distorted",
                &distorted,
            ][..],
            &geometry,
            &["--json-out", missing],
        ]
        .concat(),
        [&["bench", "--clip", &reference, &distorted][..], &geometry, &["--frames", "1", "--json-out", missing]]
            .concat(),
        vec!["calibrate", "collect", "--smoke", "--out", corpus],
        vec!["run", "--features", "psnr", "--junit-out", dir.path().to_str().unwrap()],
    ];
    for args in commands {
        let out = ulpgate().env("ULPGATE_TRACE", "1").args(&args).args(later).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("cannot write"), "{args:?}: {err}");
        assert!(err.contains("there is no folder") || err.contains("it is a folder"), "{args:?}: {err}");
        assert!(!err.contains("nosuch") && !err.contains("backends open"), "{args:?}: {err}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing left behind");
}

/// A `--vulkan-device` or `--opencl-device` that names no device is a
/// usage error in every command that takes it, before any work, whichever
/// backends it runs: `calibrate collect` used to SKIP vulkan for it and
/// exit 0. (`--cuda-device` is checked the same way where CUDA can list
/// its devices; this machine has none.)
#[test]
fn a_device_that_does_not_exist_is_refused_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus.csv");
    let clip = "fixtures/reference/testsrc2_200x184_8bit_420";
    let (reference, distorted) = (format!("{clip}/ref.yuv"), format!("{clip}/dist_x264.yuv"));
    let geometry = ["--width", "200", "--height", "184"];
    let score = ["score", "--feature", "psnr", "--reference", &reference, "--distorted", &distorted];
    let commands: Vec<Vec<&str>> = vec![
        [&score[..], &["--backend", "cpu"], &geometry].concat(),
        [&score[..], &["--backend", "vulkan"], &geometry].concat(),
        [&score[..], &["--backend", "opencl"], &geometry].concat(),
        [&["bench", "--clip", &reference, &distorted][..], &geometry, &["--frames", "1"]].concat(),
        vec!["calibrate", "collect", "--features", "psnr", "--out", corpus.to_str().unwrap()],
        vec!["run", "--features", "psnr"],
    ];
    let flags = [
        ("--vulkan-device", r#"no Vulkan device's name contains "nosuch"; the devices are 0: llvmpipe"#),
        (
            "--opencl-device",
            r#"--opencl-device nosuch: no OpenCL device's name contains "nosuch"; the devices are 0: "#,
        ),
    ];
    for (flag, expected) in flags {
        for args in &commands {
            let out = ulpgate().args(args).args([flag, "nosuch"]).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?} {flag}: {err}");
            assert!(err.contains(expected), "{args:?} {flag}: {err}");
            assert!(out.stdout.is_empty(), "{args:?} {flag}: {}", String::from_utf8_lossy(&out.stdout));
        }
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing written");
}

#[test]
fn a_missing_gate_file_is_a_clear_error() {
    let out = ulpgate().args(["run", "gates/nope.yaml"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("error: gates/nope.yaml: file not found"));
}

#[test]
fn duplicate_features_in_the_registry_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let r = write(
        dir.path(),
        "features.yaml",
        "schema_version: 1\nfeatures:\n  psnr: {metrics: [psnr_y], tolerance: 1.0e-5, adr: A}\n  psnr: {metrics: [psnr_y], tolerance: 1.0e-5, adr: A}\n",
    );
    let (code, err) = validate(&r);
    assert_eq!(code, 2);
    assert!(err.contains("features.yaml:4:3: features.psnr: `psnr` is defined twice"), "{err}");
}

/// Messages that say what was written and how to write it right, one per
/// value: a top-level key twice at its second line, `chroma: 420` (a
/// number to YAML), a NaN (JSON has none: it read as "nothing (null)"),
/// `schema_version: "1"` once, not twice.
#[test]
fn yaml_slips_get_messages_about_what_was_written() {
    let dir = tempfile::tempdir().unwrap();
    let rest = "features: [psnr]\nbackends: {cpu: {}, opencl: {required: false}}\npairs: [[cpu, opencl]]\nfixtures:\n  \
                - name: s\n    synthetic: {width: 32, height: 32, frames: 2, bit_depth: 8, chroma: \"420\", seed: 1}\n";
    let registry = "registry: @ROOT@/gates/features.yaml\n";
    let cases = [
        (
            format!("schema_version: 1\nname: a\nname: b\n{registry}{rest}"),
            vec!["g.yaml:3:1: name: `name` is defined twice"],
        ),
        (
            format!("schema_version: 1\nname: a\n{registry}{}", rest.replace("chroma: \"420\"", "chroma: 420")),
            vec!["wrong type: found the number 420", "expected: a string (in quotes: \"420\")"],
        ),
        (
            format!("schema_version: 1\nname: a\n{registry}{}", rest.replace("chroma: \"420\"", "chroma: \"421\"")),
            vec!["expected: one of: 420, 422, 444, 400"],
        ),
        (
            format!("schema_version: 1\nname: a\n{registry}{}", rest.replace("width: 32", "width: .nan")),
            vec!["g.yaml:9:24: fixtures[0].synthetic.width: `.nan` is not a number a gate takes", "a finite number"],
        ),
        (format!("schema_version: \"1\"\nname: a\n{registry}{rest}"), vec!["g.yaml:1:17: schema_version: wrong type"]),
    ];
    for (yaml, wanted) in cases {
        let g = write(dir.path(), "g.yaml", &yaml);
        let (code, err) = validate(&g);
        assert_eq!(code, 2, "{err}");
        for w in wanted {
            assert!(err.contains(w), "{w} in {err}");
        }
        assert_eq!(err.matches("error:").count(), 1, "one message: {err}");
    }
}

/// A reader that closes standard output early (`ulpgate validate | head
/// -1`) changes neither the exit code nor the report files: no panic
/// (exit 101) on the broken pipe.
#[test]
fn a_closed_standard_output_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let g = write(dir.path(), "g.yaml", &small_gate());
    let json = dir.path().join("r.json");
    for args in [
        vec!["validate".as_ref(), g.as_os_str()],
        vec!["run".as_ref(), g.as_os_str(), "--json-out".as_ref(), json.as_os_str()],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ulpgate"))
            .current_dir(root())
            .env_remove("GITHUB_ACTIONS")
            .args(&args)
            .stdout(writer)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    assert!(json.exists(), "the report was written");
}

/// Two outputs naming one file, and two gates under one name (cell ids
/// would repeat, which `merge` refuses): exit 2 before any work.
#[test]
fn colliding_outputs_and_gate_names_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let gate = small_gate();
    let g = write(dir.path(), "g.yaml", &gate);
    let h = write(dir.path(), "h.yaml", &gate);
    let out = ulpgate()
        .current_dir(dir.path())
        .args(["run", "g.yaml", "--json-out", "r", "--md-out", "./r"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot write r and ./r: they are the same file"), "{err}");
    assert!(!dir.path().join("r").exists());
    for (files, message) in
        [([&g, &g], "the gate file is given twice"), ([&g, &h], "gate name `t` is also the name of")]
    {
        let out = ulpgate().arg("run").args(files).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "{err}");
    }
}

/// `validate` checks configuration, not data: fixture files that are not
/// there (yet), or are folders, are warnings at their line and column.
#[test]
fn validate_warns_of_fixture_files_at_their_lines() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("folder")).unwrap();
    let g = write(
        dir.path(),
        "g.yaml",
        &format!(
            "{HEADER}features: [psnr]\nbackends: {{cpu: {{}}, opencl: {{required: false}}}}\npairs: [[cpu, opencl]]\n\
             fixtures:\n  - name: f\n    reference: nosuch.yuv\n    distorted: folder\n    golden: nosuchdir\n    \
             geometry: {{width: 64, height: 48, bit_depth: 8, chroma: \"420\"}}\n"
        ),
    );
    let out = ulpgate().arg("validate").arg(&g).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    for line in ["g.yaml:9:16: fixture `f`: ", "g.yaml:10:16: fixture `f`: ", "g.yaml:11:13: fixture `f`: "] {
        assert!(err.contains(line), "{line} in {err}");
    }
    assert!(err.contains("nosuch.yuv does not exist") && err.contains("folder is a folder, not a file"), "{err}");
    assert!(err.contains("nosuchdir does not exist"), "{err}");
}

/// A calibration table validated alone has its feature names checked
/// against the repository's registry, as a gate's run checks them.
#[test]
fn a_calibration_table_alone_gets_its_feature_names_checked() {
    let dir = tempfile::tempdir().unwrap();
    let table = std::fs::read_to_string(root().join("calibration/gpu_ulp_calibration.yaml")).unwrap();
    let t = write(dir.path(), "t.yaml", &table.replacen("      psnr: ", "      psnrr: ", 1));
    let (code, err) = validate(&t);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown feature `psnrr`") && err.contains("did you mean `psnr`?"), "{err}");
}

/// A template that fails to render is named in the error.
#[test]
fn a_broken_template_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let g = write(dir.path(), "g.yaml", &small_gate());
    let template = write(dir.path(), "broken.j2", "{{ report.nope.x }}");
    let md = dir.path().join("r.md");
    let out = ulpgate().arg("run").arg(&g).arg("--template").arg(&template).arg("--md-out").arg(&md).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("template {}: rendering the template failed", template.display())), "{err}");
    assert!(!md.exists());
}
