//! Reports: the JSON model, Markdown rendering, JUnit XML, GitHub
//! annotations, merging shard reports, the terminal table and atomic
//! writing.

pub mod annotations;
pub mod grouping;
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

/// `1 cell`, `2 cells`: a count and its noun, plural unless one (the
/// nouns reports count take an `s`).
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// A difference or tolerance as every report writes it (terminal, PR
/// comment, JUnit, a cell's note): `0` when exact; below 1e-3 and from 1e5
/// up, three significant digits with trailing zeros dropped (`4.92e-7`,
/// `5e-5`, `1.7e-13`); otherwise six decimals, trailing zeros dropped
/// (`0.0312`). The JSON report keeps every value whole.
pub fn number(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    if !x.is_finite() {
        return x.to_string();
    }
    let trim = |s: &str| -> String {
        if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s.to_string() }
    };
    if x.abs() < 1e-3 || x.abs() >= 1e5 {
        let s = format!("{x:.2e}");
        match s.split_once('e') {
            Some((mantissa, exponent)) => format!("{}e{exponent}", trim(mantissa)),
            None => s,
        }
    } else {
        trim(&format!("{x:.6}"))
    }
}

/// A tolerance as every report writes it: as [`number`] where that is the
/// tolerance exactly (`5e-5`, `0.005`), else every digit it has
/// (`1.2345e-5`): a tolerance is the gate author's, to the digit.
pub fn tolerance(t: f64) -> String {
    let short = number(t);
    if short.parse::<f64>().ok() == Some(t) { short } else { format!("{t:e}") }
}

/// A difference as [`number`] writes it, with more digits where fewer would
/// compare with `tolerance` otherwise than the difference does (4.9004e-7
/// against 4.9e-7 is not `4.9e-7`): a FAIL always reads above its
/// tolerance, an OK never does.
pub fn number_against(x: f64, tolerance: f64) -> String {
    let mut text = number(x);
    if !x.is_finite() || !tolerance.is_finite() {
        return text;
    }
    let mut digits = 2;
    while digits < 17 && text.parse::<f64>().ok().and_then(|p| p.partial_cmp(&tolerance)) != x.partial_cmp(&tolerance) {
        digits += 1;
        let s = format!("{x:.digits$e}");
        text = match s.split_once('e') {
            Some((mantissa, exponent)) => {
                format!("{}e{exponent}", mantissa.trim_end_matches('0').trim_end_matches('.'))
            }
            None => s,
        };
    }
    text
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
    // From the text, not `doc`: serde_json then says at which line and
    // column a field has the wrong type.
    drop(doc);
    serde_json::from_str(&text).with_context(|| format!("{} is not a ulpgate report", path.display()))
}

/// Made-up reports for the renderers' tests.
#[cfg(test)]
pub(crate) mod samples {
    use super::model::{Cell, MetricDiff, Report, Series, Status, Summary, Timing, Tool};
    use crate::backend::{DeviceInfo, DeviceKind};
    use std::collections::BTreeMap;

    /// Cell `i` of feature `feature`, `cpu vs vulkan` on fixture `clip_<i>`;
    /// a FAIL cell has a metric 3e-5 off on frame 5 of 12, and a chart.
    pub fn cell(i: usize, feature: &str, status: Status, note: &str) -> Cell {
        let (a, b) = ("cpu", "vulkan");
        let fixture = format!("clip_{i}");
        let failed = status == Status::Fail;
        let ran = matches!(status, Status::Ok | Status::Fail);
        let diff = if failed { 3e-5 } else { 0.0 };
        let metric = format!("{feature}_y");
        let per_metric = BTreeMap::from([(
            metric.clone(),
            MetricDiff {
                max_abs_diff: Some(diff),
                mismatches: usize::from(failed),
                worst_frame: Some(5),
                worst_a: Some(30.0),
                worst_b: Some(30.0 + diff),
                max_ulp_f32: Some(if failed { 16 } else { 0 }),
                ..MetricDiff::default()
            },
        )]);
        Cell {
            id: format!("g/{feature}/{a}-vs-{b}/{fixture}"),
            gate: "g".into(),
            feature: feature.into(),
            backend_a: a.into(),
            backend_b: b.into(),
            fixture,
            status,
            note: note.into(),
            tolerance_abs: 1e-5,
            tolerance_source: "default".into(),
            adr: "ADR-0000".into(),
            precision: Default::default(),
            n_frames: ran.then_some(12),
            metrics: vec![metric.clone()],
            per_metric_max_abs_diff: if ran {
                per_metric.iter().map(|(k, v)| (k.clone(), v.max_abs_diff)).collect()
            } else {
                BTreeMap::new()
            },
            per_metric_mismatches: if ran {
                per_metric.iter().map(|(k, v)| (k.clone(), v.mismatches)).collect()
            } else {
                BTreeMap::new()
            },
            per_metric: if ran { per_metric } else { BTreeMap::new() },
            device_a: Some(DeviceInfo::named(a, DeviceKind::Cpu, "Some CPU", "cpu:x86_64")),
            device_b: ran.then(|| DeviceInfo::named(b, DeviceKind::Gpu, "Some GPU", "vulkan:0x1234:0x0001")),
            arch_overrides: Vec::new(),
            worst_series: failed.then(|| Series {
                metric,
                abs_diff: (0..12).map(|f| Some(if f == 5 { 3e-5 } else { 1e-7 })).collect(),
            }),
            calibrated: None,
        }
    }

    pub fn report(cells: Vec<Cell>) -> Report {
        let summary = Summary::of(&cells);
        let (status, exit_code) = summary.verdict();
        Report {
            schema_version: super::model::SCHEMA_VERSION,
            tool: Tool::this(),
            gates: Vec::new(),
            status,
            exit_code,
            summary,
            shard: None,
            cells,
            warnings: Vec::new(),
            timing: Timing::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_agree_with_their_nouns() {
        assert_eq!(plural(0, "cell"), "0 cells");
        assert_eq!(plural(1, "cell"), "1 cell");
        assert_eq!(plural(2, "more FAIL/ERROR cell"), "2 more FAIL/ERROR cells");
    }

    #[test]
    fn numbers_are_written_one_way() {
        use super::number;
        for (x, text) in [
            (0.0, "0"),
            (4.92e-7, "4.92e-7"),
            (5e-5, "5e-5"),
            (1.7053025658242404e-13, "1.71e-13"),
            (-3.0001e-5, "-3e-5"),
            (0.0312, "0.0312"),
            (0.5, "0.5"),
            (12.0, "12"),
            (123456.0, "1.23e5"),
            (f64::NAN, "NaN"),
        ] {
            assert_eq!(number(x), text, "{x}");
        }
    }

    /// A difference never reads as on the other side of its tolerance than
    /// it is, and a tolerance reads as given.
    #[test]
    fn differences_keep_their_side_of_the_tolerance() {
        use super::{number_against, tolerance};
        assert_eq!(number_against(4.91e-7, 4.9e-7), "4.91e-7");
        assert_eq!(number_against(4.9004e-7, 4.9e-7), "4.9004e-7");
        assert_eq!(number_against(4.99996e-5, 5e-5), "4.99996e-5");
        assert_eq!(number_against(5e-5, 5e-5), "5e-5");
        assert_eq!(number_against(0.0, 5e-5), "0");
        assert_eq!(number_against(2.5e-6, 5e-5), "2.5e-6");
        assert_eq!(tolerance(5e-5), "5e-5");
        assert_eq!(tolerance(0.005), "0.005");
        assert_eq!(tolerance(1.2345e-5), "1.2345e-5");
    }
}
