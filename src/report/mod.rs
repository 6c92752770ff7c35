//! Reports: the JSON model, Markdown rendering, JUnit XML, GitHub
//! annotations, merging shard reports, the terminal table and atomic
//! writing.

pub mod annotations;
pub mod junit;
pub mod merge;
pub mod model;
pub mod render;
pub mod terminal;
pub mod write;

use crate::gate::{Outcome, Plan};
use anyhow::{Context, bail};
use model::{GateRef, READABLE_VERSIONS, Report, SCHEMA_VERSION, Summary, Tool};
use std::path::Path;

/// Builds the report of a run.
pub fn build(plan: &Plan, outcome: Outcome) -> Report {
    let summary = Summary::of(&outcome.cells);
    let (status, exit_code) = summary.verdict();
    Report {
        schema_version: SCHEMA_VERSION,
        tool: Tool::this(),
        gates: plan
            .gates
            .iter()
            .map(|g| GateRef {
                name: g.name.clone(),
                file: g.file.display().to_string(),
                registry: g.registry_file.display().to_string(),
                calibration: g.calibration.as_ref().map(|(p, _)| p.display().to_string()),
            })
            .collect(),
        status,
        exit_code,
        summary,
        shard: plan.shard.clone(),
        cells: outcome.cells,
        warnings: outcome.warnings,
        timing: outcome.timing,
    }
}

/// The report as pretty JSON with a trailing newline.
pub fn to_json(report: &Report) -> String {
    let mut s = serde_json::to_string_pretty(report).expect("reports serialize");
    s.push('\n');
    s
}

/// Reads a JSON report written by `run` or `merge`, saying clearly what is
/// wrong with a file that is not one.
pub fn read(path: &Path) -> anyhow::Result<Report> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let doc: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not a ulpgate report: not JSON", path.display()))?;
    match doc.get("schema_version").and_then(serde_json::Value::as_u64) {
        Some(v) if READABLE_VERSIONS.iter().any(|&r| u64::from(r) == v) => {}
        Some(v) => bail!(
            "{} is a report of schema_version {v}; this ulpgate reads schema_version {}",
            path.display(),
            READABLE_VERSIONS.map(|r| r.to_string()).join(" and ")
        ),
        None => bail!("{} is not a ulpgate report: no schema_version", path.display()),
    }
    serde_json::from_value(doc).with_context(|| format!("{} is not a ulpgate report", path.display()))
}
