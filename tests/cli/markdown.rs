//! The Markdown report and the terminal summary end to end: GitHub's
//! comment size limit, problems before the table of every cell, and what
//! `--quiet` still says.

use crate::common::*;
use crate::gates;
use serde_json::Value;

/// GitHub refuses a comment body over 65,536 characters; ulpgate keeps to
/// 65,000 (`render::MD_MAX_CHARS`), counted as JavaScript counts them.
fn github_length(s: &str) -> usize {
    s.encode_utf16().count()
}

/// The mixed gate's report with its cells copied until it has `copies` of
/// each (a fixture of its own per copy, and an ERROR note too with
/// `own_notes`), the summary recounted.
fn blown_up(report: &Value, copies: usize, own_notes: bool) -> Value {
    let mut big = report.clone();
    let mut cells = Vec::new();
    for k in 0..copies {
        for c in cells_of(report) {
            let mut c = c.clone();
            let fixture = format!("{} #{k}", c["fixture"].as_str().unwrap());
            c["id"] = format!("{} #{k}", c["id"].as_str().unwrap()).into();
            c["fixture"] = fixture.into();
            if own_notes && c["status"] == "ERROR" {
                c["note"] = format!("{} #{k}", c["note"].as_str().unwrap()).into();
            }
            cells.push(c);
        }
    }
    let count = |s: &str| cells.iter().filter(|c| c["status"] == s).count();
    big["summary"] = serde_json::json!({
        "cells": cells.len(), "ok": count("OK"), "fail": count("FAIL"), "error": count("ERROR"), "skip": count("SKIP"),
    });
    big["cells"] = cells.into();
    big
}

fn cells_of(report: &Value) -> &Vec<Value> {
    report["cells"].as_array().unwrap()
}

#[test]
fn the_pr_comment_keeps_to_githubs_limit_with_the_problems_first() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gates::mixed(dir.path());
    let (json, md) = (dir.path().join("r.json"), dir.path().join("r.md"));
    let o = run(ulpgate().arg("run").arg(&gate).arg("-q").arg("--json-out").arg(&json).arg("--md-out").arg(&md));
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let small = std::fs::read_to_string(&md).unwrap();
    assert!(small.ends_with("</sub>\n"), "one final newline: {small}");
    assert!(!small.contains("Left out"), "it fits whole: {small}");

    // 40 FAIL, 40 ERROR (each for a reason of its own), 80 other cells:
    // more than twice the limit.
    let big = dir.path().join("big.json");
    std::fs::write(&big, serde_json::to_string(&blown_up(&read_json(&json), 40, true)).unwrap()).unwrap();
    let o = run(ulpgate().arg("render").arg(&big));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(github_length(&text) <= 65_000, "{}", github_length(&text));
    assert!(text.starts_with("<!-- ulpgate-report -->\n") && text.ends_with("</sub>\n"));
    assert_eq!(text.matches("<details").count(), text.matches("</details>").count(), "every <details> closed");
    assert_eq!(text.lines().filter(|l| l.starts_with("```")).count() % 2, 0, "every fence closed");
    assert!(text.contains("> Left out to stay under GitHub's comment size limit: "), "{text}");
    assert!(text.contains("The JSON report (in CI, the run's artifacts) has every cell."));
    // Every FAIL/ERROR row and FAIL detail; some ERROR details (mostly
    // their row's note, so they go first); no table of every cell.
    assert_eq!(text.lines().filter(|l| l.starts_with("| ❌ FAIL |") || l.starts_with("| ⛔ ERROR |")).count(), 80);
    let first_fail = text.find("<summary>❌ <b>psnr</b>").expect("a FAIL detail");
    let errors = text.matches("<summary>⛔").count();
    assert_eq!(text.matches("<summary>❌").count(), 40, "{text}");
    assert!(errors < 40 && text.contains(&format!("the details of {} FAIL/ERROR cells", 40 - errors)), "{text}");
    assert!(text.contains("The table of all 160 cells is left out"), "{text}");
    assert!(first_fail < 40_000, "{first_fail}");

    // The step summary keeps to the same budget.
    std::fs::write(&big, serde_json::to_string(&blown_up(&read_json(&json), 300, true)).unwrap()).unwrap();
    let o = run(ulpgate().arg("render").arg(&big).args(["--builtin", "step-summary"]));
    let summary = stdout(&o);
    assert!(github_length(&summary) <= 65_000 && summary.ends_with('\n'));
    assert!(summary.contains("more FAIL/ERROR rows, left out to stay under GitHub's size limit"), "{summary}");

    // 40 ERROR cells for one reason are one row.
    std::fs::write(&big, serde_json::to_string(&blown_up(&read_json(&json), 40, false)).unwrap()).unwrap();
    let text = stdout(&run(ulpgate().arg("render").arg(&big)));
    let problems = &text[..text.find("<details").expect("detail blocks")];
    let errors: Vec<&str> = problems.lines().filter(|l| l.starts_with("| ⛔ ERROR")).collect();
    assert_eq!(errors.len(), 1, "{problems}");
    assert!(errors[0].starts_with("| ⛔ ERROR (40) |"), "{problems}");
    assert_eq!(problems.lines().filter(|l| l.starts_with("| ❌ FAIL |")).count(), 40, "{problems}");
}

#[test]
fn quiet_says_why_cells_failed_or_errored() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gates::mixed(dir.path());
    let o = run(ulpgate().arg("run").arg(&gate).args(["-q", "--no-annotations"]));
    assert_eq!(o.status.code(), Some(2));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    let odd = gates::ODD_NAME;
    assert!(
        lines[0].starts_with(&format!("FAIL 1 cell (golden vs cpu; psnr; {odd}): psnr_y: 12 of 12 frames")),
        "{out}"
    );
    assert!(lines[1].starts_with(&format!("ERROR 1 cell (cpu vs broken; psnr; {odd}): broken: `sh` exited")), "{out}");
    assert!(lines[1].contains("cannot open /dev/dri/renderD128"), "{out}");
    assert_eq!(lines[2], "ERROR: 4 cells, 1 OK, 1 FAIL, 1 ERROR, 1 SKIP");

    // Without --quiet, the ERROR is a line of its own under the table, not
    // a table row.
    let o = run(ulpgate().arg("run").arg(&gate));
    let out = stdout(&o);
    assert_eq!(out.matches("cannot open /dev/dri/renderD128").count(), 1, "{out}");
    assert!(out.contains(&format!("\nERROR 1 cell (cpu vs broken; psnr; {odd}): broken:")), "{out}");
    assert!(out.contains(&format!("\nSKIP 1 cell (cpu vs cuda; psnr; {odd}): cuda")), "{out}");
}
