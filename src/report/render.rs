//! Markdown through minijinja templates (`templates/`, embedded in the
//! binary; `--template` renders with another file).

use super::grouping;
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

/// The most a rendered report may be, in UTF-16 code units (JavaScript's
/// `String.length`, which the workflow's comment step measures; never fewer
/// than characters). GitHub refuses a comment body over 65,536 characters;
/// 65,000 leaves room for the marker and notice that step may add. A
/// constant, not an option: the limit is GitHub's, and the JSON report and
/// JUnit XML carry every cell whatever the Markdown leaves out.
pub const MD_MAX_CHARS: usize = 65_000;

// The step summary gets the same budget: GitHub takes up to 1 MiB of it per
// step, and a UTF-16 code unit is at most 3 bytes of UTF-8.
const _: () = assert!(MD_MAX_CHARS * 3 < 1 << 20);

/// A minijinja environment with the filters every template may use.
pub(crate) fn environment() -> Environment<'static> {
    environment_with(false)
}

fn environment_with(keep_trailing_newline: bool) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_syntax(
        SyntaxConfig::builder()
            .trim_blocks(true)
            .keep_trailing_newline(keep_trailing_newline)
            .build()
            .expect("valid syntax"),
    );
    env.add_filter("icon", icon);
    env.add_filter("num", num);
    env.add_filter("exact", exact);
    env.add_filter("md", md);
    env.add_filter("worst_diff", worst_diff);
    env.add_filter("raw_worst_diff", raw_worst_diff);
    env.add_filter("chart", chart);
    env.add_filter("offsets_of", offsets_of);
    env.add_filter("plural", |n: usize, noun: String| super::plural(n, &noun));
    env.add_filter("device", device);
    env.add_filter("tolerance", |t: f64| super::tolerance(t));
    env.add_filter("against", |x: Value, t: f64| match f64::try_from(x.clone()) {
        Ok(x) => super::number_against(x, t),
        Err(_) => num(x),
    });
    env
}

/// Renders `report` with `template` (template source text) within
/// [`MD_MAX_CHARS`].
pub fn render(report: &Report, template: &str) -> Result<String> {
    render_within(report, template, MD_MAX_CHARS)
}

/// How much of the report a render shows; [`render_within`] lowers these
/// until the Markdown fits.
#[derive(Debug, Clone, Copy)]
struct Shown {
    /// Rows of the all-cells table (the first ones).
    cells: usize,
    /// Rows of the FAIL/ERROR table (the first ones).
    problem_rows: usize,
    /// Detail blocks left out, in [`drop_order`].
    details_dropped: usize,
    /// Detail blocks that keep their chart (the first ones).
    charts: usize,
}

/// Renders `report` with `template`, in at most `max_chars` UTF-16 code
/// units. What does not fit goes, in this order: rows at the end of the
/// all-cells table (a line says how many), then charts and detail blocks
/// (the least useful first, [`drop_order`]), then rows at the end of the
/// FAIL/ERROR table. The templates are told what they may show (see the
/// context below); a template that shows more anyway is cut at a line,
/// closing what it left open ([`cut`]). Ends with a newline when the
/// template does.
pub fn render_within(report: &Report, template: &str, max_chars: usize) -> Result<String> {
    let mut env = environment_with(true);
    env.add_template("report", template).context("the template does not parse")?;
    let tmpl = env.get_template("report")?;
    let problems: Vec<&Cell> =
        report.cells.iter().filter(|c| matches!(c.status, Status::Fail | Status::Error)).collect();
    let rows = problem_rows(&problems);
    let order = drop_order(&rows);
    // Converted once: every attempt below renders the same values.
    let report_value = Value::from(Serde(report));
    let cell_values: Vec<Value> = report.cells.iter().map(|c| Value::from(Serde(c))).collect();
    let problem_values: Vec<Value> = problems.iter().map(|c| Value::from(Serde(c))).collect();
    let row_values: Vec<Value> = rows.iter().map(|r| Value::from(Serde(r))).collect();
    let devices = Value::from(Serde(devices(report)));
    let calibrated = report.cells.iter().any(|c| c.calibrated.is_some());
    // The rows with a detail block: a row of several ERROR cells has none,
    // its note is the row.
    let with_details: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].grouped.is_none()).collect();
    let attempt = |shown: Shown| -> Result<String> {
        let dropped = &order[..shown.details_dropped];
        let kept = || with_details.iter().copied().filter(|i| !dropped.contains(i));
        let details: Vec<Value> = kept().map(|i| row_values[i].clone()).collect();
        let charted = |range: std::ops::Range<usize>| {
            kept().enumerate().filter(|(k, i)| range.contains(k) && rows[*i].cell.worst_series.is_some()).count()
        };
        let out = tmpl
            .render(context! {
                report => report_value.clone(),
                problems => Value::from(problem_values.clone()),
                devices => devices.clone(),
                marker => MARKER,
                calibrated => calibrated,
                max_chars => max_chars,
                problem_rows => Value::from(row_values[..shown.problem_rows].to_vec()),
                problem_rows_left_out => rows.len() - shown.problem_rows,
                details => Value::from(details),
                details_left_out => shown.details_dropped,
                charts => shown.charts,
                charts_left_out => charted(shown.charts..usize::MAX),
                table_cells => Value::from(cell_values[..shown.cells].to_vec()),
                table_cells_left_out => report.cells.len() - shown.cells,
            })
            .context("rendering the template failed")?;
        Ok(out)
    };
    let fits = |s: &str| md_len(s) <= max_chars;
    let (p, d) = (rows.len(), order.len());
    let mut shown = Shown { cells: report.cells.len(), problem_rows: p, details_dropped: 0, charts: d };
    let mut out = attempt(shown)?;
    if fits(&out) {
        return Ok(out);
    }
    // Each step shrinks one thing as little as fits, or to nothing before
    // the next step starts: output grows with each of them.
    for step in 0..4 {
        let max = match step {
            0 => report.cells.len(),
            3 => p,
            _ => d,
        };
        let at = |k: usize| {
            let mut s = shown;
            match step {
                0 => s.cells = k,
                1 => s.charts = k,
                2 => s.details_dropped = d - k,
                _ => s.problem_rows = k,
            }
            s
        };
        let smallest = attempt(at(0))?;
        if !fits(&smallest) {
            shown = at(0);
            out = smallest;
            continue;
        }
        // The largest k in 0..=max that fits: k = 0 does, k = max did not.
        let (mut lo, mut hi, mut best) = (0, max, smallest);
        while lo + 1 < hi {
            let mid = lo + (hi - lo) / 2;
            let candidate = attempt(at(mid))?;
            if fits(&candidate) {
                (lo, best) = (mid, candidate);
            } else {
                hi = mid;
            }
        }
        return Ok(best);
    }
    Ok(cut(&out, max_chars))
}

/// A row of the FAIL/ERROR table: a FAIL cell alone; ERROR cells that
/// share a note together (a missing driver ERRORs every cell of its
/// backend with one reason), in the place of the first.
#[derive(serde::Serialize)]
struct ProblemRow<'a> {
    /// The row's first cell: a template reads it as a cell.
    #[serde(flatten)]
    cell: &'a Cell,
    /// What the row covers, when it is more than one cell.
    grouped: Option<Grouped>,
}

#[derive(serde::Serialize)]
struct Grouped {
    cells: usize,
    pairs: String,
    features: String,
    fixtures: String,
    /// `cpu vs vulkan; psnr, float_psnr; 5 fixtures`.
    scope: String,
}

fn problem_rows<'a>(problems: &[&'a Cell]) -> Vec<ProblemRow<'a>> {
    let errors = grouping::by_note(problems.iter().copied().filter(|c| c.status == Status::Error));
    problems
        .iter()
        .filter_map(|&c| {
            if c.status != Status::Error {
                return Some(ProblemRow { cell: c, grouped: None });
            }
            let group = errors.iter().find(|g| std::ptr::eq(g[0], c))?;
            let grouped = (group.len() > 1).then(|| Grouped {
                cells: group.len(),
                pairs: grouping::pairs(group),
                features: grouping::features(group),
                fixtures: grouping::fixtures(group),
                scope: grouping::scope(group),
            });
            Some(ProblemRow { cell: c, grouped })
        })
        .collect()
}

/// The order detail blocks are left out in, as indices of `rows`: ERROR
/// cells' first (their note, which is most of the block, is in the
/// FAIL/ERROR table already), then FAIL cells', each from the last up, so
/// the first problems keep theirs. Rows without a block are not in it.
fn drop_order(rows: &[ProblemRow]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..rows.len()).rev().filter(|&i| rows[i].grouped.is_none()).collect();
    order.sort_by_key(|&i| rows[i].cell.status != Status::Error);
    order
}

/// Length as GitHub's comment limit and the workflow count it.
fn md_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// The last resort, for a template that does not heed the budget: `text` up
/// to the last whole line that fits in `max_chars` with what it needs
/// appended — a closing fence for an open code block, a `</details>` for
/// each open one, and a notice — so the HTML stays well formed.
fn cut(text: &str, max_chars: usize) -> String {
    const NOTICE: &str = "\n*… cut here to stay under GitHub's comment size limit: the JSON report has every cell.*\n";
    let closing = |fenced: bool, open: usize| {
        let mut c = String::new();
        if fenced {
            c.push_str("```\n");
        }
        for _ in 0..open {
            c.push_str("\n</details>\n");
        }
        c.push_str(NOTICE);
        c
    };
    let (mut kept, mut used, mut fenced, mut open) = (0, 0, false, 0usize);
    let mut end = closing(false, 0);
    for line in text.split_inclusive('\n') {
        let mut f = fenced;
        if line.trim_start().starts_with("```") {
            f = !f;
        }
        let o = (open + line.matches("<details").count()).saturating_sub(line.matches("</details>").count());
        let tail = closing(f, o);
        if used + md_len(line) + md_len(&tail) > max_chars {
            break;
        }
        (kept, used, fenced, open, end) = (kept + line.len(), used + md_len(line), f, o, tail);
    }
    let mut out = text[..kept].to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&end);
    out
}

/// Each distinct device once, for the footer: those that computed a side of
/// an OK or FAIL cell; an ERROR cell's only for a backend that computed
/// nothing else. SKIP cells computed nothing, and their devices can be a
/// backend's placeholder (`golden` before it read a recording).
fn devices(report: &Report) -> Vec<&DeviceInfo> {
    let mut out: Vec<&DeviceInfo> = Vec::new();
    let sides = |statuses: &'static [Status]| {
        report
            .cells
            .iter()
            .filter(move |c| statuses.contains(&c.status))
            .flat_map(|c| [&c.device_a, &c.device_b])
            .flatten()
    };
    for d in sides(&[Status::Ok, Status::Fail]) {
        if !out.contains(&d) {
            out.push(d);
        }
    }
    let computed: Vec<String> = out.iter().map(|d| d.backend.clone()).collect();
    for d in sides(&[Status::Error]) {
        if !computed.contains(&d.backend) && !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

/// A device for the footer: its name, arch_id and driver, e.g. `llvmpipe
/// (LLVM 15.0.6, 256 bits) (`vulkan:0x10005:0x0000`; llvmpipe Mesa 22.3.6
/// (LLVM 15.0.6), version 0.0.1)`. The version is left out where the
/// driver's name already says it.
fn device(d: Value) -> Result<String, minijinja::Error> {
    let field = |name: &str| -> Result<Option<String>, minijinja::Error> {
        let v = d.get_attr(name)?;
        Ok(if v.is_none() || v.is_undefined() { None } else { Some(v.to_string()) })
    };
    let (name, arch_id) = (field("name")?.unwrap_or_default(), field("arch_id")?.unwrap_or_default());
    let driver = crate::backend::driver_text(field("driver")?.as_deref(), field("driver_version")?.as_deref())
        .map_or(String::new(), |d| format!("; {d}"));
    Ok(format!("{name} (`{arch_id}`{driver})"))
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
        // Counts (frames) as they are.
        _ if v.is_integer() => v.to_string(),
        Ok(x) => super::number(x),
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
/// The largest |Δ| of a cell's metrics, written against its tolerance
/// ([`super::number_against`]).
fn worst_diff(cell: Value) -> String {
    largest(cell.get_attr("per_metric_max_abs_diff").ok(), tolerance_of(&cell))
}

fn tolerance_of(cell: &Value) -> Option<f64> {
    cell.get_attr("tolerance_abs").ok().and_then(|t| f64::try_from(t).ok())
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
    let raw = cell.get_attr("calibrated").ok().and_then(|c| c.get_attr("per_metric_max_abs_diff_raw").ok());
    largest(raw, tolerance_of(&cell))
}

fn largest(per: Option<Value>, tolerance: Option<f64>) -> String {
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
    match (worst, tolerance) {
        (Some(x), Some(t)) => super::number_against(x, t),
        (Some(x), None) => super::number(x),
        (None, _) => "—".into(),
    }
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

    use crate::backend::DeviceInfo;
    use crate::backend::DeviceKind;
    use crate::report::plural;
    use crate::report::samples::{cell, report};

    /// `ok` OK cells, then `fail` FAIL and `error` ERROR cells in turn, each
    /// ERROR for a reason of its own.
    fn mixed(ok: usize, fail: usize, error: usize) -> Report {
        let mut cells: Vec<Cell> = (0..ok).map(|i| cell(i, "psnr", Status::Ok, "")).collect();
        for i in 0..fail.max(error) {
            if i < fail {
                cells.push(cell(ok + 2 * i, "vif", Status::Fail, "vif_y: 1 of 12 frames mismatch"));
            }
            if i < error {
                cells.push(cell(ok + 2 * i + 1, "adm", Status::Error, &format!("a kernel failed to build ({i})")));
            }
        }
        report(cells)
    }

    /// What every comment must be, cut or not: within the budget, every
    /// `<details>` closed after it opened, code fences paired, one final
    /// newline.
    fn assert_well_formed(md: &str, max: usize) {
        assert!(md_len(md) <= max, "{} > {max}", md_len(md));
        let mut depth = 0usize;
        for line in md.lines() {
            depth += line.matches("<details").count();
            let closes = line.matches("</details>").count();
            assert!(closes <= depth, "a </details> before its <details>: {line}");
            depth -= closes;
        }
        assert_eq!(depth, 0, "unclosed <details>:\n{md}");
        assert_eq!(md.lines().filter(|l| l.trim_start().starts_with("```")).count() % 2, 0, "unclosed fence:\n{md}");
        assert!(md.ends_with('\n') && !md.ends_with("\n\n"), "one final newline");
    }

    #[test]
    fn warnings_share_one_alert_and_a_pass_that_compared_nothing_says_so() {
        let mut r = report(vec![cell(0, "psnr", Status::Skip, "cuda unavailable (optional)")]);
        r.warnings = vec!["first".into(), "second".into()];
        let md = render(&r, PR_COMMENT).unwrap();
        assert!(md.contains("> [!WARNING]\n> first<br>\n> second\n"), "{md}");
        assert!(md.contains("Nothing was compared: every cell SKIPped"), "{md}");
        let ok = render(&mixed(1, 0, 0), PR_COMMENT).unwrap();
        assert!(!ok.contains("Nothing was compared"), "{ok}");
    }

    #[test]
    fn problems_come_first_and_a_report_that_fits_is_whole() {
        let r = mixed(3, 1, 1);
        let md = render(&r, PR_COMMENT).unwrap();
        assert_well_formed(&md, MD_MAX_CHARS);
        let at = |needle: &str| md.find(needle).unwrap_or_else(|| panic!("`{needle}` in {md}"));
        assert!(at("| ❌ FAIL | `vif`") < at("<summary>❌ <b>vif</b>"));
        assert!(at("<summary>⛔ <b>adm</b>") < at("<summary>All 5 cells</summary>"));
        assert!(md.contains("```mermaid"));
        assert!(!md.contains("left out"), "{md}");
        assert!(md.contains("5 cells: **3 OK**, 1 FAIL, 1 ERROR, 0 SKIP"));
    }

    #[test]
    fn counts_agree_with_their_nouns() {
        let md = render(&report(vec![cell(0, "psnr", Status::Ok, "")]), PR_COMMENT).unwrap();
        assert!(md.contains("1 cell: **1 OK**") && md.contains("<summary>All 1 cell</summary>"), "{md}");
    }

    #[test]
    fn the_all_cells_table_loses_rows_first() {
        let r = mixed(600, 5, 2);
        let whole = render_within(&r, PR_COMMENT, usize::MAX).unwrap();
        let max = md_len(&whole) - 2_000;
        let md = render_within(&r, PR_COMMENT, max).unwrap();
        assert_well_formed(&md, max);
        assert_eq!(md.matches("```mermaid").count(), 5, "every chart kept");
        assert_eq!(md.matches("<summary>⛔").count(), 2, "every detail kept");
        // The table is a prefix of the cells: OK ones, here.
        let shown = md.lines().filter(|l| l.starts_with("| ✅ OK |")).count();
        assert!((500..600).contains(&shown), "{shown}");
        assert!(md.contains(&format!("<summary>All 607 cells (the first {shown} here)</summary>")), "{md}");
        assert!(md.contains(&format!("*… and {} more rows (see the note at the top).*", 607 - shown)), "{md}");
        assert!(md.contains(&format!(
            "> Left out to stay under GitHub's comment size limit: {} rows of the table",
            607 - shown
        )));
        // As much as fits: one row more would not.
        assert!(md_len(&md) + 80 > max);
    }

    /// Whatever the budget: the table goes before any chart, charts before
    /// details, ERROR details before FAIL ones, every detail before any
    /// FAIL/ERROR row; and what is left out is said.
    #[test]
    fn what_goes_when_the_budget_shrinks() {
        let r = mixed(40, 8, 4);
        let whole = render_within(&r, PR_COMMENT, usize::MAX).unwrap();
        let mut budget = md_len(&whole);
        let mut seen_cut = false;
        while budget > 400 {
            let md = render_within(&r, PR_COMMENT, budget).unwrap();
            assert_well_formed(&md, budget);
            let table = md.contains("<summary>All 52 cells");
            let charts = md.matches("```mermaid").count();
            let (fails, errors) = (md.matches("<summary>❌").count(), md.matches("<summary>⛔").count());
            let rows = if table {
                12
            } else {
                md.lines().filter(|l| l.starts_with("| ❌") || l.starts_with("| ⛔")).count()
            };
            // Below some budget even the lines that say so are cut.
            let cut_short = md.contains("cut here");
            if charts < 8 {
                assert!(!table, "charts go after the table, at {budget}");
                assert!(cut_short || md.contains("The table of all 52 cells is left out"), "{md}");
                if fails == 8 {
                    let left_out = plural(8 - charts, "per-frame chart");
                    assert!(md.contains(&format!(" {left_out} of the details shown")), "{md}");
                }
            }
            if fails + errors < 12 {
                assert_eq!(charts, 0, "details go after the charts, at {budget}");
                let more = plural(12 - fails - errors, "more cell");
                let said = fails + errors == 0 || md.contains(&format!("*… and the details of {more} (see"));
                assert!(cut_short || said, "{md}");
            }
            if fails < 8 {
                assert_eq!(errors, 0, "FAIL details go after the ERROR ones, at {budget}");
            }
            if rows < 12 {
                assert_eq!(fails + errors, 0, "rows go after the details, at {budget}");
                let said = if rows == 0 {
                    "*The table of 12 FAIL/ERROR cells is left out".to_string()
                } else {
                    format!("*… and {} more FAIL/ERROR row", 12 - rows)
                };
                assert!(cut_short || md.contains(&said), "{md}");
            }
            let whole = table && !md.contains("more rows (see") && charts == 8 && fails + errors == 12;
            assert!(md.contains("> Left out to stay under") != whole || cut_short, "{md}");
            seen_cut |= cut_short;
            budget = budget * 9 / 10;
        }
        assert!(seen_cut, "the smallest budgets cut even the header");
    }

    #[test]
    fn a_template_that_ignores_the_budget_is_cut_at_a_line_and_closed() {
        let r = mixed(100, 0, 0);
        let t = "<details><summary>every cell</summary>\n\n```\n{% for c in report.cells %}{{ c.id }}\n{% endfor %}```\n\n</details>\n";
        let md = render_within(&r, t, 600).unwrap();
        assert_well_formed(&md, 600);
        assert!(md.starts_with("<details><summary>every cell</summary>\n\n```\ng/psnr/cpu-vs-vulkan/clip_0\n"), "{md}");
        assert!(md.ends_with("the JSON report has every cell.*\n"), "{md}");
        // Lines are whole.
        assert!(md.lines().filter(|l| l.starts_with("g/")).all(|l| l.split('_').nth(1).is_some_and(|n| !n.is_empty())));
    }

    #[test]
    fn the_footer_names_each_device_once() {
        let mut ok = cell(0, "psnr", Status::Ok, "");
        let mut skipped = cell(1, "cambi", Status::Skip, "cambi does not take 200x184");
        ok.backend_a = "golden".into();
        ok.device_a =
            Some(DeviceInfo::named("golden", DeviceKind::Recorded, "libvmaf 3.2.0", "recorded:libvmaf 3.2.0"));
        skipped.backend_a = "golden".into();
        // A backend's placeholder, before it read a recording.
        skipped.device_a = Some(DeviceInfo::named("golden", DeviceKind::Recorded, "recorded scores", "recorded"));
        let both = cell(2, "psnr", Status::Ok, "");
        let md = render(&report(vec![ok, skipped, both]), PR_COMMENT).unwrap();
        let footer = md.lines().last().unwrap();
        assert_eq!(
            footer,
            format!(
                "<sub>Devices: vulkan = Some GPU (`vulkan:0x1234:0x0001`); cpu = Some CPU (`cpu:x86_64`). \
                 Recorded scores: golden = libvmaf 3.2.0. ulpgate {}.</sub>",
                env!("CARGO_PKG_VERSION")
            )
        );
        // The driver by name, its version where the name does not say it.
        let mut lavapipe = DeviceInfo::named("vulkan", DeviceKind::Gpu, "llvmpipe", "vulkan:0x10005:0x0000");
        lavapipe.driver = Some("llvmpipe Mesa 22.3.6 (LLVM 15.0.6)".into());
        lavapipe.driver_version = Some("0.0.1".into());
        let mut nvidia = DeviceInfo::named("opencl", DeviceKind::Gpu, "NVIDIA H200", "opencl:0x10de:580.95.05");
        nvidia.driver = Some("NVIDIA CUDA 580.95.05".into());
        nvidia.driver_version = Some("580.95.05".into());
        let mut one = cell(0, "psnr", Status::Ok, "");
        one.backend_b = "opencl".into();
        (one.device_a, one.device_b) = (Some(lavapipe), Some(nvidia));
        let md = render(&report(vec![one]), PR_COMMENT).unwrap();
        assert!(
            md.contains(
                "Devices: vulkan = llvmpipe (`vulkan:0x10005:0x0000`; llvmpipe Mesa 22.3.6 (LLVM 15.0.6), version \
                 0.0.1); opencl = NVIDIA H200 (`opencl:0x10de:580.95.05`; NVIDIA CUDA 580.95.05)."
            ),
            "{md}"
        );
        // An empty shard.
        let md = render(&report(Vec::new()), PR_COMMENT).unwrap();
        assert!(md.ends_with(&format!("<sub>No device ran. ulpgate {}.</sub>\n", env!("CARGO_PKG_VERSION"))), "{md}");
        assert!(md.contains("0 cells: **0 OK**"), "{md}");
    }

    /// A missing driver ERRORs every cell of its backend with one reason:
    /// one row says it, with what it covers, and no detail block repeats
    /// it; ERROR cells with a reason of their own keep theirs.
    #[test]
    fn error_cells_that_share_a_note_are_one_row() {
        const LOADER: &str = "vulkan unavailable: no loader";
        let mut cells = vec![cell(0, "psnr", Status::Ok, "")];
        for (i, feature) in ["psnr", "psnr", "float_psnr", "adm", "vif"].into_iter().enumerate() {
            cells.push(cell(i + 1, feature, Status::Error, LOADER));
        }
        cells.push(cell(6, "ssim", Status::Error, "a kernel failed to build"));
        cells.push(cell(7, "vif", Status::Fail, "vif_y: 1 of 12 frames mismatch"));
        let r = report(cells);
        let md = render(&r, PR_COMMENT).unwrap();
        assert_well_formed(&md, MD_MAX_CHARS);
        // The FAIL/ERROR table, before the table of all cells.
        let problems = &md[..md.find("<summary>All 8 cells").unwrap()];
        let rows: Vec<&str> = problems.lines().filter(|l| l.starts_with("| ❌") || l.starts_with("| ⛔")).collect();
        assert_eq!(
            rows,
            [
                format!("| ⛔ ERROR (5) | 4 features | cpu vs vulkan | 5 fixtures | — | — | {LOADER} |"),
                "| ⛔ ERROR | `ssim` | cpu vs vulkan | clip_6 | — | 1e-5 | a kernel failed to build |".into(),
                "| ❌ FAIL | `vif` | cpu vs vulkan | clip_7 | 3e-5 | 1e-5 | vif_y: 1 of 12 frames mismatch |".into(),
            ],
            "{md}"
        );
        assert_eq!(md.matches(LOADER).count(), 1, "{md}");
        assert_eq!(md.matches("<summary>⛔").count(), 1, "{md}");
        assert!(md.contains("<summary>⛔ <b>ssim</b>") && md.contains("<summary>❌ <b>vif</b>"), "{md}");
        let summary = render(&r, STEP_SUMMARY).unwrap();
        assert!(
            summary.contains(&format!("| ⛔ | 5 cells (cpu vs vulkan; 4 features; 5 fixtures) | {LOADER} |")),
            "{summary}"
        );
        assert_eq!(summary.matches(LOADER).count(), 1, "{summary}");
    }

    #[test]
    fn the_step_summary_keeps_to_the_budget_too() {
        let r = mixed(0, 300, 300);
        let md = render_within(&r, STEP_SUMMARY, 20_000).unwrap();
        assert_well_formed(&md, 20_000);
        let rows = md.lines().filter(|l| l.starts_with("| ❌ |") || l.starts_with("| ⛔ |")).count();
        assert!(rows > 100 && md.contains(&format!("*… and {} more FAIL/ERROR rows, left out", 600 - rows)), "{md}");
    }
}
