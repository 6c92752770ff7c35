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

/// A minijinja environment with the filters every template may use.
pub(crate) fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_syntax(SyntaxConfig::builder().trim_blocks(true).build().expect("valid syntax"));
    env.add_filter("icon", icon);
    env.add_filter("num", num);
    env.add_filter("exact", exact);
    env.add_filter("md", md);
    env.add_filter("worst_diff", worst_diff);
    env.add_filter("raw_worst_diff", raw_worst_diff);
    env.add_filter("chart", chart);
    env.add_filter("offsets_of", offsets_of);
    env
}

/// Renders `report` with `template` (template source text).
pub fn render(report: &Report, template: &str) -> Result<String> {
    let mut env = environment();
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
    let calibrated = report.cells.iter().any(|c| c.calibrated.is_some());
    let out = tmpl
        .render(context! {
            report => Serde(report),
            problems => Serde(problems),
            devices => Serde(devices),
            marker => MARKER,
            calibrated => calibrated,
        })
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

/// A value as it was computed (the shortest text that reads back as the
/// same double), so two sides that differ in the 7th decimal look different.
fn exact(v: Value) -> String {
    match f64::try_from(v.clone()) {
        Ok(x) => format!("{x}"),
        Err(_) if v.is_none() || v.is_undefined() => "—".into(),
        Err(_) => v.to_string(),
    }
}

/// Text safe inside a Markdown table cell or paragraph: no HTML, no
/// column break, one line.
fn md(s: String) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('|', "\\|").replace('\n', "<br>")
}

/// The largest max |Δ| over a cell's metrics.
fn worst_diff(cell: Value) -> String {
    largest(cell.get_attr("per_metric_max_abs_diff").ok())
}

/// The offsets a `--gpu-calibrated` cell added for `metric`, per GPU side:
/// `vulkan +1.2e-7 (offset)`, or `none` when no side had one.
fn offsets_of(cell: Value, metric: String) -> String {
    let Ok(per_backend) = cell.get_attr("calibrated").and_then(|c| c.get_attr("offsets")) else {
        return "—".into();
    };
    let Ok(backends) = per_backend.try_iter() else {
        return "—".into();
    };
    let mut parts = Vec::new();
    for backend in backends {
        let Some(applied) =
            per_backend.get_item(&backend).ok().and_then(|m| m.get_item(&Value::from(metric.as_str())).ok())
        else {
            continue;
        };
        if applied.is_undefined() || applied.is_none() {
            continue;
        }
        let offset = applied.get_attr("offset").ok().and_then(|v| f64::try_from(v).ok());
        let decision = applied.get_attr("decision").map(|d| d.to_string()).unwrap_or_default();
        match offset {
            Some(0.0) => parts.push(format!("{backend} 0 ({decision})")),
            Some(o) => parts.push(format!("{backend} {o:+.2e} ({decision})")),
            None => {}
        }
    }
    if parts.is_empty() { "none".into() } else { parts.join("; ") }
}

/// The largest raw (uncalibrated) max |Δ| of a `--gpu-calibrated` cell.
fn raw_worst_diff(cell: Value) -> String {
    largest(cell.get_attr("calibrated").ok().and_then(|c| c.get_attr("per_metric_max_abs_diff_raw").ok()))
}

fn largest(per: Option<Value>) -> String {
    let Some(per) = per.filter(|p| !p.is_none() && !p.is_undefined()) else {
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

/// Most bars a chart draws; longer series are bucketed (max per bucket).
const CHART_POINTS: usize = 60;

/// A Mermaid xychart of the worst metric's per-frame |Δ| (bars) against
/// the tolerance (line), which GitHub renders. Long series are reduced to
/// at most [`CHART_POINTS`] bars, each the maximum of its bucket, so spikes
/// stay visible; non-finite frames are drawn full height.
///
/// Mermaid's xychart reads plain decimals only (`[+-]?(\d+(\.\d+)?|\.\d+)`,
/// no exponent), so values are scaled by a power of 1000 named in the
/// y-axis title.
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
        .and_then(|v| v.try_iter().ok().map(|it| it.map(|x| f64::try_from(x).ok().filter(|x| x.is_finite())).collect()))
        .unwrap_or_default();
    mermaid_chart(&metric, &values, tol)
}

fn mermaid_chart(metric: &str, values: &[Option<f64>], tol: f64) -> String {
    if values.is_empty() {
        return String::new();
    }
    let bucket = values.len().div_ceil(CHART_POINTS);
    // None: the bucket holds a non-finite frame.
    let points: Vec<Option<f64>> =
        values.chunks(bucket).map(|c| c.iter().try_fold(0.0f64, |m, v| v.map(|x| m.max(x)))).collect();
    let finite_max = points.iter().flatten().copied().fold(0.0f64, f64::max);
    let top = {
        let t = finite_max.max(tol) * 1.1;
        if t > 0.0 { t } else { 1.0 }
    };
    // Engineering scale: the axis top lands in [1, 1000).
    let exponent = (top.log10().floor() as i32).div_euclid(3) * 3;
    let scale = 10f64.powi(-exponent);
    let fmt = |x: f64| {
        let s = format!("{:.4}", x * scale);
        let s = s.trim_end_matches('0').trim_end_matches('.');
        if s.is_empty() || s == "-" { "0".to_string() } else { s.to_string() }
    };
    let unit = if exponent == 0 { String::new() } else { format!(" (×1e{exponent})") };
    let non_finite = points.iter().filter(|p| p.is_none()).count();
    let note = if non_finite > 0 { ", non-finite frames full height" } else { "" };
    let (xlabel, xmax) = if bucket == 1 {
        ("frame".to_string(), values.len() - 1)
    } else {
        (format!("frame (bar = max of {bucket})"), (points.len() - 1) * bucket)
    };
    let bars: Vec<String> = points.iter().map(|p| fmt(p.unwrap_or(top))).collect();
    let line: Vec<String> = points.iter().map(|_| fmt(tol)).collect();
    format!(
        "```mermaid\n%%{{init: {{\"xyChart\": {{\"width\": 720, \"height\": 240}}}}}}%%\nxychart-beta\n    title \"{}: per-frame |Δ| (bars) vs tolerance (line){note}\"\n    x-axis \"{xlabel}\" 0 --> {xmax}\n    y-axis \"|Δ|{unit}\" 0 --> {}\n    bar [{}]\n    line [{}]\n```",
        metric.replace('"', "'"),
        fmt(top),
        bars.join(", "),
        line.join(", "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mermaid's xychart number token (packages/mermaid/src/diagrams/
    /// xychart/parser/xychart.jison): no exponent, no NaN.
    fn is_mermaid_number(s: &str) -> bool {
        let s = s.strip_prefix(['+', '-']).unwrap_or(s);
        let (int, frac) = match s.split_once('.') {
            Some((i, f)) => (i, Some(f)),
            None => (s, None),
        };
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        match frac {
            None => digits(int),
            Some(f) => digits(f) && (int.is_empty() || digits(int)),
        }
    }

    fn data(line: &str, key: &str) -> Vec<String> {
        let inner = line.trim().strip_prefix(key).unwrap().trim().trim_start_matches('[').trim_end_matches(']');
        inner.split(", ").map(str::to_string).collect()
    }

    /// Checks what GitHub's Mermaid would choke on; returns (bars, line, ymax).
    fn check(chart: &str) -> (Vec<f64>, Vec<f64>, f64) {
        let lines: Vec<&str> = chart.lines().collect();
        assert_eq!(lines.first(), Some(&"```mermaid"));
        assert_eq!(lines.last(), Some(&"```"));
        assert_eq!(lines[2], "xychart-beta");
        assert!(lines[3].trim().starts_with("title \"") && lines[3].ends_with('"'), "{}", lines[3]);
        let range = |l: &str| -> Vec<String> {
            let after = l.rsplit_once('"').unwrap().1.trim();
            after.split(" --> ").map(str::to_string).collect()
        };
        let (x, y) = (range(lines[4]), range(lines[5]));
        assert!(lines[4].trim().starts_with("x-axis \"") && lines[5].trim().starts_with("y-axis \""));
        for n in x.iter().chain(&y) {
            assert!(is_mermaid_number(n), "axis bound `{n}`");
        }
        let (bars, line) = (data(lines[6], "bar"), data(lines[7], "line"));
        assert_eq!(bars.len(), line.len());
        assert!(bars.len() <= CHART_POINTS);
        for n in bars.iter().chain(&line) {
            assert!(is_mermaid_number(n), "data value `{n}` in {chart}");
        }
        let parse = |v: &[String]| v.iter().map(|s| s.parse::<f64>().unwrap()).collect::<Vec<_>>();
        (parse(&bars), parse(&line), y[1].parse().unwrap())
    }

    #[test]
    fn charts_use_numbers_mermaid_reads() {
        assert!(is_mermaid_number("1.25") && is_mermaid_number(".5") && is_mermaid_number("12"));
        assert!(!is_mermaid_number("1.2e-6") && !is_mermaid_number("NaN") && !is_mermaid_number("1."));
        let series = [Some(1e-7), Some(2.5e-6), Some(0.0), Some(6e-5)];
        let chart = mermaid_chart("psnr_y", &series, 5e-5);
        let (bars, line, ymax) = check(&chart);
        // Scaled by 1e-6: the title of the axis says so.
        assert!(chart.contains("y-axis \"|Δ| (×1e-6)\" 0 --> 66"), "{chart}");
        assert_eq!(bars, vec![0.1, 2.5, 0.0, 60.0]);
        assert_eq!(line, vec![50.0; 4]);
        assert!(ymax >= 60.0);
        assert!(chart.contains("x-axis \"frame\" 0 --> 3"));
    }

    #[test]
    fn long_series_are_bucketed_by_max_and_non_finite_frames_stand_out() {
        let mut series = vec![Some(1e-3); 125];
        series[70] = Some(9e-3);
        series[124] = None;
        let chart = mermaid_chart("m", &series, 5e-3);
        let (bars, _, ymax) = check(&chart);
        assert_eq!(bars.len(), 42); // buckets of 3
        assert_eq!(bars[23], 9.0); // frame 70 is in bucket 23
        assert_eq!(bars[41], ymax); // the non-finite frame, full height
        assert!(chart.contains("x-axis \"frame (bar = max of 3)\" 0 --> 123"), "{chart}");
        assert!(chart.contains("non-finite frames full height"));
    }

    #[test]
    fn one_frame_and_large_values() {
        let (bars, _, _) = check(&mermaid_chart("m", &[Some(12.5)], 5e-5));
        assert_eq!(bars, vec![12.5]);
        assert_eq!(mermaid_chart("m", &[], 1.0), "");
    }
}
