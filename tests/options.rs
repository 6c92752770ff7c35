//! libvmaf 3.2.0's option tables, option by option:
//!
//! - the CPU reference against libvmaf recordings of non-default option
//!   values (`tests/data/<feature>/`, scripts/record_options.py): every
//!   metric name (feature parameters rename them, feature_name.c) and every
//!   frame's value, within libvmaf's printed precision, exactly where its
//!   arithmetic is integer; the vif family's variants are in
//!   fixtures/reference/scores (tests/vif.rs), cambi's in tests/data/cambi
//!   (tests/cambi.rs);
//! - each feature's option table against libvmaf's (name, alias, type,
//!   default, range, feature-parameter flag), as its C sources declare them
//!   (tests/data/libvmaf_options.json);
//! - values libvmaf refuses (outside the range, of the wrong type) are
//!   refused with the option's name and range, and so are unknown names;
//! - every GPU pipeline on lavapipe and PoCL under each recording's options,
//!   bit for bit with the CPU reference.

mod common;
use common::recordings::{Recording, recordings};

use serde_json::{Value, json};
use ulpgate::features::options::OptValue;
use ulpgate::features::{self, FeatureImpl, Options, run_extractor};

/// The folders of tests/data this file checks, and whether the feature's
/// arithmetic is integer up to its last division, so that our doubles are
/// libvmaf's and must print as libvmaf printed them.
const FOLDERS: &[(&str, bool)] = &[
    ("adm", false),
    ("float_adm", false),
    ("motion", true),
    ("float_motion", false),
    ("float_ssim", false),
    ("float_ms_ssim", false),
    ("psnr", true),
];

/// libvmaf prints 6 decimals: its numbers are within 5e-7 of its doubles.
const PRINTED: f64 = 1e-6;

/// This host's `rcpss` table (float_adm divides with it, as libvmaf does).
fn rcpss_fingerprint() -> Option<String> {
    ulpgate::features::adm::float::rcp::Reciprocal::get().ok().map(|r| r.fingerprint())
}

/// The tolerance one recording is held to. float_adm's numbers depend on
/// the CPU's `rcpss` (fixtures/reference/README.md): a recording made on a
/// host with another table (its `rcpss`) is held to 1e-6 plus 1e-5 of the
/// value (the two tables of scores-rcpss/ and scores/ differ by 1.2e-7 of
/// the value beyond 1e-6 at the default options), which still catches an
/// option that changes the arithmetic.
fn tolerance(rec: &Recording) -> (f64, f64) {
    match rec.doc.get("rcpss").and_then(Value::as_str) {
        Some(table) if Some(table.to_string()) != rcpss_fingerprint() => {
            eprintln!(
                "{}: recorded on rcpss table {table}, this host's is {:?}: held to 1e-6 + 1e-5 relative \
                 (scripts/record_options.py --rcpss records this host's)",
                rec.what(),
                rcpss_fingerprint()
            );
            (PRINTED, 1e-5)
        }
        _ => (PRINTED, 0.0),
    }
}

/// Checks every recording of `folder`; returns (recordings, values).
fn check_folder(folder: &str, exact: bool) -> (usize, usize) {
    let recs = recordings(folder);
    let mut values = 0;
    for rec in &recs {
        let what = rec.what();
        assert_eq!(rec.feature, folder, "{what}: filed under the wrong feature");
        let imp: &FeatureImpl = features::find(&rec.feature).unwrap();
        // The names the registry and the gate expect under these options.
        let mut names = (imp.metrics)(&rec.options).unwrap_or_else(|e| panic!("{what}: {e:#}"));
        names.sort();
        assert_eq!(names, rec.metric_names(), "{what}: metric names (ours, libvmaf's)");
        let frames = rec.frames();
        let fixture = rec.raw_fixture(Some(frames));
        let geometry = fixture.geometry;
        let ours = run_extractor(imp.cpu_extractor(&geometry, &rec.options).unwrap(), &fixture, &|| {})
            .unwrap_or_else(|e| panic!("{what}: {e:#}"));
        let (abs, rel) = tolerance(rec);
        if rel == 0.0 {
            values += rec.assert_reproduced(&ours, frames, abs, exact);
        } else {
            for (name, want) in rec.recorded.metrics() {
                let got = ours.get(name).unwrap_or_else(|| panic!("{what}: no {name}"));
                assert_eq!(got.len(), want.len(), "{what} {name}: frames");
                for (i, (w, g)) in want.iter().zip(got).enumerate() {
                    let ok = if w.is_finite() { (w - g).abs() <= abs + rel * w.abs() } else { !g.is_finite() };
                    assert!(ok, "{what} {name} frame {i}: libvmaf {w}, ours {g} (another rcpss table)");
                    values += 1;
                }
            }
        }
    }
    (recs.len(), values)
}

#[test]
fn cpu_reference_reproduces_every_option_recording() {
    let mut total = 0;
    for &(folder, exact) in FOLDERS {
        let (recs, values) = check_folder(folder, exact);
        assert!(recs > 0 && values > 0, "tests/data/{folder}: nothing checked");
        total += recs;
    }
    assert!(total >= 70, "{total} recordings");
}

/// libvmaf's option tables (tests/data/libvmaf_options.json, from
/// libvmaf 3.2.0's `static const VmafOption options[]`).
fn libvmaf_tables() -> serde_json::Map<String, Value> {
    let path = common::root().join("tests/data/libvmaf_options.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    doc["tables"].as_object().unwrap().clone()
}

fn opt_json(d: &ulpgate::features::options::OptionDef) -> Value {
    let (kind, default) = match d.default {
        OptValue::Bool(b) => ("bool", json!(b)),
        OptValue::Int(i) => ("int", json!(i)),
        OptValue::Double(x) => ("double", json!(x)),
        OptValue::Str(s) => ("string", json!(s)),
    };
    json!({"name": d.name, "alias": d.alias, "type": kind, "default": default, "min": d.min, "max": d.max,
           "feature_param": d.feature_param})
}

#[test]
fn option_tables_are_libvmafs() {
    let tables = libvmaf_tables();
    let mut compared = 0;
    for (feature, table) in &tables {
        let imp = features::find(feature).unwrap_or_else(|| panic!("this build has no {feature}"));
        let ours: Vec<Value> = imp.options.iter().map(opt_json).collect();
        let theirs: Vec<&Value> = table.as_array().unwrap().iter().collect();
        let names = |v: &mut dyn Iterator<Item = &Value>| {
            v.map(|o| o["name"].as_str().unwrap().to_string()).collect::<Vec<_>>()
        };
        assert_eq!(names(&mut ours.iter()), names(&mut theirs.iter().copied()), "{feature}: options, in table order");
        for (o, t) in ours.iter().zip(theirs) {
            let name = &o["name"];
            for key in ["alias", "type", "feature_param"] {
                assert_eq!(o[key], t[key], "{feature}.{name}: {key}");
            }
            // libvmaf's string default NULL (cambi's heatmaps_path) is "" here.
            let default = if t["default"].is_null() { json!("") } else { t["default"].clone() };
            assert_eq!(o["default"], default, "{feature}.{name}: default");
            for key in ["min", "max"] {
                assert_eq!(o[key].as_f64(), t[key].as_f64(), "{feature}.{name}: {key}");
            }
            compared += 1;
        }
    }
    // Every feature of the audit, and those libvmaf gives no options.
    for feature in ["float_psnr", "float_moment", "float_ansnr", "ciede", "psnr_hvs"] {
        assert!(tables[feature].as_array().unwrap().is_empty(), "{feature}");
        assert!(features::find(feature).unwrap().options.is_empty(), "{feature}");
    }
    assert!(compared >= 90, "{compared} options compared");
    // A feature added later must bring libvmaf's table with it
    // (scripts/libvmaf_option_tables.py); only the fork's extractors, which
    // upstream libvmaf does not have, are without one.
    const FORK_ONLY: [&str; 2] = ["motion_v2", "ssimulacra2"];
    for imp in features::implementations() {
        assert_eq!(
            tables.contains_key(imp.name),
            !FORK_ONLY.contains(&imp.name),
            "{}: tests/data/libvmaf_options.json must have libvmaf's option table for every upstream feature",
            imp.name
        );
    }
}

/// The error `feature` gives for `options`: from its metric list (what a
/// gate checks first) and from the CPU extractor alike.
fn refusal(feature: &str, options: Value) -> String {
    let imp = features::find(feature).unwrap();
    let options: Options = serde_json::from_value(options).unwrap();
    let geometry =
        ulpgate::fixture::Geometry { width: 320, height: 240, bit_depth: 10, chroma: ulpgate::fixture::Chroma::Yuv420 };
    let a = (imp.metrics)(&options).err().map(|e| format!("{e:#}"));
    let b = imp.cpu_extractor(&geometry, &options).err().map(|e| format!("{e:#}"));
    let a = a.unwrap_or_else(|| panic!("{feature} {options:?}: its metrics are listed"));
    let b = b.unwrap_or_else(|| panic!("{feature} {options:?}: the CPU reference takes it"));
    assert_eq!(a, b, "{feature} {options:?}: two messages");
    a
}

/// Every option of every table, outside its range and of a wrong type:
/// refused with the option's name, and for a range, the range. libvmaf's
/// `vmaf_option_set` refuses the same values (-EINVAL: "problem loading
/// feature extractor", naming neither), checked with vmaf 3.2.0 on each of
/// them; a string option given a number has no counterpart there (its
/// values are all strings).
#[test]
fn values_libvmaf_refuses_are_refused_naming_the_option_and_range() {
    let tables = libvmaf_tables();
    let mut refused = 0;
    for (feature, table) in &tables {
        for t in table.as_array().unwrap() {
            let name = t["name"].as_str().unwrap();
            let g = |x: &Value| ulpgate::features::options::format_g(x.as_f64().unwrap());
            if !t["min"].is_null() {
                let (lo, hi) = (t["min"].as_f64().unwrap(), t["max"].as_f64().unwrap());
                let range = format!("[{}, {}]", g(&t["min"]), g(&t["max"]));
                let below = if t["type"] == "int" { json!(lo as i64 - 1) } else { json!(lo - 0.5) };
                let mut outside = vec![below];
                if hi < 1e300 {
                    outside.push(if t["type"] == "int" { json!(hi as i64 + 1) } else { json!(hi + 0.5) });
                }
                for v in outside {
                    let e = refusal(feature, json!({ name: v }));
                    assert!(e.contains(&format!("`{name}`")) && e.contains(&range), "{feature} {name}={v}: {e}");
                    refused += 1;
                }
            }
            let wrong = match t["type"].as_str().unwrap() {
                "bool" => json!(1),
                "string" => json!(2),
                _ => json!("three"),
            };
            let e = refusal(feature, json!({ name: wrong }));
            assert!(e.contains(&format!("`{name}`")), "{feature} {name}={wrong}: {e}");
            refused += 1;
        }
        let e = refusal(feature, json!({"no_such_option": true}));
        assert!(e.contains("has no option `no_such_option`"), "{feature}: {e}");
    }
    assert!(refused > 150, "{refused} refusals checked");
}

/// Options this build takes but whose libvmaf output is no per-frame score:
/// refused when set, with the reason (false or empty, their default, is
/// taken).
#[test]
fn options_without_per_frame_output_are_refused_with_the_reason() {
    let e = refusal("psnr", json!({"enable_apsnr": true}));
    assert!(e.contains("`enable_apsnr`") && e.contains("aggregate_metrics"), "{e}");
    let e = refusal("cambi", json!({"heatmaps_path": "/tmp/h"}));
    assert!(e.contains("heatmaps_path") && e.contains("writes no files"), "{e}");
    for (feature, option) in [("psnr", json!({"enable_apsnr": false})), ("cambi", json!({"heatmaps_path": ""}))] {
        let options: Options = serde_json::from_value(option).unwrap();
        assert!((features::find(feature).unwrap().metrics)(&options).is_ok(), "{feature} {options:?}");
    }
}

/// Every GPU pipeline on Mesa lavapipe (Vulkan) and PoCL (OpenCL) under the
/// options of every recording, on its input, bit for bit with the CPU
/// reference: the kernels' twins of the options libvmaf was held to above.
#[test]
fn gpus_match_the_cpu_under_every_recorded_option() {
    let gpus = common::software_gpus();
    let mut compared = 0;
    for &(folder, _) in FOLDERS {
        for rec in recordings(folder) {
            let imp = features::find(&rec.feature).unwrap();
            let fixture = rec.raw_fixture(Some(rec.frames()));
            let cpu =
                run_extractor(imp.cpu_extractor(&fixture.geometry, &rec.options).unwrap(), &fixture, &|| {}).unwrap();
            for (backend, gpu) in &gpus {
                let what = format!("{} on {backend}", rec.what());
                // Behind a kernel counter: the GPU side ran there.
                let out = common::on_gpu(gpu, fixture.frames(), &what, |gpu| {
                    let ext = imp
                        .gpu_extractor(gpu, &fixture.geometry, &rec.options)
                        .unwrap_or_else(|e| panic!("{what}: {e:#}"));
                    run_extractor(ext, &fixture, &|| {}).unwrap_or_else(|e| panic!("{what}: {e:#}"))
                });
                for (name, want) in cpu.metrics() {
                    let got = out.get(name).unwrap_or_else(|| panic!("{what}: no {name}"));
                    let same = want.len() == got.len() && want.iter().zip(got).all(|(a, b)| a.to_bits() == b.to_bits());
                    assert!(same, "{what} {name}:\n cpu {want:?}\n gpu {got:?}");
                    compared += want.len();
                }
            }
        }
    }
    assert!(compared > 1000, "{compared} values compared");
}
