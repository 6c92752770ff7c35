//! `merge`: shards back into the unsharded report; refusals leave nothing
//! behind and exit 2.

use crate::common::*;
use crate::gates;
use crate::shard::run_shards;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn without_timing(mut v: Value) -> Value {
    let o = v.as_object_mut().unwrap();
    o.remove("timing");
    o.remove("shard");
    v
}

/// `merge` with every output into `out`; returns its output.
fn merge(inputs: &[&Path], out: &Path) -> std::process::Output {
    run(ulpgate()
        .arg("merge")
        .args(inputs)
        .arg("-q")
        .arg("--json-out")
        .arg(out.join("m.json"))
        .arg("--md-out")
        .arg(out.join("m.md"))
        .arg("--junit-out")
        .arg(out.join("m.xml")))
}

#[test]
fn merged_shards_equal_the_unsharded_run() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, shards) = run_shards(dir.path(), 3);
    let out = tempfile::tempdir().unwrap();
    // Any order: cells come back in plan order.
    let o = merge(&[&shards[2], &shards[0], &shards[1]], out.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let merged = read_json(&out.path().join("m.json"));
    assert!(merged.get("shard").is_none());
    assert_eq!(without_timing(merged), without_timing(read_json(&whole)));

    // The Markdown has no timing in it: byte for byte the whole run's.
    let md = render(&whole);
    assert_eq!(std::fs::read_to_string(out.path().join("m.md")).unwrap(), md);
}

fn render(report: &Path) -> String {
    let o = run(ulpgate().arg("render").arg(report));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    stdout(&o)
}

/// Every refusal: exit 2, the reason on stderr, and no output file (nor a
/// temporary one) left in the output folder.
fn refused(inputs: &[&Path], reason: &str) {
    let out = tempfile::tempdir().unwrap();
    let o = merge(inputs, out.path());
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains(reason), "expected `{reason}` in: {}", stderr(&o));
    assert_eq!(extra_files(out.path(), &[]), Vec::<PathBuf>::new(), "merge wrote something");
}

#[test]
fn merge_refuses_what_would_hide_or_double_a_cell() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, s) = run_shards(dir.path(), 3);
    refused(&[&s[0], &s[1]], "incomplete: shard(s) 3/3");
    refused(&[&s[0], &s[1], &s[2], &s[1]], "duplicate cell");
    refused(&[&whole, &whole], "duplicate cell");
    refused(&[&whole, &s[0], &s[1], &s[2]], "duplicate cell");

    // A tool version of its own.
    let other = dir.path().join("other-version.json");
    let mut v = read_json(&s[1]);
    v["tool"]["version"] = "9.9.9".into();
    std::fs::write(&other, serde_json::to_string(&v).unwrap()).unwrap();
    refused(&[&s[0], &other, &s[2]], "mismatched tool versions");

    // Shards of another plan of the same gate (other filters).
    let gate = dir.path().join("sharded.yaml");
    let narrow = dir.path().join("narrow.json");
    let o = run(ulpgate()
        .arg("run")
        .arg(&gate)
        .args(["-q", "--features", "psnr,float_psnr", "--shard", "3/3", "--json-out"])
        .arg(&narrow));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    refused(&[&s[0], &s[1], &narrow], "shards of different plans");

    // The same gate, run whole twice with disjoint filters.
    let (p, f) = (dir.path().join("p.json"), dir.path().join("f.json"));
    for (feature, out) in [("psnr", &p), ("float_psnr", &f)] {
        let o = run(ulpgate().arg("run").arg(&gate).args(["-q", "--features", feature, "--json-out"]).arg(out));
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    refused(&[&p, &f], "mismatched reports");

    // The same gate name from another file.
    let copy = dir.path().join("copy");
    std::fs::create_dir(&copy).unwrap();
    let moved = gates::sharded(&copy);
    let elsewhere = dir.path().join("elsewhere.json");
    let o =
        run(ulpgate().arg("run").arg(&moved).args(["-q", "--features", "float_moment", "--json-out"]).arg(&elsewhere));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    refused(&[&p, &elsewhere], "mismatched gates");
}

#[test]
fn merge_refuses_files_that_are_not_reports() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    refused(&[&missing], "cannot read");
    let cases = [
        ("text.json", "not json at all", "not JSON"),
        ("empty.json", "{}", "no schema_version"),
        ("future.json", r#"{"schema_version": 99}"#, "schema_version 99"),
        ("partial.json", r#"{"schema_version": 1, "cells": []}"#, "is not a ulpgate report"),
        // A field of the wrong type is found at its line and column.
        ("typed.json", "{\"schema_version\": 1,\n  \"tool\": true}", "invalid type: boolean `true`"),
        ("typed.json", "{\"schema_version\": 1,\n  \"tool\": true}", "at line 2 column 14"),
    ];
    for (name, text, reason) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        refused(&[&path], reason);
    }
}

#[test]
fn reports_of_different_gates_merge_and_the_worst_verdict_wins() {
    let dir = tempfile::tempdir().unwrap();
    let (ok_gate, mixed) = (gates::sharded(dir.path()), gates::mixed(dir.path()));
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    let o = run(ulpgate().arg("run").arg(&ok_gate).args(["-q", "--features", "psnr", "--json-out"]).arg(&a));
    assert_eq!(o.status.code(), Some(0));
    // Without the failing external command: FAIL is the worst there.
    let o = run(ulpgate().arg("run").arg(&mixed).args(["-q", "--backends", "golden,cpu,cpu2", "--json-out"]).arg(&b));
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let out = tempfile::tempdir().unwrap();
    let o = merge(&[&a, &b], out.path());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let m = read_json(&out.path().join("m.json"));
    let names: Vec<&str> = m["gates"].as_array().unwrap().iter().map(|g| g["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["sharded", "mixed"]);
    let (ra, rb) = (read_json(&a), read_json(&b));
    assert_eq!(cells(&m).len(), cells(&ra).len() + cells(&rb).len());
    assert_eq!(m["status"], "FAIL");
    assert_eq!(m["summary"]["fail"], rb["summary"]["fail"]);
}
