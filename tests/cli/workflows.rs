//! The GitHub workflows: every gate they run exists and validates, and the
//! properties the repository relies on hold (the required job's name, the
//! sticky comment's marker, reports uploaded whatever the verdict).

use crate::common::repo;
use serde_yaml::Value;
use std::collections::BTreeSet;

fn workflow(name: &str) -> Value {
    let path = repo().join(".github/workflows").join(name);
    serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every string in a YAML document (keys too).
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Sequence(items) => items.iter().for_each(|i| strings(i, out)),
        Value::Mapping(m) => m.iter().for_each(|(k, v)| {
            strings(k, out);
            strings(v, out);
        }),
        Value::Tagged(t) => strings(&t.value, out),
        _ => {}
    }
}

/// `gates/....yaml` paths mentioned anywhere in `text`.
fn gate_paths(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("gates/") {
        let tail = &rest[i..];
        let len = tail.find(|c: char| !(c.is_ascii_alphanumeric() || "_-./".contains(c))).unwrap_or(tail.len());
        let path = &tail[..len];
        if path.ends_with(".yaml") || path.ends_with(".yml") {
            found.push(path.to_string());
        }
        rest = &tail[len.max(1)..];
    }
    found
}

fn referenced_gates(doc: &Value) -> BTreeSet<String> {
    let mut all = Vec::new();
    strings(doc, &mut all);
    all.iter().flat_map(|s| gate_paths(s)).collect()
}

fn steps<'a>(doc: &'a Value, job: &str) -> &'a Vec<Value> {
    doc["jobs"][job]["steps"].as_sequence().unwrap_or_else(|| panic!("job {job} has steps"))
}

fn runs_of(doc: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for (_, job) in doc["jobs"].as_mapping().unwrap() {
        for step in job["steps"].as_sequence().into_iter().flatten() {
            if let Some(r) = step["run"].as_str() {
                out.push(r.to_string());
            }
        }
    }
    out
}

#[test]
fn every_gate_a_workflow_runs_exists_and_validates() {
    let dir = repo().join(".github/workflows");
    let mut checked = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let doc = workflow(path.file_name().unwrap().to_str().unwrap());
        for gate in referenced_gates(&doc) {
            let file = repo().join(&gate);
            assert!(file.exists(), "{} runs {gate}, which does not exist", path.display());
            if let Err(d) = ulpgate::config::load_gate(&file) {
                panic!("{} runs {gate}, which does not validate:\n{d}", path.display());
            }
            checked.insert(gate);
        }
        // Every `ulpgate run` names a gate, literally or through the matrix.
        for script in runs_of(&doc) {
            for line in script.lines().filter(|l| l.contains("ulpgate run")) {
                assert!(
                    !gate_paths(line).is_empty() || line.contains("\"$GATE\""),
                    "{}: `{line}` runs no named gate",
                    path.display()
                );
            }
        }
    }
    let expected: BTreeSet<String> =
        ["gates/pr-lavapipe.yaml", "gates/nightly-arc.yaml", "gates/nightly-nvidia.yaml"].map(String::from).into();
    assert!(expected.is_subset(&checked), "found {checked:?}, expected at least {expected:?}");
}

#[test]
fn gate_paths_are_found_in_any_text() {
    assert_eq!(gate_paths("ulpgate run gates/a.yaml --x"), ["gates/a.yaml"]);
    assert_eq!(gate_paths(r#"{"gate": "gates/b-c.yml"}"#), ["gates/b-c.yml"]);
    assert!(gate_paths("gates/ and gates/readme.md").is_empty());
}

#[test]
fn the_required_lane_is_stable_and_always_reports() {
    let doc = workflow("parity-gate.yml");
    assert!(doc["on"]["pull_request"].is_null() || doc["on"]["pull_request"].is_mapping(), "runs on pull requests");
    assert!(doc["on"].as_mapping().unwrap().contains_key("pull_request"));
    let job = &doc["jobs"]["parity-gate"];
    assert_eq!(job["name"].as_str(), Some("parity-gate"), "the name branch protection requires");
    assert_eq!(job["if"].as_str(), Some("${{ !cancelled() }}"), "a skipped required job would pass");
    assert_eq!(job["permissions"]["pull-requests"].as_str(), Some("write"));
    assert_eq!(job["runs-on"].as_str(), Some("ubuntu-24.04"));

    // The shards install lavapipe and PoCL, and keep Mesa's shader cache.
    let shard = serde_yaml::to_string(&doc["jobs"]["shard"]).unwrap();
    for pkg in ["mesa-vulkan-drivers", "libvulkan1", "pocl-opencl-icd", "ocl-icd-libopencl1", "MESA_SHADER_CACHE_DIR"] {
        assert!(shard.contains(pkg), "{pkg}");
    }
    // ... and the gate they run holds the CPU to both, required: a runner
    // without either driver ERRORs rather than passing on what it skipped.
    assert!(shard.contains("ulpgate run gates/pr-lavapipe.yaml"), "{shard}");
    let gate: Value =
        serde_yaml::from_str(&std::fs::read_to_string(repo().join("gates/pr-lavapipe.yaml")).unwrap()).unwrap();
    for backend in ["vulkan", "opencl"] {
        assert_eq!(gate["backends"][backend]["required"].as_bool(), Some(true), "{backend}");
        let pair = gate["pairs"].as_sequence().unwrap().iter().any(|p| {
            p.as_sequence()
                .is_some_and(|p| p.len() == 2 && p[0].as_str() == Some("cpu") && p[1].as_str() == Some(backend))
        });
        assert!(pair, "cpu vs {backend}");
    }
    // Reports are uploaded whatever the verdict.
    for job in ["shard", "parity-gate"] {
        let uploads: Vec<&Value> = steps(&doc, job)
            .iter()
            .filter(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("actions/upload-artifact")))
            .collect();
        assert!(!uploads.is_empty(), "{job} uploads its report");
        for u in uploads {
            assert_eq!(u["if"].as_str(), Some("always()"), "{job}: {u:?}");
        }
    }
    // The sticky comment looks for the marker the template writes.
    let comment = steps(&doc, "parity-gate")
        .iter()
        .find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("actions/github-script")))
        .expect("a comment step");
    let script = comment["with"]["script"].as_str().unwrap();
    assert!(script.contains(&format!("'{}'", ulpgate::report::render::MARKER)));
    assert!(script.contains("updateComment") && script.contains("catch"), "edits in place, never fails the job");
    assert!(ulpgate::report::render::PR_COMMENT.contains("{{ marker }}"));
    // ulpgate's Markdown, with the marker, fits GitHub's 65,536 characters;
    // the step's own cut, a safety net, closes every <details> it leaves open.
    const { assert!(ulpgate::report::render::MD_MAX_CHARS + ulpgate::report::render::MARKER.len() < 65_536) };
    assert!(script.contains("const limit = 65536;") && script.contains("'\\n</details>\\n'.repeat("), "{script}");
    // The job ends with the gate's verdict.
    let verdict = steps(&doc, "parity-gate").last().unwrap();
    assert_eq!(verdict["if"].as_str(), Some("always()"));
    assert!(verdict["run"].as_str().unwrap().contains("exit 1") && verdict["run"].as_str().unwrap().contains("exit 2"));
}

#[test]
fn the_nightly_lanes_are_scheduled_self_hosted_and_advisory() {
    let doc = workflow("nightly-gpu.yml");
    let on = doc["on"].as_mapping().unwrap();
    assert!(on.contains_key("schedule") && on.contains_key("workflow_dispatch"));
    assert!(!on.contains_key("pull_request"), "advisory: never a pull-request check");
    assert_eq!(doc["jobs"]["lane"]["continue-on-error"].as_bool(), Some(true));
    let lanes: serde_json::Value = serde_json::from_str(doc["env"]["LANES_JSON"].as_str().unwrap()).unwrap();
    let lanes = lanes.as_array().unwrap();
    for (lane, label) in [("arc", "gpu-intel-arc"), ("nvidia", "gpu-nvidia")] {
        let l = lanes.iter().find(|l| l["lane"] == lane).unwrap_or_else(|| panic!("lane {lane}"));
        let labels: Vec<&str> = l["runs-on"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert!(labels.contains(&"self-hosted") && labels.contains(&label), "{labels:?}");
    }
    let report = &doc["jobs"]["report"];
    assert_eq!(report["permissions"]["issues"].as_str(), Some("write"));
    let script = serde_yaml::to_string(&report["steps"]).unwrap();
    assert!(script.contains("ulpgate-nightly-tracking") && script.contains("createComment"));
    // The issue body is one line and the step summary, which ulpgate keeps
    // within its budget, whole: no cut that could leave a <details> open.
    // The line with the longest run address GitHub allows (owner 39, repo
    // 100 characters, a 20-digit run id) still fits.
    let tracking = steps(&doc, "report")
        .iter()
        .find(|s| s["name"].as_str() == Some("Tracking issue"))
        .and_then(|s| s["with"]["script"].as_str())
        .expect("a tracking-issue step");
    assert!(tracking.contains("readFileSync('nightly/summary.md', 'utf8')\n"), "{tracking}");
    assert!(!tracking.contains(".slice("), "the summary is not cut: {tracking}");
    let line = format!(
        "Nightly GPU parity failed (exit 2) in [this run](https://github.com/{}/{}/actions/runs/{}).\n\n",
        "o".repeat(39),
        "r".repeat(100),
        "9".repeat(20)
    );
    assert!(tracking.contains("`Nightly GPU parity failed (exit ${code}) in [this run](${run}).\\n\\n${summary}`"));
    assert!(ulpgate::report::render::MD_MAX_CHARS + line.len() < 65_536);
}
