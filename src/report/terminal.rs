//! The summary table printed at the end of a run (comfy-table).

use super::model::{Report, Status};
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, Color, ContentArrangement, Table};

/// The cells that ran (or failed to) as a table; SKIPped cells, usually
/// many for one reason (no GPU here), grouped by reason below it.
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
    for c in report.cells.iter().filter(|c| c.status != Status::Skip) {
        let worst = c
            .per_metric_max_abs_diff
            .values()
            .flatten()
            .copied()
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
        let status = Cell::new(c.status.as_str()).fg(match c.status {
            Status::Ok => Color::Green,
            Status::Fail => Color::Red,
            Status::Error => Color::Magenta,
            Status::Skip => Color::Yellow,
        });
        table.add_row(vec![
            status,
            Cell::new(&c.feature),
            Cell::new(format!("{} vs {}", c.backend_a, c.backend_b)),
            Cell::new(&c.fixture),
            Cell::new(worst.map_or("—".into(), |w| format!("{w:.2e}"))),
            Cell::new(format!("{:.0e}", c.tolerance_abs)),
            Cell::new(&c.tolerance_source),
            Cell::new(&c.note),
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
    let s = &report.summary;
    format!(
        "{out}{}: {} cells, {} OK, {} FAIL, {} ERROR, {} SKIP ({:.2} s)",
        report.status.as_str(),
        s.cells,
        s.ok,
        s.fail,
        s.error,
        s.skip,
        report.timing.wall_seconds
    )
}
