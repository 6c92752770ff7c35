use super::Outcome;
use crate::calibration::fit::FitReport;
use crate::calibration::manifest::Manifest;
use crate::cli::stdout::outln;
use crate::config::calibration::CalibrationTable;
use crate::config::features::FeatureRegistry;
use crate::config::gate::GateFile;
use crate::config::load::schema_of;
use crate::report::model::Report;
use anyhow::{Context, anyhow};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Folder to write the schemas to.
    #[arg(long, default_value = "schemas")]
    out: PathBuf,
    /// Do not write: fail if the files in --out differ from the generated ones.
    #[arg(long)]
    check: bool,
}

/// Every generated schema: (file name, pretty JSON with a trailing newline).
pub fn generated() -> Vec<(&'static str, String)> {
    let pretty = |v: serde_json::Value| serde_json::to_string_pretty(&v).expect("schemas serialize") + "\n";
    vec![
        ("gate.schema.json", pretty(schema_of::<GateFile>())),
        ("features.schema.json", pretty(schema_of::<FeatureRegistry>())),
        ("calibration.schema.json", pretty(schema_of::<CalibrationTable>())),
        ("report.schema.json", pretty(schema_of::<Report>())),
        ("calibration-fit.schema.json", pretty(schema_of::<FitReport>())),
        ("corpus-manifest.schema.json", pretty(schema_of::<Manifest>())),
    ]
}

/// Names of the files in `dir` that differ from what would be generated.
pub fn stale(dir: &Path) -> Vec<String> {
    generated()
        .into_iter()
        .filter(|(name, text)| std::fs::read_to_string(dir.join(name)).ok().as_deref() != Some(text.as_str()))
        .map(|(name, _)| name.to_string())
        .collect()
}

pub fn run(args: Args) -> Outcome {
    if args.check {
        let stale = stale(&args.out);
        if !stale.is_empty() {
            return Err(anyhow!(
                "stale schemas in {}: {} (run `ulpgate schema --out {}`)",
                args.out.display(),
                stale.join(", "),
                args.out.display()
            )
            .into());
        }
        outln!("schemas in {} are up to date", args.out.display());
        return Ok(0);
    }
    std::fs::create_dir_all(&args.out).with_context(|| format!("cannot create {}", args.out.display()))?;
    for (name, text) in generated() {
        let path = args.out.join(name);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        outln!("wrote {}", path.display());
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    /// The checked-in schemas must be what the code generates.
    #[test]
    fn checked_in_schemas_are_fresh() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
        let stale = super::stale(&dir);
        assert!(stale.is_empty(), "stale schemas: {stale:?}; run `cargo run -- schema --out schemas`");
    }
}
