//! GitHub Actions annotations: an `::error` workflow command for each FAIL
//! and ERROR cell, pointing at the pair that produced it in the gate YAML.

use super::model::{Cell, Report, Status};
use crate::config::diag::{escape_data, escape_property};
use crate::config::gate::GateFile;
use crate::config::spans::SpanIndex;
use std::collections::HashMap;
use std::path::Path;

/// GitHub shows at most 10 error annotations of a step; past that the last
/// one says how many more there are.
pub const MAX: usize = 10;

/// Whether this process runs under GitHub Actions.
pub fn under_github_actions() -> bool {
    std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true")
}

/// One `::error` line per FAIL/ERROR cell, at most [`MAX`] lines, then a
/// `::warning` line per run-wide warning.
pub fn for_report(report: &Report) -> Vec<String> {
    let problems: Vec<&Cell> =
        report.cells.iter().filter(|c| matches!(c.status, Status::Fail | Status::Error)).collect();
    let mut lines = PairLines::default();
    let shown = if problems.len() > MAX { MAX - 1 } else { problems.len() };
    let mut out: Vec<String> = problems[..shown]
        .iter()
        .map(|c| {
            let file = report.gates.iter().find(|g| g.name == c.gate).map(|g| g.file.as_str());
            let line = file.and_then(|f| lines.line(f, &c.backend_a, &c.backend_b));
            annotation(c, file, line)
        })
        .collect();
    if problems.len() > shown {
        out.push(format!(
            "::error title=ulpgate::{}",
            escape_data(&format!(
                "{} more FAIL/ERROR cells are not annotated; the report (JSON, Markdown, JUnit) lists them all",
                problems.len() - shown
            ))
        ));
    }
    // Run-wide warnings (an --arch-id that contradicts the device, ...).
    out.extend(report.warnings.iter().map(|w| format!("::warning title=ulpgate warning::{}", escape_data(w))));
    out
}

fn annotation(c: &Cell, file: Option<&str>, line: Option<usize>) -> String {
    let mut props = Vec::new();
    if let Some(f) = file {
        props.push(format!("file={}", escape_property(f)));
    }
    if let Some(l) = line {
        props.push(format!("line={l}"));
    }
    let title = format!("ulpgate {}: {} {} vs {}", c.status.as_str(), c.feature, c.backend_a, c.backend_b);
    props.push(format!("title={}", escape_property(&title)));
    let message = format!(
        "{} on {}: {} (tolerance {:e} from {}, {})",
        c.feature, c.fixture, c.note, c.tolerance_abs, c.tolerance_source, c.adr
    );
    format!("::error {}::{}", props.join(","), escape_data(&message))
}

/// The line of each pair in each gate file, read once per file. A file that
/// is gone or no longer parses simply gives no line.
#[derive(Default)]
struct PairLines {
    files: HashMap<String, Option<(GateFile, SpanIndex)>>,
}

impl PairLines {
    fn line(&mut self, file: &str, a: &str, b: &str) -> Option<usize> {
        let (gate, spans) = self
            .files
            .entry(file.to_string())
            .or_insert_with(|| {
                let text = std::fs::read_to_string(Path::new(file)).ok()?;
                let gate: GateFile = serde_yaml::from_str(&text).ok()?;
                Some((gate, SpanIndex::build(&text)))
            })
            .as_ref()?;
        let i = gate.pairs.iter().map(|p| p.spec()).position(|p| p.a == a && p.b == b)?;
        spans.find(&format!("/pairs/{i}")).map(|p| p.line)
    }
}
