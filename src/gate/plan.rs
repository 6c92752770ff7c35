//! Cells: feature x backend pair x fixture, after the command line's
//! filters and sharding.

use crate::config::diag::{Diagnostic, Diagnostics};
use crate::config::gate::PairTolerance;
use crate::config::resolve::fixture_matches;
use crate::config::suggest::nearest;
use crate::config::{ResolvedFeature, ResolvedGate};
use crate::report::model::Shard;
use std::collections::BTreeSet;
use std::path::Path;

/// One comparison to make.
#[derive(Debug, Clone)]
pub struct CellPlan {
    /// Index into [`Plan::gates`].
    pub gate: usize,
    pub feature: ResolvedFeature,
    pub a: String,
    pub b: String,
    pub fixture: String,
    pub pair_tolerance: Option<PairTolerance>,
}

impl CellPlan {
    /// A stable identifier: `gate/feature/a-vs-b/fixture`.
    pub fn id(&self, gates: &[ResolvedGate]) -> String {
        format!("{}/{}/{}-vs-{}/{}", gates[self.gate].name, self.feature.name, self.a, self.b, self.fixture)
    }
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub gates: Vec<ResolvedGate>,
    pub cells: Vec<CellPlan>,
    /// Set when `cells` is one shard of the plan ([`super::shard::select`]).
    pub shard: Option<Shard>,
}

/// Narrowing from the command line.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    pub features: Option<Vec<String>>,
    /// A cell runs only if both of its backends are listed.
    pub backends: Option<Vec<String>>,
    /// Fixture names or trailing-`*` patterns.
    pub fixtures: Option<Vec<String>>,
}

/// Expands gates into cells, in gate order: feature, then pair, then fixture.
pub fn plan(gates: Vec<ResolvedGate>, filters: &Filters) -> Result<Plan, Diagnostics> {
    check_gate_names(&gates)?;
    check_filters(&gates, filters)?;
    let mut cells = Vec::new();
    for (g, gate) in gates.iter().enumerate() {
        for feature in &gate.features {
            if filters.features.as_ref().is_some_and(|f| !f.contains(&feature.name)) {
                continue;
            }
            for pair in &gate.pairs {
                if !pair.features.contains(&feature.name) {
                    continue;
                }
                if filters.backends.as_ref().is_some_and(|b| !b.contains(&pair.a) || !b.contains(&pair.b)) {
                    continue;
                }
                for fixture in &pair.fixtures {
                    if filters.fixtures.as_ref().is_some_and(|fs| !fs.iter().any(|p| fixture_matches(p, fixture))) {
                        continue;
                    }
                    cells.push(CellPlan {
                        gate: g,
                        feature: on_fixture(gate, feature, fixture),
                        a: pair.a.clone(),
                        b: pair.b.clone(),
                        fixture: fixture.clone(),
                        pair_tolerance: pair.tolerance.clone(),
                    });
                }
            }
        }
    }
    if cells.is_empty() && (filters.features.is_some() || filters.backends.is_some() || filters.fixtures.is_some()) {
        // A check that checks nothing must not pass: each name exists (see
        // check_filters), but no cell has them all.
        let pairs: BTreeSet<String> =
            gates.iter().flat_map(|g| g.pairs.iter().map(|p| format!("{} vs {}", p.a, p.b))).collect();
        return Err(Diagnostics::from(
            Diagnostic::file(
                Path::new("<command line>"),
                format!("no cell of the gate matches {}", filters.describe()),
            )
            .expected(format!(
                "a feature, a pair whose two backends are both listed, and a fixture that some pair compares \
                     (the pairs: {})",
                pairs.into_iter().collect::<Vec<_>>().join(", ")
            )),
        ));
    }
    Ok(Plan { gates, cells, shard: None })
}

impl Filters {
    /// The filters as given, for messages: `--features psnr --backends cpu`.
    fn describe(&self) -> String {
        [("--features", &self.features), ("--backends", &self.backends), ("--fixtures", &self.fixtures)]
            .into_iter()
            .filter_map(|(flag, names)| names.as_ref().map(|n| format!("{flag} {}", n.join(","))))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// `feature` as a cell on `fixture` expects it: without the metrics it
/// does not emit on the fixture's geometry (psnr's chroma on 4:0:0). A
/// fixture whose geometry cannot be read keeps them all: reading it fails
/// the cell anyway.
fn on_fixture(gate: &ResolvedGate, feature: &ResolvedFeature, fixture: &str) -> ResolvedFeature {
    let mut feature = feature.clone();
    if let Some(imp) = crate::features::find(&feature.name)
        && !imp.chroma_metrics.is_empty()
        && let Some(geometry) = gate.fixtures.iter().find(|f| f.name == fixture).and_then(|f| f.reference.geometry())
    {
        feature.metrics = imp.metrics_on(&feature.metrics, &geometry);
    }
    feature
}

/// Cell ids begin with the gate's name: two gates of one run (or one gate
/// file given twice) must not share it, or the report would hold cells
/// that `merge` refuses as duplicates.
fn check_gate_names(gates: &[ResolvedGate]) -> Result<(), Diagnostics> {
    let mut diags = Diagnostics::default();
    for (i, gate) in gates.iter().enumerate() {
        if let Some(first) = gates[..i].iter().find(|g| g.name == gate.name) {
            let message = if first.file == gate.file {
                "the gate file is given twice".to_string()
            } else {
                format!("gate name `{}` is also the name of {}", gate.name, first.file.display())
            };
            diags.push(
                Diagnostic::file(&gate.file, message)
                    .expected("each gate of a run under a name of its own (cell ids begin with it)"),
            );
        }
    }
    diags.into_result()
}

/// Every name given on the command line must exist in some gate.
fn check_filters(gates: &[ResolvedGate], filters: &Filters) -> Result<(), Diagnostics> {
    let mut diags = Diagnostics::default();
    let mut check = |flag: &str, given: &Option<Vec<String>>, known: BTreeSet<String>, patterns: bool| {
        for name in given.iter().flatten() {
            let found = if patterns { known.iter().any(|k| fixture_matches(name, k)) } else { known.contains(name) };
            if !found {
                let what = flag.trim_start_matches("--").trim_end_matches('s');
                diags.push(
                    Diagnostic::file(Path::new("<command line>"), format!("{flag}: no {what} `{name}` in the gate"))
                        .expected(format!("one of: {}", known.iter().cloned().collect::<Vec<_>>().join(", ")))
                        .suggest(nearest(name, known.iter().map(String::as_str))),
                );
            }
        }
    };
    check(
        "--features",
        &filters.features,
        gates.iter().flat_map(|g| g.features.iter().map(|f| f.name.clone())).collect(),
        false,
    );
    check("--backends", &filters.backends, gates.iter().flat_map(|g| g.backends.keys().cloned()).collect(), false);
    check(
        "--fixtures",
        &filters.fixtures,
        gates.iter().flat_map(|g| g.fixtures.iter().map(|f| f.name.clone())).collect(),
        true,
    );
    diags.into_result()
}
