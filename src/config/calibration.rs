//! The per-GPU tolerance table (`calibration/gpu_ulp_calibration.yaml`,
//! ADR-0234) and its lookup: trailing-`*` globs only; the most specific row
//! wins (an exact id beats any glob, then the longest literal prefix, ties
//! by file order); a row's per-feature value overrides the feature's
//! default; a matched row without the feature, or no row, falls back to it.

use super::features::SchemaVersion;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CalibrationTable {
    pub schema_version: SchemaVersion,
    pub rows: Vec<CalibrationRow>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RowStatus {
    /// Tolerances measured on this architecture.
    Calibrated,
    /// Reserved for an architecture not measured yet; falls back to defaults.
    Placeholder,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CalibrationRow {
    /// An arch_id (`vulkan:0x10005:0x0000`, `cuda:9.0`, `opencl:0x8086:...`)
    /// or a pattern ending in `*`. `sycl:` and `opencl:` are the same prefix.
    #[schemars(length(min = 1))]
    pub arch_id: String,
    pub label: String,
    pub status: RowStatus,
    /// Feature name → absolute tolerance on this architecture.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub features: BTreeMap<String, f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// Where a calibrated row's numbers come from.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// ISO date of the measurement.
    pub date: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corpus_manifest_sha256: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

/// A tolerance and the rule that decided it, as reports record it.
#[derive(Debug, Clone, PartialEq)]
pub struct Tolerance {
    pub abs: f64,
    /// `default`, `calibrated:<pattern>`, `placeholder:<pattern>`,
    /// `placeholder-default:<pattern>` or `no-calibration:<arch_id>`.
    pub source: String,
}

/// `sycl:` rows and `opencl:` ids name the same runtime (Research-0041).
fn normalize(id: &str) -> std::borrow::Cow<'_, str> {
    match id.strip_prefix("sycl:") {
        Some(rest) => format!("opencl:{rest}").into(),
        None => id.into(),
    }
}

/// How specifically `pattern` matches `arch_id`: `None` if it does not;
/// exact matches rank above every glob, longer literal prefixes above shorter.
pub fn match_rank(pattern: &str, arch_id: &str) -> Option<usize> {
    let (pattern, arch_id) = (normalize(pattern), normalize(arch_id));
    match pattern.strip_suffix('*') {
        Some(prefix) => arch_id.starts_with(prefix).then_some(prefix.len()),
        None => (pattern == arch_id).then_some(usize::MAX),
    }
}

/// Checks a row pattern: `*` is allowed only as the last character.
pub fn check_pattern(pattern: &str) -> Result<(), String> {
    let body = pattern.strip_suffix('*').unwrap_or(pattern);
    if body.contains('*') {
        return Err(format!("`{pattern}`: `*` may only end a pattern (trailing glob)"));
    }
    Ok(())
}

impl CalibrationTable {
    /// The most specific row matching `arch_id` (ties: the earlier row).
    pub fn matching_row(&self, arch_id: &str) -> Option<&CalibrationRow> {
        let mut best: Option<(usize, &CalibrationRow)> = None;
        for row in &self.rows {
            if let Some(rank) = match_rank(&row.arch_id, arch_id)
                && best.is_none_or(|(b, _)| rank > b)
            {
                best = Some((rank, row));
            }
        }
        best.map(|(_, row)| row)
    }

    /// The tolerance for `feature` on `arch_id`, `default` when no row
    /// decides it.
    pub fn lookup(&self, arch_id: &str, feature: &str, default: f64) -> Tolerance {
        let Some(row) = self.matching_row(arch_id) else {
            return Tolerance { abs: default, source: format!("no-calibration:{arch_id}") };
        };
        match (row.status, row.features.get(feature)) {
            (RowStatus::Calibrated, Some(&abs)) => Tolerance { abs, source: format!("calibrated:{}", row.arch_id) },
            (RowStatus::Placeholder, Some(&abs)) => Tolerance { abs, source: format!("placeholder:{}", row.arch_id) },
            (RowStatus::Placeholder, None) => {
                Tolerance { abs: default, source: format!("placeholder-default:{}", row.arch_id) }
            }
            (RowStatus::Calibrated, None) => Tolerance { abs: default, source: "default".into() },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(arch_id: &str, status: RowStatus, features: &[(&str, f64)]) -> CalibrationRow {
        CalibrationRow {
            arch_id: arch_id.into(),
            label: arch_id.into(),
            status,
            features: features.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            provenance: None,
            notes: None,
        }
    }

    fn table(rows: Vec<CalibrationRow>) -> CalibrationTable {
        CalibrationTable { schema_version: SchemaVersion(1), rows }
    }

    use RowStatus::{Calibrated, Placeholder};

    #[test]
    fn trailing_glob_only() {
        assert_eq!(match_rank("vulkan:0x10de:*", "vulkan:0x10de:0x2684"), Some(14));
        assert_eq!(match_rank("vulkan:0x10de:*", "vulkan:0x1002:0x7300"), None);
        assert!(check_pattern("vulkan:*:0x2684").is_err());
        assert!(check_pattern("vulkan:0x10de:*").is_ok());
        // Without `*` a pattern is an exact id, not a prefix.
        assert_eq!(match_rank("cuda:8", "cuda:8.9"), None);
    }

    #[test]
    fn longest_prefix_wins() {
        let t = table(vec![
            row("vulkan:*", Calibrated, &[("psnr", 1.0)]),
            row("vulkan:0x10de:*", Calibrated, &[("psnr", 2.0)]),
            row("vulkan:0x10de:0x26*", Calibrated, &[("psnr", 3.0)]),
        ]);
        let tol = t.lookup("vulkan:0x10de:0x2684", "psnr", 9.0);
        assert_eq!(tol, Tolerance { abs: 3.0, source: "calibrated:vulkan:0x10de:0x26*".into() });
        assert_eq!(t.lookup("vulkan:0x10de:0x1e04", "psnr", 9.0).abs, 2.0);
        assert_eq!(t.lookup("vulkan:0x8086:0x56a5", "psnr", 9.0).abs, 1.0);
    }

    #[test]
    fn exact_beats_any_glob() {
        let t =
            table(vec![row("cuda:9.0", Calibrated, &[("psnr", 1.0)]), row("cuda:9.0*", Calibrated, &[("psnr", 2.0)])]);
        assert_eq!(t.lookup("cuda:9.0", "psnr", 9.0).abs, 1.0);
    }

    #[test]
    fn ties_go_to_the_earlier_row() {
        let t = table(vec![row("cuda:9*", Calibrated, &[("psnr", 1.0)]), row("cuda:9*", Calibrated, &[("psnr", 2.0)])]);
        assert_eq!(t.lookup("cuda:9.0", "psnr", 9.0).abs, 1.0);
    }

    #[test]
    fn per_feature_override_else_default() {
        let t = table(vec![row("cuda:9.0", Calibrated, &[("psnr", 1e-4)])]);
        assert_eq!(t.lookup("cuda:9.0", "psnr", 5e-5).abs, 1e-4);
        assert_eq!(t.lookup("cuda:9.0", "vif", 5e-5), Tolerance { abs: 5e-5, source: "default".into() });
    }

    #[test]
    fn placeholder_rows_fall_back_and_say_so() {
        let t = table(vec![row("cuda:8.9", Placeholder, &[]), row("cuda:7.5", Placeholder, &[("psnr", 1e-3)])]);
        assert_eq!(
            t.lookup("cuda:8.9", "psnr", 5e-5),
            Tolerance { abs: 5e-5, source: "placeholder-default:cuda:8.9".into() }
        );
        assert_eq!(t.lookup("cuda:7.5", "psnr", 5e-5), Tolerance { abs: 1e-3, source: "placeholder:cuda:7.5".into() });
    }

    #[test]
    fn no_row_names_the_arch() {
        let t = table(vec![row("cuda:9.0", Calibrated, &[])]);
        assert_eq!(t.lookup("cuda:8.0", "psnr", 5e-5).source, "no-calibration:cuda:8.0");
    }

    #[test]
    fn sycl_and_opencl_prefixes_are_one() {
        let t = table(vec![row("sycl:0x8086:*", Calibrated, &[("psnr", 1e-4)])]);
        assert_eq!(t.lookup("opencl:0x8086:24.35.30872", "psnr", 5e-5).abs, 1e-4);
        assert_eq!(match_rank("opencl:0x8086:*", "sycl:0x8086:1.2"), Some(14));
    }
}
