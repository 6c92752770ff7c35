//! Puts reports back together: the shards of one run (`run --shard K/N`
//! on a GitHub Actions matrix), and runs of different gates (the nightly
//! lanes), into one report with a recomputed verdict.
//!
//! Refused, so that a merged verdict never hides a cell: reports of
//! different ulpgate versions, shards of different plans, a shard missing
//! or given twice, a gate run twice, a cell in two reports.

use super::model::{Cell, GateRef, Report, SCHEMA_VERSION, Shard, Summary, Timing};
use anyhow::{Result, bail};
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

/// A report and the file it came from (for messages).
pub struct Input {
    pub path: PathBuf,
    pub report: Report,
}

impl Input {
    fn name(&self) -> String {
        self.path.display().to_string()
    }
}

pub fn merge(inputs: Vec<Input>) -> Result<Report> {
    let Some(first) = inputs.first() else {
        bail!("nothing to merge: give at least one report");
    };
    for i in &inputs[1..] {
        if i.report.tool != first.report.tool {
            bail!(
                "mismatched tool versions: {} was written by {} {}, {} by {} {}; merge reports of one ulpgate build",
                first.name(),
                first.report.tool.name,
                first.report.tool.version,
                i.name(),
                i.report.tool.name,
                i.report.tool.version
            );
        }
    }
    // Reports of one run share their gate list exactly.
    let mut groups: Vec<(Vec<GateRef>, Vec<Input>)> = Vec::new();
    for input in inputs {
        match groups.iter_mut().find(|(g, _)| *g == input.report.gates) {
            Some((_, members)) => members.push(input),
            None => groups.push((input.report.gates.clone(), vec![input])),
        }
    }
    // The cause before its symptoms: shards of other plans share cells.
    for (_, members) in &groups {
        check_same_plan(members)?;
    }
    check_unique_cells(groups.iter().flat_map(|(_, m)| m))?;
    check_disjoint_gates(&groups)?;

    let tool = groups[0].1[0].report.tool.clone();
    let mut gates = Vec::new();
    let mut cells = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    let mut timing = Timing::default();
    for (group_gates, members) in groups {
        for m in &members {
            for w in &m.report.warnings {
                if !warnings.contains(w) {
                    warnings.push(w.clone());
                }
            }
            timing.wall_seconds = timing.wall_seconds.max(m.report.timing.wall_seconds);
            timing.sides.extend(m.report.timing.sides.iter().cloned());
        }
        cells.extend(group_cells(members)?);
        gates.extend(group_gates);
    }
    timing.sides.sort_by(|a, b| (&a.backend, &a.feature, &a.fixture).cmp(&(&b.backend, &b.feature, &b.fixture)));
    let summary = Summary::of(&cells);
    let (status, exit_code) = summary.verdict();
    Ok(Report {
        schema_version: SCHEMA_VERSION,
        tool,
        gates,
        status,
        exit_code,
        summary,
        shard: None,
        cells,
        warnings,
        timing,
    })
}

fn check_unique_cells<'a>(inputs: impl Iterator<Item = &'a Input>) -> Result<()> {
    let mut seen: HashMap<&str, &Input> = HashMap::new();
    for input in inputs {
        for cell in &input.report.cells {
            if let Some(other) = seen.insert(&cell.id, input) {
                let where_ = if std::ptr::eq(other, input) {
                    format!("twice in {}", input.name())
                } else {
                    format!("in both {} and {}", other.name(), input.name())
                };
                bail!("duplicate cell `{}`: it is {where_} (a shard or report given twice?)", cell.id);
            }
        }
    }
    Ok(())
}

/// A gate may appear in one group only: two runs of one gate would be
/// merged into a report no single run could have produced.
fn check_disjoint_gates(groups: &[(Vec<GateRef>, Vec<Input>)]) -> Result<()> {
    let mut owner: HashMap<&str, (&GateRef, &Input)> = HashMap::new();
    for (gates, members) in groups {
        for g in gates {
            if let Some((other, input)) = owner.get(g.name.as_str()) {
                bail!(
                    "mismatched gates: {} ran gate `{}` from {} and {} ran it from {} (or with other gates); \
                     merge shards of one run, or reports of different gates",
                    input.name(),
                    g.name,
                    other.file,
                    members[0].name(),
                    g.file
                );
            }
        }
        for g in gates {
            owner.insert(&g.name, (g, &members[0]));
        }
    }
    Ok(())
}

/// Shards of one gate list must be shards of one plan.
fn check_same_plan(members: &[Input]) -> Result<()> {
    let shards: Vec<(&Input, &Shard)> =
        members.iter().filter_map(|m| m.report.shard.as_ref().map(|s| (m, s))).collect();
    let Some((first, reference)) = shards.first() else {
        return Ok(());
    };
    for (m, s) in &shards[1..] {
        if (s.count, s.plan_cells, &s.plan_digest) != (reference.count, reference.plan_cells, &reference.plan_digest) {
            bail!(
                "mismatched gates: {} is shard {}/{} of a plan of {} ({}), {} is shard {}/{} of a plan of {} \
                 ({}): shards of different plans (other gate contents or filters)",
                first.name(),
                reference.index,
                reference.count,
                super::plural(reference.plan_cells, "cell"),
                reference.plan_digest,
                m.name(),
                s.index,
                s.count,
                super::plural(s.plan_cells, "cell"),
                s.plan_digest
            );
        }
    }
    Ok(())
}

/// The cells of one group, in plan order: one whole run, or every shard of
/// one plan.
fn group_cells(mut members: Vec<Input>) -> Result<Vec<Cell>> {
    let gate_names = members[0].report.gates.iter().map(|g| format!("`{}`", g.name)).collect::<Vec<_>>().join(", ");
    if members.len() == 1 && members[0].report.shard.is_none() {
        return Ok(members.remove(0).report.cells);
    }
    if let Some(whole) = members.iter().find(|m| m.report.shard.is_none()) {
        bail!(
            "mismatched reports: {} ran gate(s) {} whole, and another report ran them too; merge shards of one run, \
             or reports of different gates",
            whole.name(),
            gate_names
        );
    }
    let shard = |m: &Input| m.report.shard.clone().expect("checked: every member is a shard");
    let reference = shard(&members[0]);
    let mut by_index: HashMap<usize, &Input> = HashMap::new();
    for m in &members {
        let s = shard(m);
        if let Some(other) = by_index.insert(s.index, m) {
            bail!("{} and {} are both shard {}/{}", other.name(), m.name(), s.index, s.count);
        }
        if s.positions.len() != m.report.cells.len() || s.positions.iter().any(|&p| p >= s.plan_cells) {
            bail!("{} is damaged: its shard positions do not match its cells", m.name());
        }
    }
    let missing: Vec<String> = (1..=reference.count)
        .filter(|i| !by_index.contains_key(i))
        .map(|i| format!("{i}/{}", reference.count))
        .collect();
    if !missing.is_empty() {
        bail!(
            "incomplete: shard(s) {} of gate(s) {} missing; a merged verdict would hide their cells",
            missing.join(", "),
            gate_names
        );
    }
    let mut placed: Vec<(usize, Cell)> = Vec::with_capacity(reference.plan_cells);
    for m in members {
        let s = shard(&m);
        placed.extend(s.positions.into_iter().zip(m.report.cells));
    }
    placed.sort_by_key(|(p, _)| *p);
    let positions: BTreeSet<usize> = placed.iter().map(|(p, _)| *p).collect();
    if positions.len() != reference.plan_cells || placed.len() != reference.plan_cells {
        bail!(
            "the shards of gate(s) {} hold {} cells at {} distinct positions, the plan has {}",
            gate_names,
            placed.len(),
            positions.len(),
            reference.plan_cells
        );
    }
    Ok(placed.into_iter().map(|(_, c)| c).collect())
}
