//! `run --shard K/N`: every cell in exactly one shard, no side computed
//! twice, and the shards merge back into the unsharded report.

use crate::common::*;
use crate::gates;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Runs the sharded gate whole and in `n` shards; returns (whole, shards).
pub fn run_shards(dir: &Path, n: usize) -> (PathBuf, Vec<PathBuf>) {
    let gate = gates::sharded(dir);
    let whole = dir.join("whole.json");
    let o = run(ulpgate().arg("run").arg(&gate).arg("-q").arg("--json-out").arg(&whole));
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let shards = (1..=n)
        .map(|k| {
            let out = dir.join(format!("shard{k}.json"));
            let o = run(ulpgate()
                .arg("run")
                .arg(&gate)
                .args(["-q", "--shard", &format!("{k}/{n}")])
                .arg("--json-out")
                .arg(&out));
            assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
            out
        })
        .collect();
    (whole, shards)
}

fn ids(report: &Value) -> Vec<String> {
    cells(report).iter().map(|c| c["id"].as_str().unwrap().to_string()).collect()
}

fn sides(report: &Value) -> Vec<(String, String, String)> {
    report["timing"]["sides"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let f = |k: &str| s[k].as_str().unwrap().to_string();
            (f("backend"), f("feature"), f("fixture"))
        })
        .collect()
}

#[test]
fn shards_cover_every_cell_once_and_compute_every_side_once() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, shards) = run_shards(dir.path(), 3);
    let whole = read_json(&whole);
    let all: Vec<String> = ids(&whole);
    assert_eq!(all.len(), 36);

    let mut union = Vec::new();
    let mut side_union = Vec::new();
    for (k, path) in shards.iter().enumerate() {
        let r = read_json(path);
        let shard = &r["shard"];
        assert_eq!((shard["index"].as_u64(), shard["count"].as_u64()), (Some(k as u64 + 1), Some(3)));
        assert_eq!(shard["plan_cells"].as_u64(), Some(36));
        assert_eq!(shard["plan_digest"], read_json(&shards[0])["shard"]["plan_digest"], "one plan");
        let mine = ids(&r);
        assert!(!mine.is_empty(), "shard {} is empty", k + 1);
        // Positions name each cell's place in the whole plan.
        let positions: Vec<usize> =
            shard["positions"].as_array().unwrap().iter().map(|p| p.as_u64().unwrap() as usize).collect();
        for (id, p) in mine.iter().zip(&positions) {
            assert_eq!(&all[*p], id);
        }
        union.extend(mine);
        side_union.extend(sides(&r));
    }
    let distinct: BTreeSet<&String> = union.iter().collect();
    assert_eq!(distinct.len(), union.len(), "a cell is in two shards");
    assert_eq!(distinct, all.iter().collect::<BTreeSet<_>>(), "the shards together are the whole plan");

    // Cells that share a side stay together: no side is computed by two
    // shards, and the shards compute exactly the whole run's sides.
    let distinct_sides: BTreeSet<_> = side_union.iter().cloned().collect();
    assert_eq!(distinct_sides.len(), side_union.len(), "a side was computed by two shards: {side_union:?}");
    assert_eq!(distinct_sides, sides(&whole).into_iter().collect());
}

#[test]
fn shards_are_deterministic_and_one_shard_is_the_whole_plan() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gates::sharded(dir.path());
    let ids_of = |spec: &str| {
        let out = dir.path().join(format!("{}.json", spec.replace('/', "of")));
        let o = run(ulpgate().arg("run").arg(&gate).args(["-q", "--shard", spec, "--json-out"]).arg(&out));
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        ids(&read_json(&out))
    };
    assert_eq!(ids_of("2/4"), ids_of("2/4"));
    assert_eq!(ids_of("1/1").len(), 36);
}

#[test]
fn a_bad_shard_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gates::sharded(dir.path());
    for bad in ["0/2", "3/2", "x"] {
        let o = run(ulpgate().arg("run").arg(&gate).args(["--shard", bad]));
        assert_eq!(o.status.code(), Some(2), "--shard {bad}");
        assert!(stderr(&o).contains("is not K/N"), "{}", stderr(&o));
    }
}
