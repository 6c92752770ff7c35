//! Reports: the JSON model, Markdown rendering, the terminal table and
//! atomic writing.

pub mod model;
pub mod render;
pub mod terminal;
pub mod write;

use crate::gate::{Outcome, Plan};
use model::{GateRef, Report, SCHEMA_VERSION, Summary, Tool};

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
        shard: None,
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
