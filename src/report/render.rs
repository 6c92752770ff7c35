//! Markdown through minijinja templates (`templates/`, embedded in the
//! binary; `--template` renders with another file).

use super::model::{Cell, Report, Status};
use crate::backend::DeviceInfo;
use anyhow::{Context, Result};
use minijinja::syntax::SyntaxConfig;
use minijinja::value::Serde;
use minijinja::{Environment, Value, context};

pub const PR_COMMENT: &str = include_str!("../../templates/pr-comment.md.j2");
pub const STEP_SUMMARY: &str = include_str!("../../templates/step-summary.md.j2");

/// The hidden marker a sticky PR comment is found by.
pub const MARKER: &str = "<!-- ulpgate-report -->";

/// Renders `report` with `template` (template source text).
pub fn render(report: &Report, template: &str) -> Result<String> {
    let mut env = Environment::new();
    env.set_syntax(SyntaxConfig::builder().trim_blocks(true).build().expect("valid syntax"));
    env.add_filter("icon", icon);
    env.add_filter("num", num);
    env.add_filter("md", md);
    env.add_filter("worst_diff", worst_diff);
    env.add_filter("chart", chart);
    env.add_template("report", template).context("the template does not parse")?;
    let problems: Vec<&Cell> =
        report.cells.iter().filter(|c| matches!(c.status, Status::Fail | Status::Error)).collect();
    let mut devices: Vec<&DeviceInfo> = Vec::new();
    for d in report.cells.iter().flat_map(|c| [&c.device_a, &c.device_b]).flatten() {
        if !devices.iter().any(|x| x.backend == d.backend && x.arch_id == d.arch_id && x.name == d.name) {
            devices.push(d);
        }
    }
    let tmpl = env.get_template("report")?;
    let out = tmpl
        .render(context! { report => Serde(report), problems => Serde(problems), devices => Serde(devices), marker => MARKER })
        .context("rendering the template failed")?;
    Ok(out)
}

fn icon(status: String) -> &'static str {
    match status.as_str() {
        "OK" => "✅",
        "FAIL" => "❌",
        "ERROR" => "⛔",
        "SKIP" => "⏭️",
        _ => "❔",
    }
}

/// A number for tables: `—` for none, engineering notation when small.
fn num(v: Value) -> String {
    match f64::try_from(v.clone()) {
        Ok(0.0) => "0".into(),
        Ok(x) if x.abs() < 1e-3 || x.abs() >= 1e5 => format!("{x:.2e}"),
        Ok(x) => format!("{x:.6}").trim_end_matches('0').trim_end_matches('.').to_string(),
        Err(_) if v.is_none() || v.is_undefined() => "—".into(),
        Err(_) => v.to_string(),
    }
}

/// Text safe inside a Markdown table cell.
fn md(s: String) -> String {
    s.replace('|', "\\|").replace('\n', "<br>")
}

/// The largest max |Δ| over a cell's metrics.
fn worst_diff(cell: Value) -> String {
    let Ok(per) = cell.get_attr("per_metric_max_abs_diff") else {
        return "—".into();
    };
    let Ok(iter) = per.try_iter() else {
        return "—".into();
    };
    let worst = iter
        .filter_map(|k| per.get_item(&k).ok())
        .filter_map(|v| f64::try_from(v).ok())
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    worst.map_or_else(|| "—".into(), |x| num(Value::from(x)))
}

/// A Mermaid xychart of the worst metric's per-frame |Δ| against the
/// tolerance, which GitHub renders. Long series are reduced to at most 60
/// points (the maximum of each bucket), so spikes stay visible.
fn chart(cell: Value) -> String {
    let series = cell.get_attr("worst_series").ok();
    let tol = cell.get_attr("tolerance_abs").ok().and_then(|v| f64::try_from(v).ok()).unwrap_or(0.0);
    let Some(series) = series.filter(|s| !s.is_none()) else {
        return String::new();
    };
    let metric = series.get_attr("metric").map(|m| m.to_string()).unwrap_or_default();
    let values: Vec<Option<f64>> = series
        .get_attr("abs_diff")
        .ok()
        .and_then(|v| v.try_iter().ok().map(|it| it.map(|x| f64::try_from(x).ok()).collect()))
        .unwrap_or_default();
    if values.is_empty() {
        return String::new();
    }
    let bucket = values.len().div_ceil(60);
    let points: Vec<f64> = values
        .chunks(bucket)
        .map(|c| c.iter().map(|v| v.unwrap_or(f64::NAN)).fold(0.0f64, |m, x| if x.is_nan() { m } else { m.max(x) }))
        .collect();
    let fmt = |x: f64| format!("{x:.3e}");
    let xlabel = if bucket == 1 { "frame".to_string() } else { format!("frame / {bucket}") };
    let top = points.iter().copied().fold(tol, f64::max) * 1.1;
    format!(
        "```mermaid\nxychart-beta\n    title \"{metric}: per-frame |Δ| (bars) vs tolerance (line)\"\n    x-axis \"{xlabel}\" 0 --> {}\n    y-axis \"|Δ|\" 0 --> {}\n    bar [{}]\n    line [{}]\n```",
        points.len().saturating_sub(1),
        fmt(top),
        points.iter().map(|&x| fmt(x)).collect::<Vec<_>>().join(", "),
        points.iter().map(|_| fmt(tol)).collect::<Vec<_>>().join(", "),
    )
}
