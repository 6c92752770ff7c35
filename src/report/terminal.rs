//! The summary printed at the end of a run: a comfy-table of what FAILed
//! row by row and what passed folded per feature and pair, then ERROR and
//! SKIP cells one line per reason (often many cells for one: no Vulkan
//! loader, no GPU), then the verdict. `--quiet` keeps only why cells FAILed
//! or ERRORed, and the verdict.

use super::grouping::{self, distinct, scope};
use super::model::{Cell as ReportCell, Report, Status};
use super::{number_against, plural, tolerance};
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, Color, ContentArrangement, Table};

/// FAIL cells one row each; OK cells one row per feature and pair (how
/// many fixtures, the worst |Δ| over them); SKIP and ERROR cells one line
/// per reason ([`by_note`]).
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
        let fixture = if group.len() == 1 { first.fixture.clone() } else { plural(group.len(), "fixture") };
        table.add_row(vec![
            status,
            Cell::new(&first.feature),
            Cell::new(format!("{} vs {}", first.backend_a, first.backend_b)),
            Cell::new(fixture),
            Cell::new(worst_of(&group).map_or("—".into(), |w| {
                // Against the group's smallest tolerance: the one an OK
                // group's worst comes nearest.
                number_against(w, group.iter().map(|c| c.tolerance_abs).fold(f64::INFINITY, f64::min))
            })),
            Cell::new(distinct(&group, |c| tolerance(c.tolerance_abs)).join(", ")),
            Cell::new(distinct(&group, |c| c.tolerance_source.clone()).join(", ")),
            Cell::new(&first.note),
        ]);
    }
    let mut out = if table.row_count() > 0 { format!("{table}\n") } else { String::new() };
    for line in by_note(report, Status::Skip).into_iter().chain(by_note(report, Status::Error)) {
        out.push_str(&line);
        out.push('\n');
    }
    format!("{out}{} ({:.2} s)", verdict_line(report), report.timing.wall_seconds)
}

/// What `--quiet` prints, so a CI log still says why: FAIL cells one line
/// per gate, feature and pair ([`fail_lines`]), ERROR cells one line per
/// reason, then the verdict line.
pub fn quiet_summary(report: &Report) -> String {
    let mut out = String::new();
    for line in fail_lines(report).into_iter().chain(by_note(report, Status::Error)) {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(&verdict_line(report));
    out
}

/// `OK: 112 cells, 80 OK, 0 FAIL, 0 ERROR, 32 SKIP`
pub fn verdict_line(report: &Report) -> String {
    let s = &report.summary;
    // A pass that compared nothing (every backend optional and absent) says
    // so on the line a CI log shows.
    let nothing =
        if s.skip > 0 && s.ok + s.fail + s.error == 0 { " (nothing compared: every cell SKIPped)" } else { "" };
    format!(
        "{}: {}, {} OK, {} FAIL, {} ERROR, {} SKIP{nothing}",
        report.status.as_str(),
        plural(s.cells, "cell"),
        s.ok,
        s.fail,
        s.error,
        s.skip
    )
}

/// The cells of `status` grouped by their note, in order of first
/// appearance: `ERROR 10 cells (cpu vs vulkan; psnr, float_psnr; 5
/// fixtures): <note>`. The note is printed once however many cells share it.
fn by_note(report: &Report, status: Status) -> Vec<String> {
    grouping::by_note(report.cells.iter().filter(|c| c.status == status))
        .iter()
        .map(|g| format!("{} {} ({}): {}", status.as_str(), plural(g.len(), "cell"), scope(g), g[0].note))
        .collect()
}

/// FAIL cells, one line per gate, feature and pair, with the note of the
/// cell whose |Δ| is worst: `FAIL 2 cells (golden vs cpu; psnr; 2
/// fixtures), the worst on <fixture>: psnr_y: 1 of 12 frames mismatch ...`.
fn fail_lines(report: &Report) -> Vec<String> {
    let mut groups: Vec<Vec<&ReportCell>> = Vec::new();
    for c in report.cells.iter().filter(|c| c.status == Status::Fail) {
        let key = |x: &ReportCell| (x.gate.clone(), x.feature.clone(), x.backend_a.clone(), x.backend_b.clone());
        match groups.iter_mut().find(|g| key(g[0]) == key(c)) {
            Some(g) => g.push(c),
            None => groups.push(vec![c]),
        }
    }
    groups
        .iter()
        .map(|g| {
            // A cell with no finite |Δ| (every frame non-finite) ranks first.
            let worst = g
                .iter()
                .max_by(|a, b| {
                    let rank = |c: &ReportCell| worst_diff(c).unwrap_or(f64::INFINITY);
                    rank(a).total_cmp(&rank(b))
                })
                .copied()
                .unwrap_or(g[0]);
            let place = if g.len() == 1 { String::new() } else { format!(", the worst on {}", worst.fixture) };
            format!("FAIL {} ({}){place}: {}", plural(g.len(), "cell"), scope(g), worst.note)
        })
        .collect()
}

/// The table's rows, in report order: every FAIL cell alone; the OK cells
/// of one gate, feature and pair together.
fn groups(report: &Report) -> Vec<Vec<&ReportCell>> {
    let mut out: Vec<Vec<&ReportCell>> = Vec::new();
    for c in report.cells.iter().filter(|c| matches!(c.status, Status::Ok | Status::Fail)) {
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

/// The largest |Δ| over a group's cells.
fn worst_of(group: &[&ReportCell]) -> Option<f64> {
    group.iter().filter_map(|c| worst_diff(c)).fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
}

fn worst_diff(c: &ReportCell) -> Option<f64> {
    c.per_metric_max_abs_diff
        .values()
        .flatten()
        .copied()
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::report::samples::{cell, report};

    const LOADER: &str = "vulkan unavailable: vkCreateInstance failed with ERROR_INCOMPATIBLE_DRIVER";

    fn broken() -> Report {
        let mut cells = vec![cell(0, "psnr", Status::Ok, "")];
        for (i, feature) in ["psnr", "psnr", "float_psnr", "ciede"].into_iter().enumerate() {
            cells.push(cell(i + 1, feature, Status::Error, LOADER));
        }
        cells.push(cell(5, "ssim", Status::Error, "a kernel failed to build"));
        cells.push(cell(6, "vif", Status::Fail, "vif_y: 1 of 12 frames mismatch (worst |Δ| 3e-5 at frame 5)"));
        let mut worse = cell(7, "vif", Status::Fail, "vif_y: 2 of 12 frames mismatch");
        worse.per_metric_max_abs_diff.insert("vif_y".into(), Some(4e-5));
        cells.push(worse);
        cells.push(cell(8, "cambi", Status::Skip, "cambi does not take 8x8 input"));
        report(cells)
    }

    #[test]
    fn error_cells_that_share_a_reason_are_one_line() {
        let out = summary_table(&broken(), false);
        assert_eq!(out.matches(LOADER).count(), 1, "{out}");
        assert!(
            out.contains(&format!("ERROR 4 cells (cpu vs vulkan; psnr, float_psnr, ciede; 4 fixtures): {LOADER}\n")),
            "{out}"
        );
        assert!(out.contains("ERROR 1 cell (cpu vs vulkan; ssim; clip_5): a kernel failed to build\n"), "{out}");
        assert!(out.contains("SKIP 1 cell (cpu vs vulkan; cambi; clip_8): cambi does not take 8x8 input\n"), "{out}");
        // The table holds what passed and what FAILed, nothing else.
        let rows: Vec<&str> = out.lines().filter(|l| l.starts_with('│')).skip(1).collect();
        assert_eq!(rows.len(), 3, "{out}");
        assert!(rows.iter().all(|r| r.contains("OK") || r.contains("FAIL")), "{out}");
        assert!(out.ends_with("ERROR: 9 cells, 1 OK, 2 FAIL, 5 ERROR, 1 SKIP (0.00 s)"), "{out}");
    }

    #[test]
    fn quiet_still_says_why() {
        let out = quiet_summary(&broken());
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            [
                "FAIL 2 cells (cpu vs vulkan; vif; 2 fixtures), the worst on clip_7: vif_y: 2 of 12 frames mismatch",
                &format!("ERROR 4 cells (cpu vs vulkan; psnr, float_psnr, ciede; 4 fixtures): {LOADER}"),
                "ERROR 1 cell (cpu vs vulkan; ssim; clip_5): a kernel failed to build",
                "ERROR: 9 cells, 1 OK, 2 FAIL, 5 ERROR, 1 SKIP",
            ]
        );
        let one = report(vec![cell(0, "psnr", Status::Ok, "")]);
        assert_eq!(quiet_summary(&one), "OK: 1 cell, 1 OK, 0 FAIL, 0 ERROR, 0 SKIP");
        let skipped = report(vec![cell(0, "psnr", Status::Skip, "vulkan unavailable (optional)")]);
        assert_eq!(
            quiet_summary(&skipped),
            "OK: 1 cell, 0 OK, 0 FAIL, 0 ERROR, 1 SKIP (nothing compared: every cell SKIPped)"
        );
    }
}
