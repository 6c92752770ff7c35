use super::Outcome;
use crate::calibration::corpus::{self, Format};
use crate::calibration::fit::{
    self, CellFit, CorpusRef, DEFAULT_HOLDOUT_EVERY, Decision, FileRef, FitReport, KIND, Rule, SCHEMA_VERSION,
};
use crate::calibration::table_write::{self, ProvenanceInfo};
use crate::calibration::{manifest, sha256_hex, time};
use crate::cli::stdout::outln;
use crate::config::resolve::load_registry;
use crate::report::model::Tool;
use crate::report::render;
use crate::report::write::Staged;
use anyhow::{Context, anyhow};
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};
use minijinja::value::Serde;
use std::collections::{BTreeMap, BTreeSet};
use std::io::IsTerminal;
use std::path::PathBuf;

pub const TEMPLATE: &str = include_str!("../../../templates/calibration-fit.md.j2");

#[derive(clap::Args)]
pub struct Args {
    /// The corpus `calibrate collect` wrote (.csv, .jsonl or .ndjson).
    #[arg(value_name = "CORPUS")]
    corpus: PathBuf,
    /// The corpus format, when the extension does not say it.
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// The corpus manifest (default: <CORPUS>.manifest.json when it exists;
    /// required by --write-table).
    #[arg(long, value_name = "FILE")]
    manifest: Option<PathBuf>,
    /// Write the fit as JSON here (the input of `run --gpu-calibrated`).
    #[arg(long, value_name = "FILE")]
    json_out: Option<PathBuf>,
    /// Write the fit as Markdown here.
    #[arg(long, value_name = "FILE")]
    md_out: Option<PathBuf>,
    /// For the ADR-0234 bars, hold out every K-th frame of each cell (in
    /// fixture, frame order), in K folds so each frame is held out once; a
    /// cell needs 3·K frames.
    #[arg(long, value_name = "K", default_value_t = DEFAULT_HOLDOUT_EVERY as u64,
          value_parser = holdout_every)]
    holdout_every: u64,
    /// Write each measured arch's calibrated row into this calibration
    /// table (only that row changes; see the table's header for the rule).
    #[arg(long, value_name = "TABLE")]
    write_table: Option<PathBuf>,
    /// The feature registry the defaults come from (default: the one the
    /// manifest's gate used, else gates/features.yaml).
    #[arg(long, value_name = "FILE")]
    registry: Option<PathBuf>,
    /// Print only the summary line.
    #[arg(long, short)]
    quiet: bool,
}

pub fn run(args: Args) -> Outcome {
    let format = Format::resolve(args.format, &args.corpus)?;
    let corpus = corpus::read(&args.corpus, format)?;
    let corpus_bytes = std::fs::read(&args.corpus).with_context(|| format!("cannot read {}", args.corpus.display()))?;
    let corpus_sha = sha256_hex(&corpus_bytes);

    let manifest_path = match &args.manifest {
        Some(p) => Some(p.clone()),
        None => Some(manifest::default_path(&args.corpus)).filter(|p| p.exists()),
    };
    let manifest = match &manifest_path {
        Some(p) => {
            let (m, bytes) = manifest::read(p)?;
            if m.corpus.sha256 != corpus_sha {
                return Err(anyhow!(
                    "{} describes a corpus with sha256 {}, but {} has sha256 {}: not its manifest (or the corpus \
                     changed since)",
                    p.display(),
                    m.corpus.sha256,
                    args.corpus.display(),
                    corpus_sha
                )
                .into());
            }
            Some((p.clone(), m, sha256_hex(&bytes)))
        }
        None => None,
    };

    let holdout_every = args.holdout_every as usize;
    let (cells, summary) = fit::fit(&corpus, holdout_every);
    let report = FitReport {
        schema_version: SCHEMA_VERSION,
        kind: KIND.into(),
        tool: Tool::this(),
        corpus: CorpusRef {
            path: args.corpus.display().to_string(),
            format,
            sha256: corpus_sha,
            rows: corpus.rows.len(),
        },
        manifest: manifest.as_ref().map(|(p, _, sha)| FileRef { path: p.display().to_string(), sha256: sha.clone() }),
        rule: Rule::new(holdout_every),
        summary,
        cells,
    };

    let mut staged = Staged::new();
    if let Some(path) = &args.json_out {
        let text = serde_json::to_string_pretty(&report).context("the fit serializes")? + "\n";
        staged.add(path, text.as_bytes())?;
    }
    if let Some(path) = &args.md_out {
        staged.add(path, render_markdown(&report)?.as_bytes())?;
    }
    let mut table_actions = Vec::new();
    if let Some(table_path) = &args.write_table {
        let Some((_, m, manifest_sha)) = &manifest else {
            return Err(anyhow!(
                "--write-table records the corpus manifest's sha256 as provenance: no manifest at {} (give \
                 --manifest)",
                manifest::default_path(&args.corpus).display()
            )
            .into());
        };
        // --registry, else the registry the corpus's gate used (if it is
        // still there), else the repository's.
        let registry_path = match &args.registry {
            Some(p) => p.clone(),
            None => Some(PathBuf::from(&m.gate.registry))
                .filter(|p| p.exists())
                .unwrap_or_else(|| PathBuf::from("gates/features.yaml")),
        };
        let registry = load_registry(&registry_path)?.value;
        let derived = table_write::derive(&corpus, &registry)?;
        let mut frames: BTreeMap<String, BTreeSet<(&str, usize)>> = BTreeMap::new();
        for r in &corpus.rows {
            frames.entry(r.arch_id.clone()).or_default().insert((&r.fixture, r.frame));
        }
        let frames = frames.into_iter().map(|(k, v)| (k, v.len())).collect();
        let labels = m
            .backends
            .iter()
            .filter_map(|b| b.device.as_ref())
            .map(|d| {
                let driver = d.driver_text().map_or(String::new(), |t| format!("{t}; "));
                (d.arch_id.clone(), format!("{} ({driver}measured with {})", d.name, d.backend))
            })
            .collect();
        let info = ProvenanceInfo {
            date: time::date(time::now_epoch()),
            corpus_manifest_sha256: manifest_sha.clone(),
            tool: format!("ulpgate {}", env!("CARGO_PKG_VERSION")),
        };
        let text = std::fs::read_to_string(table_path)
            .with_context(|| format!("cannot read the calibration table {}", table_path.display()))?;
        let (new_text, actions) =
            table_write::rewrite(table_path, &text, &derived, &frames, &labels, &info, &registry)?;
        staged.add(table_path, new_text.as_bytes())?;
        for (arch, action) in actions {
            let features: Vec<String> = derived[&arch]
                .iter()
                .map(|(f, d)| format!("{f} {:e} (worst {})", d.tolerance, table_write::short(d.worst)))
                .collect();
            table_actions.push(format!("{}: {arch}: {action}; {}", table_path.display(), features.join(", ")));
        }
    }
    staged.commit()?;

    if !args.quiet {
        outln!("{}", terminal_table(&report.cells, std::io::stdout().is_terminal()));
        for c in report.cells.iter().filter(|c| matches!(c.decision, Decision::Unfit | Decision::Undetermined)) {
            outln!("{} {}/{}/{} on {}: {}", c.decision.as_str(), c.backend, c.feature, c.metric, c.arch_id, c.reason);
        }
    }
    let s = &report.summary;
    let decisions: Vec<String> = s.decisions.iter().map(|(k, v)| format!("{v} {k}")).collect();
    outln!(
        "{} cells: {}; held-out bars (every {holdout_every}th frame): {} pass, {} fail, {} undefined",
        s.cells,
        decisions.join(", "),
        s.bars_pass,
        s.bars_fail,
        s.bars_undefined
    );
    for line in table_actions {
        outln!("{line}");
    }
    Ok(0)
}

fn render_markdown(report: &FitReport) -> anyhow::Result<String> {
    let mut env = render::environment();
    env.add_template("fit", TEMPLATE).context("the fit template does not parse")?;
    let out = env
        .get_template("fit")?
        .render(minijinja::context! { fit => Serde(report) })
        .context("rendering the fit template failed")?;
    Ok(out)
}

fn sci(x: Option<f64>) -> String {
    match x {
        Some(0.0) => "0".into(),
        Some(v) => format!("{v:.2e}"),
        None => "—".into(),
    }
}

fn terminal_table(cells: &[CellFit], color: bool) -> String {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic).set_header(vec![
        "arch_id",
        "backend",
        "feature",
        "metric",
        "n",
        "slope-1 (se)",
        "offset",
        "worst |Δ|",
        "after offset",
        "PLCC",
        "decision",
        "held-out PLCC",
        "held-out worst",
        "bars",
    ]);
    if !color {
        table.force_no_tty();
    }
    for c in cells {
        let linear = c.linear.as_ref();
        let slope = linear.map_or("—".into(), |l| {
            format!("{} ({})", sci(Some(l.slope_minus_one)), l.slope_se.map_or("—".into(), |s| format!("{s:.1e}")))
        });
        let plcc = linear.and_then(|l| l.plcc).map_or("—".into(), |p| format!("{p:.9}"));
        let h = c.holdout.as_ref();
        table.add_row(vec![
            c.arch_id.clone(),
            c.backend.clone(),
            c.feature.clone(),
            c.metric.clone(),
            c.n.to_string(),
            slope,
            sci(c.offset),
            sci(c.worst_abs_diff),
            sci(c.worst_abs_residual),
            plcc,
            c.decision.as_str().to_string(),
            h.and_then(|h| h.plcc).map_or("—".into(), |p| format!("{p:.9}")),
            sci(h.map(|h| h.worst_abs_residual)),
            match h.map(|h| h.pass) {
                Some(Some(true)) => "pass".into(),
                Some(Some(false)) => "fail".into(),
                Some(None) => "undefined".into(),
                None => "—".into(),
            },
        ]);
    }
    table.to_string()
}

/// `--holdout-every K`: every K-th frame held out, so K of at least 2 (clap's
/// own range message would print u64::MAX as the upper end).
fn holdout_every(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(k) if k >= 2 => Ok(k),
        Ok(_) => Err("every K-th frame is held out and the rest fitted: K must be 2 or more".into()),
        Err(e) => Err(format!("{e}: give a whole number, 2 or more")),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn holdout_every_takes_two_or_more() {
        assert_eq!(super::holdout_every("2"), Ok(2));
        for bad in ["0", "1", "-3", "two"] {
            let err = super::holdout_every(bad).unwrap_err();
            assert!(err.contains("2 or more") && !err.contains("18446744073709551615"), "{bad}: {err}");
        }
    }
}
