//! `--junit-out`: well-formed XML, one test case per cell, the right
//! element per status, names escaped, written with the other outputs.

use crate::common::*;
use crate::gates;

#[test]
fn junit_has_one_testcase_per_cell_with_details() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gates::mixed(dir.path());
    let (json, xml, md) = (dir.path().join("r.json"), dir.path().join("r.xml"), dir.path().join("r.md"));
    let o = run(ulpgate()
        .arg("run")
        .arg(&gate)
        .arg("-q")
        .arg("--json-out")
        .arg(&json)
        .arg("--junit-out")
        .arg(&xml)
        .arg("--md-out")
        .arg(&md));
    assert_eq!(o.status.code(), Some(2), "an ERROR cell: {}", stdout(&o));
    let report = read_json(&json);
    let text = std::fs::read_to_string(&xml).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("well-formed XML");

    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let count = |a: &str| root.attribute(a).unwrap().parse::<usize>().unwrap();
    assert_eq!((count("tests"), count("failures"), count("errors"), count("skipped")), (4, 1, 1, 1));
    let suites: Vec<_> = root.children().filter(|n| n.has_tag_name("testsuite")).collect();
    assert_eq!(suites.len(), 1);
    assert_eq!(suites[0].attribute("name"), Some("mixed"));
    let cases: Vec<_> = suites[0].children().filter(|n| n.has_tag_name("testcase")).collect();
    assert_eq!(cases.len(), cells(&report).len());

    let case = |a: &str, b: &str| {
        let name = format!("{a} vs {b} on {}", gates::ODD_NAME);
        *cases.iter().find(|c| c.attribute("name") == Some(name.as_str())).unwrap_or_else(|| panic!("{name}"))
    };
    // Escaped on the way out, the very name on the way back in.
    assert_eq!(case("cpu", "cpu2").attribute("classname"), Some("mixed/psnr"));
    assert_eq!(case("cpu", "cpu2").children().filter(|n| n.is_element()).count(), 0, "OK: no child");

    let failure = case("golden", "cpu").children().find(|n| n.has_tag_name("failure")).expect("FAIL: <failure>");
    let fail_cell = cell(&report, "golden-vs-cpu");
    assert_eq!(failure.attribute("message"), fail_cell["note"].as_str());
    let body = failure.text().unwrap();
    for needle in ["psnr_y: max |Δ|", "at frame", "beyond tolerance", "tolerance: 1e-300 (", "ULP (f32)"] {
        assert!(body.contains(needle), "`{needle}` in {body}");
    }

    let error = case("cpu", "broken").children().find(|n| n.has_tag_name("error")).expect("ERROR: <error>");
    assert!(error.attribute("message").unwrap().contains("cannot open /dev/dri/renderD128"));
    let skipped = case("cpu", "cuda").children().find(|n| n.has_tag_name("skipped")).expect("SKIP: <skipped>");
    assert!(skipped.attribute("message").unwrap().contains("cuda"));
}

#[test]
fn nothing_is_written_when_one_output_cannot_be() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gates::mixed(dir.path());
    let json = dir.path().join("r.json");
    let o = run(ulpgate()
        .arg("run")
        .arg(&gate)
        .args(["-q", "--backends", "cpu,cpu2", "--json-out"])
        .arg(&json)
        .arg("--junit-out")
        .arg(dir.path().join("no/such/folder/r.xml")));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot write"), "{}", stderr(&o));
    assert!(!json.exists(), "the JSON landed without the JUnit");
}
