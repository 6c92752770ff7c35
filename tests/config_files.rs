//! The committed configuration: every YAML file carries its schema line and
//! validates; the registry agrees with what this build implements.

mod common;
use common::*;
use ulpgate::config::resolve::load_registry;
use ulpgate::features::{self, Options};

fn yaml_files() -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for dir in ["gates", "calibration"] {
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "yaml") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_yaml_file_starts_with_its_schema_line() {
    let files = yaml_files();
    assert!(files.len() >= 3);
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let first = text.lines().next().unwrap_or_default();
        assert!(first.starts_with("# yaml-language-server: $schema=../schemas/"), "{}: {first}", f.display());
        let schema = first.rsplit('=').next().unwrap();
        assert!(f.parent().unwrap().join(schema).exists(), "{}: {schema} does not exist", f.display());
    }
}

#[test]
fn every_committed_gate_registry_and_table_validates() {
    let out = ulpgate().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("ok: gates/features.yaml (feature registry: 17 features)"), "{stdout}");
    assert!(stdout.contains("ok: calibration/gpu_ulp_calibration.yaml"), "{stdout}");
}

#[test]
fn the_registry_names_exactly_what_each_implementation_emits() {
    let registry = load_registry(&root().join("gates/features.yaml")).unwrap().value;
    assert_eq!(registry.features.len(), 17);
    for imp in features::implementations() {
        let spec = registry.features.get(imp.name).unwrap_or_else(|| panic!("{} is not registered", imp.name));
        assert_eq!((imp.metrics)(&Options::new()).unwrap(), spec.metrics, "{}", imp.name);
    }
}

#[test]
fn y4m_fixtures_run_end_to_end() {
    // The 8-bit 4:2:0 reference pair as Y4M: the header carries the geometry;
    // every other frame header carries parameters, so the frames' samples
    // do not lie at a fixed stride (they are read by position through an
    // index of the headers).
    let dir = tempfile::tempdir().unwrap();
    for (src, dst) in [("ref", "ref.y4m"), ("dist_x264", "dist.y4m")] {
        let raw =
            std::fs::read(root().join(format!("fixtures/reference/testsrc2_200x184_8bit_420/{src}.yuv"))).unwrap();
        let mut y4m = b"YUV4MPEG2 W200 H184 F24:1 Ip A1:1 C420jpeg\n".to_vec();
        for (i, frame) in raw.chunks(55200).enumerate() {
            y4m.extend_from_slice(if i % 2 == 0 { b"FRAME\n".as_slice() } else { b"FRAME Ip XFRAME=odd\n" });
            y4m.extend_from_slice(frame);
        }
        std::fs::write(dir.path().join(dst), y4m).unwrap();
    }
    let g = write(
        dir.path(),
        "g.yaml",
        &format!(
            "{HEADER}features: all\nbackends: {{cpu: {{}}, golden: {{}}}}\npairs:\n  - a: golden\n    b: cpu\n    features: [psnr, float_psnr, float_moment, float_ansnr, motion]\n    tolerance: {{abs: 1.0e-6, adr: printed precision}}\nfixtures:\n  - name: y4m\n    reference: ref.y4m\n    distorted: dist.y4m\n    frames: 12\n    golden: @ROOT@/fixtures/reference/scores/testsrc2_200x184_8bit_420/dist_x264\n"
        ),
    );
    // Held in memory (the default), and read from the files frame by frame
    // by each side (motion reads earlier frames again).
    for memory in [&[][..], &["--fixture-memory", "0"]] {
        let out = ulpgate().arg("run").arg(&g).arg("--quiet").args(memory).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{memory:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("OK: 5 cells, 5 OK"), "{memory:?}");
    }
}
