//! The CPU reference against Netflix libvmaf's recorded per-frame scores
//! (fixtures/reference/scores, committed): within 1e-6 on every frame, the
//! numbers' printed precision.
//!
//! Data-driven: every feature this build implements is checked on every
//! recorded pair, once with its default options and once per registry
//! option that names its own recording (`golden_file`) or adds metrics
//! (`enable_lcs`, `debug`), so a new feature is covered by registering it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use ulpgate::config::features::FeatureRegistry;
use ulpgate::config::resolve::load_registry;
use ulpgate::features::{self, FeatureImpl, Options};
use ulpgate::fixture::{Chroma, FrameSource, Geometry, LoadedFixture};
use ulpgate::scores::read_libvmaf_json;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/reference")
}

/// (fixture folder, distorted file, geometry): every recorded pair.
fn pairs() -> Vec<(&'static str, &'static str, Geometry)> {
    let g = |width, height, bit_depth, chroma| Geometry { width, height, bit_depth, chroma };
    vec![
        ("testsrc2_200x184_8bit_420", "dist_x264", g(200, 184, 8, Chroma::Yuv420)),
        ("testsrc2_200x184_8bit_420", "dist_blur", g(200, 184, 8, Chroma::Yuv420)),
        ("testsrc2_192x180_10bit_420", "dist_x264", g(192, 180, 10, Chroma::Yuv420)),
        ("testsrc2_192x180_8bit_444", "dist_x264", g(192, 180, 8, Chroma::Yuv444)),
        ("testsrc2_320x240_8bit_420", "dist_x264", g(320, 240, 8, Chroma::Yuv420)),
        ("testsrc2_320x240_8bit_420", "dist_band", g(320, 240, 8, Chroma::Yuv420)),
        ("testsrc2_320x240_10bit_420", "dist_x264", g(320, 240, 10, Chroma::Yuv420)),
        ("testsrc2_320x240_10bit_420", "dist_band", g(320, 240, 10, Chroma::Yuv420)),
    ]
}

/// Extractors recorded with the lusoris fork (fixtures/reference/README.md):
/// the fork was not rebuilt for the 320x240 fixtures, so they have none.
const FORK_ONLY: &[&str] = &["ssimulacra2", "motion_v2"];

fn registry() -> FeatureRegistry {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("gates/features.yaml");
    load_registry(&path).unwrap_or_else(|e| panic!("{e}")).value
}

fn load(folder: &str, dist: &str, geometry: Geometry) -> LoadedFixture {
    let src = |name: &str| FrameSource::Raw { path: root().join(folder).join(format!("{name}.yuv")), geometry };
    LoadedFixture::load(&src("ref"), &src(dist), None).unwrap()
}

/// (options, recording stem) per variant of a feature: the defaults, then
/// each boolean option set that the registry gives its own metrics or
/// recording.
fn variants(imp: &FeatureImpl, registry: &FeatureRegistry) -> Vec<(Options, String)> {
    let spec = registry.features.get(imp.name).unwrap_or_else(|| panic!("{} is not in the registry", imp.name));
    let stem = spec.golden_file.clone().unwrap_or_else(|| imp.name.to_string());
    let mut out = vec![(Options::new(), stem.clone())];
    for (name, opt) in &spec.options {
        if opt.golden_file.is_some() || !opt.adds_metrics.is_empty() {
            let mut options = Options::new();
            options.insert(name.clone(), serde_json::Value::Bool(true));
            out.push((options, opt.golden_file.clone().unwrap_or_else(|| stem.clone())));
        }
    }
    out
}

/// Features whose libvmaf scores depend on the host CPU: float_adm's plain
/// C path divides with `rcp_s` (adm_tools.c), the CPU's `rcpss` plus one
/// Newton step, and AMD's and Intel's `rcpss` differ. `scores/` was
/// recorded on AMD Zen hosts; `scores-rcpss/<fingerprint>/` holds these
/// features recorded by libvmaf on hosts with another table
/// (record_float_adm.sh), and the CPU reference, which calls the host's
/// `rcpss` as libvmaf does, is held to the recording of its own table.
const RCPSS_DEPENDENT: &[&str] = &["float_adm"];

/// This host's `rcpss` table, by its fingerprint.
fn rcpss_fingerprint() -> String {
    ulpgate::features::adm::float::rcp::Reciprocal::get().map(|r| r.fingerprint()).unwrap_or_else(|e| format!("{e:#}"))
}

/// The recording the CPU reference is held to for one variant on one pair.
fn recording(folder: &str, dist: &str, stem: &str, feature: &str) -> PathBuf {
    let upstream = root().join(format!("scores/{folder}/{dist}/{stem}.json"));
    if !RCPSS_DEPENDENT.contains(&feature) {
        return upstream;
    }
    let here = root().join(format!("scores-rcpss/{}/{folder}/{dist}/{stem}.json", rcpss_fingerprint()));
    if here.exists() { here } else { upstream }
}

/// Compares one variant on one pair; returns the frame values checked.
fn check(imp: &FeatureImpl, options: &Options, recording: &Path, fixture: &LoadedFixture, what: &str) -> usize {
    let geometry = fixture.geometry;
    let recorded = match read_libvmaf_json(recording) {
        Ok(r) => r,
        Err(e) => {
            // Only a recorded refusal (an `error` object: cambi below its
            // minimum size) may fail to read: a damaged recording is not
            // libvmaf refusing.
            let doc: serde_json::Value =
                serde_json::from_slice(&std::fs::read(recording).unwrap()).unwrap_or_else(|_| panic!("{what}: {e:#}"));
            assert!(doc["error"].is_object(), "{what}: {e:#}");
            // The CPU reference must refuse it too, for libvmaf's reason,
            // never score it.
            let refusal = (imp.refuses)(&geometry, options)
                .unwrap_or_else(|| panic!("{what}: libvmaf refused ({e:#}) but the CPU reference takes the input"));
            let ours = imp
                .cpu_extractor(&geometry, options)
                .and_then(|ex| features::run_extractor(ex, fixture, &|| {}).map(|_| ()));
            let err = ours.expect_err(&format!("{what}: libvmaf refused ({e:#}) but the CPU reference scored it"));
            assert!(format!("{err:#}").contains(&refusal), "{what}: {err:#}, not {refusal}");
            return 0;
        }
    };
    let ours = features::run_extractor(imp.cpu_extractor(&geometry, options).unwrap(), fixture, &|| {})
        .unwrap_or_else(|e| panic!("{what}: {e:#}"));
    let mut checked = 0;
    for metric in (imp.metrics)(options).unwrap() {
        let want = recorded.scores.get(&metric).unwrap_or_else(|| panic!("{what}: libvmaf printed no {metric}"));
        let got = ours.get(&metric).unwrap_or_else(|| panic!("{what}: the CPU reference gave no {metric}"));
        assert_eq!(want.len(), got.len(), "{what} {metric}: frame count");
        for (i, (w, g)) in want.iter().zip(got).enumerate() {
            assert!(
                (w - g).abs() <= 1e-6,
                "{what} {metric} frame {i}: libvmaf {w}, ours {g}, |Δ| {} (recording {}){}",
                (w - g).abs(),
                recording.display(),
                if RCPSS_DEPENDENT.contains(&imp.name) && !recording.to_string_lossy().contains("scores-rcpss") {
                    format!(
                        "; libvmaf's {} depends on the CPU's rcpss and this host's table ({}) has no \
                         recording: if libvmaf 3.2.0 prints our numbers here, record them with \
                         fixtures/reference/record_float_adm.sh VMAF {}",
                        imp.name,
                        rcpss_fingerprint(),
                        rcpss_fingerprint()
                    )
                } else {
                    String::new()
                }
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn cpu_reference_reproduces_libvmaf_within_printed_precision() {
    let registry = registry();
    // feature -> frame values checked, to prove every feature was covered.
    let mut checked: BTreeMap<&str, usize> = BTreeMap::new();
    for (folder, dist, geometry) in pairs() {
        let fixture = load(folder, dist, geometry);
        for imp in features::implementations() {
            for (options, stem) in variants(imp, &registry) {
                let recording = recording(folder, dist, &stem, imp.name);
                let what = format!("{folder}/{dist} {} {options:?}", imp.name);
                if !recording.exists() {
                    assert!(
                        FORK_ONLY.contains(&imp.name) && folder.starts_with("testsrc2_320x240"),
                        "{what}: {} is missing",
                        recording.display()
                    );
                    continue;
                }
                *checked.entry(imp.name).or_default() += check(imp, &options, &recording, &fixture, &what);
            }
        }
    }
    for imp in features::implementations() {
        assert!(checked.get(imp.name).copied().unwrap_or(0) > 0, "{}: no recorded frame was checked", imp.name);
    }
}

#[test]
fn the_reference_set_covers_every_registered_feature() {
    // Each registered feature (and option recording) has its recordings on
    // the first fixture, so the test above can cover it once implemented.
    for (name, spec) in registry().features {
        let stems = std::iter::once(spec.golden_file.clone().unwrap_or_else(|| name.clone()))
            .chain(spec.options.values().filter_map(|o| o.golden_file.clone()));
        for stem in stems {
            let path = root().join(format!("scores/testsrc2_200x184_8bit_420/dist_x264/{stem}.json"));
            assert!(path.exists(), "{name}: no recording {}", path.display());
        }
    }
}

#[test]
fn integer_psnr_is_exact_where_libvmaf_is_integer() {
    // psnr's sums are integers; our doubles printed at %.6f must equal
    // libvmaf's printed text exactly (no tolerance at all).
    for (folder, dist, geometry) in pairs() {
        let fixture = load(folder, dist, geometry);
        let imp = features::find("psnr").unwrap();
        let ours =
            features::run_extractor(imp.cpu_extractor(&geometry, &Options::new()).unwrap(), &fixture, &|| {}).unwrap();
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
    assert_eq!(sums.lines().count(), 13);
}

/// Every table's folder in `scores-rcpss/` is complete (each recorded pair,
/// each variant of every host-dependent feature) and its files name that
/// table: a partial folder would hold a host to `scores/` for the files it
/// lacks.
#[test]
fn rcpss_recordings_are_complete_and_name_their_table() {
    let registry = registry();
    let tables: Vec<_> = std::fs::read_dir(root().join("scores-rcpss"))
        .expect("fixtures/reference/scores-rcpss is committed")
        .map(|t| t.unwrap().path())
        .collect();
    // At least the table of the Intel Xeon CI ran on (0cbc5d0).
    assert!(!tables.is_empty(), "no rcpss table recorded");
    for table in tables {
        let fingerprint = table.file_name().unwrap().to_string_lossy().into_owned();
        for (folder, dist, _) in pairs() {
            for imp in features::implementations().filter(|i| RCPSS_DEPENDENT.contains(&i.name)) {
                for (_, stem) in variants(imp, &registry) {
                    let path = table.join(format!("{folder}/{dist}/{stem}.json"));
                    let text = std::fs::read_to_string(&path)
                        .unwrap_or_else(|e| panic!("{}: {e} (record_float_adm.sh writes every pair)", path.display()));
                    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
                    assert_eq!(doc["rcpss"].as_str(), Some(fingerprint.as_str()), "{}", path.display());
                }
            }
        }
    }
}
