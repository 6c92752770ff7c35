//! The corpus manifest sidecar (Research-0041): what a corpus holds and how
//! it was made, so it can be replayed and so a calibrated table row can
//! point at it (`corpus_manifest_sha256`). Written next to the corpus as
//! `<output>.manifest.json` unless `--manifest-out` says otherwise.

use crate::backend::DeviceInfo;
use crate::fixture::{Fingerprint, Geometry};
use crate::report::model::Tool;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const KIND: &str = "ulpgate-calibration-corpus";
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    #[schemars(extend("const" = 1))]
    pub schema_version: u32,
    /// Always `ulpgate-calibration-corpus`.
    #[schemars(extend("const" = "ulpgate-calibration-corpus"))]
    pub kind: String,
    pub tool: Tool,
    /// The command line, as the program received it.
    pub command_line: Vec<String>,
    /// UTC, `SOURCE_DATE_EPOCH` when set.
    pub created: String,
    pub corpus: CorpusFile,
    /// Research-0041's smallest set (`--smoke`).
    pub smoke: bool,
    pub gate: GateSource,
    /// `--frames`: at most this many frames of each fixture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames_limit: Option<usize>,
    /// What the command line asked for (absent: everything in the gate).
    pub requested: Requested,
    pub features: Vec<FeatureEntry>,
    pub backends: Vec<BackendEntry>,
    pub fixtures: Vec<FixtureEntry>,
    pub rows: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CorpusFile {
    /// As given on the command line.
    pub path: String,
    pub format: super::corpus::Format,
    pub columns: Vec<String>,
    /// SHA-256 of the corpus file's bytes.
    pub sha256: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GateSource {
    pub name: String,
    pub file: String,
    pub registry: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Requested {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub features: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backends: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixtures: Option<Vec<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Collected {
    /// Rows were written.
    Collected,
    /// Not collected; the reason says why.
    Skipped,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeatureEntry {
    pub name: String,
    pub metrics: Vec<String>,
    pub status: Collected,
    /// Why it was skipped (per backend pair).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    pub rows: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The CPU reference (the `cpu_score` column).
    Reference,
    /// A GPU backend (the `gpu_score` column).
    Gpu,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackendEntry {
    /// The name in the gate (the `backend` column for GPU backends).
    pub name: String,
    pub kind: String,
    pub role: Role,
    pub status: Collected,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The device it ran on, its arch_id included (the `arch_id` column).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceInfo>,
    pub rows: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FixtureEntry {
    pub name: String,
    pub reference: String,
    pub distorted: String,
    pub geometry: Geometry,
    /// Frames scored (after `--frames`).
    pub frames: usize,
    /// SHA-256 of the frames used: planar samples back to back (Y, Cb, Cr
    /// per frame; 8-bit one byte per sample, deeper 16-bit little-endian).
    /// For a raw .yuv this is the hash of its first `frames` frames' bytes.
    pub reference_sha256: String,
    pub distorted_sha256: String,
}

impl FixtureEntry {
    pub fn of(name: &str, reference: String, distorted: String, print: &Fingerprint) -> Self {
        FixtureEntry {
            name: name.to_string(),
            reference,
            distorted,
            geometry: print.geometry,
            frames: print.frames,
            reference_sha256: print.reference_sha256.clone(),
            distorted_sha256: print.distorted_sha256.clone(),
        }
    }
}

/// `<corpus>.manifest.json`: the corpus's full file name with
/// `.manifest.json` appended.
pub fn default_path(corpus: &Path) -> PathBuf {
    let mut name = corpus.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".manifest.json");
    corpus.with_file_name(name)
}

pub fn to_json(m: &Manifest) -> String {
    serde_json::to_string_pretty(m).expect("manifests serialize") + "\n"
}

/// Reads a manifest, checking that it is one.
pub fn read(path: &Path) -> anyhow::Result<(Manifest, Vec<u8>)> {
    use anyhow::Context;
    let bytes = std::fs::read(path).with_context(|| format!("cannot read the corpus manifest {}", path.display()))?;
    let doc: serde_json::Value = serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not a corpus manifest: not JSON", path.display()))?;
    if doc.get("kind").and_then(|k| k.as_str()) != Some(KIND) {
        anyhow::bail!("{} is not a corpus manifest: its `kind` is not `{KIND}`", path.display());
    }
    // From the bytes, not `doc`: serde_json then says at which line and
    // column a field has the wrong type.
    let m: Manifest =
        serde_json::from_slice(&bytes).with_context(|| format!("{} is not a valid corpus manifest", path.display()))?;
    Ok((m, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_sidecar_sits_beside_the_corpus() {
        assert_eq!(default_path(Path::new("out/c.csv")), PathBuf::from("out/c.csv.manifest.json"));
        assert_eq!(default_path(Path::new("c.jsonl")), PathBuf::from("c.jsonl.manifest.json"));
    }
}
