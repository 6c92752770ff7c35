//! Cells taken together where one line says it for all of them: the
//! terminal summary and the PR comment both print a reason shared by many
//! cells (no Vulkan loader, no GPU) once, with the scope it covers.

use super::model::Cell;
use super::plural;

/// `cells` grouped by their note, in order of first appearance.
pub fn by_note<'a>(cells: impl Iterator<Item = &'a Cell>) -> Vec<Vec<&'a Cell>> {
    let mut groups: Vec<Vec<&Cell>> = Vec::new();
    for c in cells {
        match groups.iter_mut().find(|g| g[0].note == c.note) {
            Some(g) => g.push(c),
            None => groups.push(vec![c]),
        }
    }
    groups
}

/// The pairs a group covers (`cpu vs vulkan`), listed when at most two,
/// counted when more.
pub fn pairs(group: &[&Cell]) -> String {
    listed_or_counted(distinct(group, |c| format!("{} vs {}", c.backend_a, c.backend_b)), 2, "pair")
}

/// The features a group covers, listed when at most three, counted when
/// more.
pub fn features(group: &[&Cell]) -> String {
    listed_or_counted(distinct(group, |c| c.feature.clone()), 3, "feature")
}

/// The fixture of a one-fixture group by name, else how many.
pub fn fixtures(group: &[&Cell]) -> String {
    listed_or_counted(distinct(group, |c| c.fixture.clone()), 1, "fixture")
}

/// What a group of cells covers: `cpu vs vulkan; psnr, float_psnr; 5
/// fixtures`.
pub fn scope(group: &[&Cell]) -> String {
    format!("{}; {}; {}", pairs(group), features(group), fixtures(group))
}

fn listed_or_counted(values: Vec<String>, most: usize, noun: &str) -> String {
    if values.len() <= most { values.join(", ") } else { plural(values.len(), noun) }
}

/// Each distinct value over a group, in order.
pub fn distinct(group: &[&Cell], f: impl Fn(&Cell) -> String) -> Vec<String> {
    let mut values: Vec<String> = Vec::new();
    for c in group {
        let v = f(c);
        if !values.contains(&v) {
            values.push(v);
        }
    }
    values
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::Status;
    use crate::report::samples::cell;

    #[test]
    fn long_lists_are_counted() {
        let cells: Vec<Cell> =
            ["a", "b", "c", "d"].iter().enumerate().map(|(i, f)| cell(i, f, Status::Skip, "x")).collect();
        let group: Vec<&Cell> = cells.iter().collect();
        assert_eq!(scope(&group), "cpu vs vulkan; 4 features; 4 fixtures");
        assert_eq!(scope(&group[..3]), "cpu vs vulkan; a, b, c; 3 fixtures");
        assert_eq!(fixtures(&group[..1]), "clip_0");
    }

    #[test]
    fn notes_group_in_order_of_first_appearance() {
        let cells =
            [cell(0, "a", Status::Error, "x"), cell(1, "b", Status::Error, "y"), cell(2, "c", Status::Error, "x")];
        let groups = by_note(cells.iter());
        let ids: Vec<Vec<&str>> = groups.iter().map(|g| g.iter().map(|c| c.feature.as_str()).collect()).collect();
        assert_eq!(ids, [vec!["a", "c"], vec!["b"]]);
    }
}
