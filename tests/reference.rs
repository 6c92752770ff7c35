//! The CPU reference against Netflix libvmaf's recorded per-frame scores
//! (fixtures/reference/scores, committed): within 1e-6 on every frame, the
//! numbers' printed precision.

use std::path::PathBuf;
use ulpgate::features::{self, Options};
use ulpgate::fixture::{Chroma, FrameSource, Geometry, LoadedFixture};
use ulpgate::scores::read_libvmaf_json;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/reference")
}

/// (fixture folder, distorted file, geometry)
fn pairs() -> Vec<(&'static str, &'static str, Geometry)> {
    let g = |width, height, bit_depth, chroma| Geometry { width, height, bit_depth, chroma };
    vec![
        ("testsrc2_200x184_8bit_420", "dist_x264", g(200, 184, 8, Chroma::Yuv420)),
        ("testsrc2_200x184_8bit_420", "dist_blur", g(200, 184, 8, Chroma::Yuv420)),
        ("testsrc2_192x180_10bit_420", "dist_x264", g(192, 180, 10, Chroma::Yuv420)),
        ("testsrc2_192x180_8bit_444", "dist_x264", g(192, 180, 8, Chroma::Yuv444)),
    ]
}

#[test]
fn cpu_reference_reproduces_libvmaf_within_printed_precision() {
    let mut checked = 0;
    for (folder, dist, geometry) in pairs() {
        let src = |name: &str| FrameSource::Raw { path: root().join(folder).join(format!("{name}.yuv")), geometry };
        let fixture = LoadedFixture::load(&src("ref"), &src(dist), None).unwrap();
        for imp in features::implementations() {
            let recorded =
                read_libvmaf_json(&root().join(format!("scores/{folder}/{dist}/{}.json", imp.name))).unwrap();
            let ours =
                features::run_extractor((imp.cpu)(&geometry, &Options::new()).unwrap(), &fixture, &|| {}).unwrap();
            let metrics = (imp.metrics)(&Options::new()).unwrap();
            for metric in &metrics {
                let want = recorded.scores.get(metric).unwrap_or_else(|| panic!("{folder}/{dist}: no {metric}"));
                let got = ours.get(metric).unwrap();
                assert_eq!(want.len(), got.len(), "{folder}/{dist} {metric}: frame count");
                for (i, (w, g)) in want.iter().zip(got).enumerate() {
                    assert!((w - g).abs() <= 1e-6, "{folder}/{dist} {metric} frame {i}: libvmaf {w}, ours {g}");
                    checked += 1;
                }
            }
        }
    }
    // 4 pairs x (3 + 1 + 4 + 2 metrics) x their frames (12 + 12 + 8 + 6).
    assert_eq!(checked, 10 * (12 + 12 + 8 + 6));
}

#[test]
fn integer_psnr_is_exact_where_libvmaf_is_integer() {
    // psnr's sums are integers; our doubles printed at %.6f must equal
    // libvmaf's printed text exactly (no tolerance at all).
    for (folder, dist, geometry) in pairs() {
        let src = |name: &str| FrameSource::Raw { path: root().join(folder).join(format!("{name}.yuv")), geometry };
        let fixture = LoadedFixture::load(&src("ref"), &src(dist), None).unwrap();
        let imp = features::find("psnr").unwrap();
        let ours = features::run_extractor((imp.cpu)(&geometry, &Options::new()).unwrap(), &fixture, &|| {}).unwrap();
        let text = std::fs::read_to_string(root().join(format!("scores/{folder}/{dist}/psnr.json"))).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        for metric in ["psnr_y", "psnr_cb", "psnr_cr"] {
            for (i, v) in ours.get(metric).unwrap().iter().enumerate() {
                let printed = doc["metrics"][metric][i].to_string();
                let ours_printed = format!("{v:.6}");
                let trimmed = ours_printed.trim_end_matches('0').trim_end_matches('.');
                assert_eq!(trimmed, printed, "{folder}/{dist} {metric} frame {i}");
            }
        }
    }
}

#[test]
fn committed_fixtures_match_their_checksums() {
    // fixtures.sha256 lists the exact bytes the recorded scores refer to.
    use sha2::{Digest, Sha256};
    let sums = std::fs::read_to_string(root().join("fixtures.sha256")).unwrap();
    for line in sums.lines() {
        let (want, file) = line.split_once("  ").unwrap();
        let bytes = std::fs::read(root().join(file)).unwrap();
        let got: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(got, want, "{file} is not the file libvmaf scored");
    }
    assert_eq!(sums.lines().count(), 7);
}
