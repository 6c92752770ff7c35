//! Under GitHub Actions: an `::error` per FAIL/ERROR cell at its pair's
//! line in the gate, configuration errors at theirs; the Markdown draws
//! FAIL cells as Mermaid charts.

use crate::common::*;
use crate::gates;

fn errors(out: &str) -> Vec<&str> {
    out.lines().filter(|l| l.starts_with("::error")).collect()
}

#[test]
fn fail_and_error_cells_are_annotated_at_their_pair() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gates::mixed(dir.path());
    let o = run(ulpgate().arg("run").arg(&gate).arg("-q").env("GITHUB_ACTIONS", "true"));
    assert_eq!(o.status.code(), Some(2));
    let out = stdout(&o);
    let lines = errors(&out);
    assert_eq!(lines.len(), 2, "one per FAIL/ERROR cell, none for OK/SKIP: {out}");
    let file = gate.display().to_string().replace(':', "%3A").replace(',', "%2C");

    let fail = format!(
        "::error file={file},line={},title=ulpgate FAIL%3A psnr golden vs cpu::",
        line_of(&gate, "- a: golden")
    );
    assert!(lines[0].starts_with(&fail), "{}\nexpected {fail}", lines[0]);
    assert!(lines[0].contains("frames mismatch") && lines[0].contains("tolerance 1e-300"), "{}", lines[0]);
    let error = format!(
        "::error file={file},line={},title=ulpgate ERROR%3A psnr cpu vs broken::",
        line_of(&gate, "- [cpu, broken]")
    );
    assert!(lines[1].starts_with(&error), "{}\nexpected {error}", lines[1]);
    assert!(lines[1].contains("exited with status 3"), "{}", lines[1]);

    // Not under GitHub Actions, or asked not to: none.
    assert!(errors(&stdout(&run(ulpgate().arg("run").arg(&gate).arg("-q")))).is_empty());
    let o = run(ulpgate().arg("run").arg(&gate).args(["-q", "--no-annotations"]).env("GITHUB_ACTIONS", "true"));
    assert!(errors(&stdout(&o)).is_empty());
}

#[test]
fn many_problems_are_capped_with_a_count() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures: String = (0..12)
        .map(|i| format!("  - name: s{i}\n    synthetic: {{width: 16, height: 16, frames: 1, bit_depth: 8, chroma: \"420\", seed: {i}}}\n"))
        .collect();
    let body = format!(
        "features: [psnr]\nbackends:\n  cpu: {{}}\n  down:\n    kind: external\n    command:\n      argv: [/nonexistent/vmaf, \"{{output}}\"]\n      device: {{name: x, arch_id: \"cpu:x\"}}\npairs:\n  - [cpu, down]\nfixtures:\n{fixtures}"
    );
    let gate = gate(dir.path(), "many.yaml", "many", &body);
    let o = run(ulpgate().arg("run").arg(&gate).arg("-q").env("GITHUB_ACTIONS", "true"));
    assert_eq!(o.status.code(), Some(2));
    let out = stdout(&o);
    let lines = errors(&out);
    assert_eq!(lines.len(), 10, "{out}");
    assert!(lines[9].contains("3 more FAIL/ERROR cells are not annotated"), "{}", lines[9]);
}

#[test]
fn configuration_errors_point_at_the_yaml_line() {
    let dir = tempfile::tempdir().unwrap();
    let body = "features: [psnr, psnrr]\nbackends:\n  cpu: {}\n  cpu2: {kind: cpu}\npairs:\n  - [cpu, cpu2]\nfixtures:\n  - name: s\n    synthetic: {width: 16, height: 16, frames: 1, bit_depth: 8, chroma: \"420\"}\n";
    let gate = gate(dir.path(), "typo.yaml", "typo", body);
    for cmd in ["run", "validate"] {
        let o = run(ulpgate().arg(cmd).arg(&gate).env("GITHUB_ACTIONS", "true"));
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        let out = stdout(&o);
        let file = gate.display().to_string().replace(':', "%3A").replace(',', "%2C");
        let expected = format!(
            "::error file={file},line={},col=18,title=ulpgate configuration::features[1]: unknown feature `psnrr`",
            line_of(&gate, "psnrr")
        );
        assert!(errors(&out).iter().any(|l| l.starts_with(&expected)), "{cmd}: {out}\nexpected {expected}");
        assert!(out.contains("did you mean `psnr`?"), "{out}");
        assert!(stderr(&o).contains("unknown feature `psnrr`"), "and for people on stderr");
    }
}

#[test]
fn fail_cells_are_charted_for_github() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gates::mixed(dir.path());
    let md = dir.path().join("r.md");
    let o = run(ulpgate().arg("run").arg(&gate).args(["-q", "--backends", "golden,cpu", "--md-out"]).arg(&md));
    assert_eq!(o.status.code(), Some(1));
    let text = std::fs::read_to_string(&md).unwrap();
    let start = text.find("```mermaid\n").expect("a Mermaid block for the FAIL cell");
    let block = &text[start..start + text[start..].find("\n```\n").expect("closed")];
    assert!(block.contains("\nxychart-beta\n"), "{block}");
    assert!(block.contains("x-axis \"frame\" 0 --> 11"), "12 frames: {block}");
    for l in block.lines().filter(|l| l.trim_start().starts_with("bar [") || l.trim_start().starts_with("line [")) {
        let inner = l.split_once('[').unwrap().1.trim_end_matches(']');
        assert_eq!(inner.split(", ").count(), 12, "{l}");
        assert!(inner.split(", ").all(|n| n.parse::<f64>().is_ok() && !n.contains(['e', 'E', 'N', 'i'])), "{l}");
    }
    // Every table and chart starts a block of its own.
    let lines: Vec<&str> = text.lines().collect();
    for (i, l) in lines.iter().enumerate().skip(1) {
        let opens_table = l.starts_with('|') && !lines[i - 1].starts_with('|');
        if opens_table || l.starts_with("```mermaid") {
            assert_eq!(lines[i - 1], "", "no blank line before line {}: {l}\n{text}", i + 1);
        }
    }
    // The worst frame's values, to the last digit: golden prints 6 decimals.
    let y = lines.iter().find(|l| l.starts_with("| `psnr_y` |")).expect("a psnr_y row");
    let values: Vec<&str> = y.split(" | ").collect();
    assert!(values[5].len() > 12, "cpu's value at full precision: {y}");
    // The fixture's name cannot open HTML or break a table.
    assert!(text.contains("clip &lt;&amp;\"'&gt; x264"), "{text}");
    assert!(!text.contains("<&"));
    assert!(text.starts_with("<!-- ulpgate-report -->"));
}
