//! The offset tier (ADR-0234 alternative (d)): the per-cell scalar offsets
//! of a `calibrate fit --json-out` file, which `run --gpu-calibrated` adds
//! to GPU sides, matched by (arch_id, backend, feature, metric). Cells the
//! fit left unfit carry no offset and are never guessed.

use super::fit::{FitReport, KIND, SCHEMA_VERSION};
use crate::report::model::AppliedOffset;
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Clone, Default)]
pub struct Offsets {
    file: String,
    by_cell: BTreeMap<(String, String, String, String), AppliedOffset>,
}

impl Offsets {
    /// Reads the offsets of a fit report.
    pub fn load(path: &Path) -> Result<Offsets> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        let doc: serde_json::Value = serde_json::from_str(&text).with_context(|| {
            format!("{} is not a calibration fit (`calibrate fit --json-out`): not JSON", path.display())
        })?;
        if doc.get("kind").and_then(|k| k.as_str()) != Some(KIND) {
            bail!(
                "{} is not a calibration fit: its `kind` is not `{KIND}` (write one with `ulpgate calibrate fit --json-out`)",
                path.display()
            );
        }
        match doc.get("schema_version").and_then(serde_json::Value::as_u64) {
            Some(v) if v == u64::from(SCHEMA_VERSION) => {}
            other => bail!(
                "{} is a calibration fit of schema_version {}; this ulpgate reads schema_version {SCHEMA_VERSION}",
                path.display(),
                other.map_or("(none)".into(), |v| v.to_string())
            ),
        }
        let report: FitReport = serde_json::from_value(doc)
            .with_context(|| format!("{} is not a valid calibration fit", path.display()))?;
        Ok(Self::from_report(&path.display().to_string(), &report))
    }

    pub fn from_report(file: &str, report: &FitReport) -> Offsets {
        let by_cell = report
            .cells
            .iter()
            .filter_map(|c| {
                let offset = c.offset.filter(|o| o.is_finite())?;
                let key = (c.arch_id.clone(), c.backend.clone(), c.feature.clone(), c.metric.clone());
                Some((key, AppliedOffset { offset, decision: c.decision.as_str().to_string() }))
            })
            .collect();
        Offsets { file: file.to_string(), by_cell }
    }

    /// The file the offsets came from, as given.
    pub fn file(&self) -> &str {
        &self.file
    }

    pub fn get(&self, arch_id: &str, backend: &str, feature: &str, metric: &str) -> Option<&AppliedOffset> {
        self.by_cell.get(&(arch_id.to_string(), backend.to_string(), feature.to_string(), metric.to_string()))
    }

    pub fn len(&self) -> usize {
        self.by_cell.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_cell.is_empty()
    }
}
