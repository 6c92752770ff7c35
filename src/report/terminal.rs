//! The summary table printed at the end of a run (comfy-table): what needs
//! attention row by row, what passed folded per feature and pair.

use super::model::{Cell as ReportCell, Report, Status};
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, Color, ContentArrangement, Table};

/// FAIL and ERROR cells one row each; OK cells one row per feature and
/// pair (how many fixtures, the worst |Δ| over them); SKIPped cells,
/// usually many for one reason (no GPU here), one line per reason.
pub fn summary_table(report: &Report, color: bool) -> String {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic).set_header(vec![
        "Status",
        "Feature",
        "Pair",
        "Fixture",
        "Max |Δ|",
        "Tolerance",
        "Source",
        "Note",
    ]);
    if !color {
        table.force_no_tty();
    }
    for group in groups(report) {
        let first = group[0];
        let status = Cell::new(first.status.as_str()).fg(match first.status {
            Status::Ok => Color::Green,
            Status::Fail => Color::Red,
            Status::Error => Color::Magenta,
            Status::Skip => Color::Yellow,
        });
        let fixture = if group.len() == 1 { first.fixture.clone() } else { format!("{} fixtures", group.len()) };
        let worst =
            group.iter().filter_map(|c| worst_diff(c)).fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
        table.add_row(vec![
            status,
            Cell::new(&first.feature),
            Cell::new(format!("{} vs {}", first.backend_a, first.backend_b)),
            Cell::new(fixture),
            Cell::new(worst.map_or("—".into(), number)),
            Cell::new(distinct(&group, |c| number(c.tolerance_abs))),
            Cell::new(distinct(&group, |c| c.tolerance_source.clone())),
            Cell::new(&first.note),
        ]);
    }
    let mut skipped: Vec<(String, usize)> = Vec::new();
    for c in report.cells.iter().filter(|c| c.status == Status::Skip) {
        match skipped.iter_mut().find(|(n, _)| *n == c.note) {
            Some((_, count)) => *count += 1,
            None => skipped.push((c.note.clone(), 1)),
        }
    }
    let mut out = if table.row_count() > 0 { format!("{table}\n") } else { String::new() };
    for (note, count) in skipped {
        out.push_str(&format!("SKIP {count} cell{}: {note}\n", if count == 1 { "" } else { "s" }));
    }
    format!("{out}{} ({:.2} s)", verdict_line(report), report.timing.wall_seconds)
}

/// `OK: 112 cells, 80 OK, 0 FAIL, 0 ERROR, 32 SKIP`
pub fn verdict_line(report: &Report) -> String {
    let s = &report.summary;
    format!(
        "{}: {} cells, {} OK, {} FAIL, {} ERROR, {} SKIP",
        report.status.as_str(),
        s.cells,
        s.ok,
        s.fail,
        s.error,
        s.skip
    )
}

/// The rows, in report order: every FAIL or ERROR cell alone; the OK cells
/// of one gate, feature and pair together.
fn groups(report: &Report) -> Vec<Vec<&ReportCell>> {
    let mut out: Vec<Vec<&ReportCell>> = Vec::new();
    for c in report.cells.iter().filter(|c| c.status != Status::Skip) {
        let same = |g: &Vec<&ReportCell>| {
            let f = g[0];
            f.status == Status::Ok
                && c.status == Status::Ok
                && (&f.gate, &f.feature, &f.backend_a, &f.backend_b)
                    == (&c.gate, &c.feature, &c.backend_a, &c.backend_b)
        };
        match out.iter_mut().find(|g| same(g)) {
            Some(g) => g.push(c),
            None => out.push(vec![c]),
        }
    }
    out
}

fn worst_diff(c: &ReportCell) -> Option<f64> {
    c.per_metric_max_abs_diff
        .values()
        .flatten()
        .copied()
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
}

/// A difference or tolerance: `0` when exact, else two significant digits.
fn number(x: f64) -> String {
    if x == 0.0 { "0".into() } else { format!("{x:.1e}") }
}

/// The one value a group shares, or every distinct value.
fn distinct(group: &[&ReportCell], f: impl Fn(&ReportCell) -> String) -> String {
    let mut values: Vec<String> = Vec::new();
    for c in group {
        let v = f(c);
        if !values.contains(&v) {
            values.push(v);
        }
    }
    values.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(number(0.0), "0");
        assert_eq!(number(4.92e-7), "4.9e-7");
        assert_eq!(number(5e-5), "5.0e-5");
    }
}
