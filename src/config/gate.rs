//! Gate files (`gates/*.yaml`): which features, backend pairs and fixtures
//! a run covers.

use super::features::{Precision, SchemaVersion};
use crate::fixture::{Geometry, SyntheticSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GateFile {
    pub schema_version: SchemaVersion,
    /// The gate's name, as reports show it.
    #[schemars(length(min = 1))]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The feature registry, relative to this file.
    #[serde(default = "default_registry")]
    pub registry: String,
    /// The per-GPU calibration table, relative to this file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<String>,
    /// `all`, or a list of feature names (or per-feature overrides).
    pub features: FeatureSelection,
    /// Backend name → declaration. Builtin names (cpu, golden, vulkan,
    /// cuda, opencl) need no `kind`.
    #[schemars(length(min = 1))]
    pub backends: BTreeMap<String, BackendDecl>,
    /// Backend pairs to compare; `a` is the reference side of the diff.
    #[schemars(length(min = 1))]
    pub pairs: Vec<PairDecl>,
    #[schemars(length(min = 1))]
    pub fixtures: Vec<FixtureDecl>,
}

fn default_registry() -> String {
    "features.yaml".into()
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum FeatureSelection {
    All(AllFeatures),
    List(#[schemars(length(min = 1))] Vec<FeatureChoice>),
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
pub enum AllFeatures {
    #[serde(rename = "all")]
    All,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum FeatureChoice {
    Name(String),
    Custom(FeatureOverride),
}

impl FeatureChoice {
    pub fn name(&self) -> &str {
        match self {
            FeatureChoice::Name(n) => n,
            FeatureChoice::Custom(o) => &o.name,
        }
    }
}

/// A registry feature with gate-specific settings.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeatureOverride {
    pub name: String,
    /// Replaces the registry's tolerance; give `adr` with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub tolerance: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adr: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<Precision>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, Value>,
}

/// The kinds of backend ulpgate has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// The Rust CPU reference.
    Cpu,
    /// Per-frame scores recorded in libvmaf-shaped JSON files.
    Golden,
    Vulkan,
    Cuda,
    Opencl,
    /// A command that prints libvmaf JSON (a real `vmaf` binary, say).
    External,
}

impl BackendKind {
    pub const BUILTIN: [BackendKind; 5] =
        [BackendKind::Cpu, BackendKind::Golden, BackendKind::Vulkan, BackendKind::Cuda, BackendKind::Opencl];

    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::Cpu => "cpu",
            BackendKind::Golden => "golden",
            BackendKind::Vulkan => "vulkan",
            BackendKind::Cuda => "cuda",
            BackendKind::Opencl => "opencl",
            BackendKind::External => "external",
        }
    }

    pub fn from_name(name: &str) -> Option<BackendKind> {
        Self::BUILTIN.into_iter().find(|k| k.as_str() == name)
    }

    pub fn is_gpu(self) -> bool {
        matches!(self, BackendKind::Vulkan | BackendKind::Cuda | BackendKind::Opencl)
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackendDecl {
    /// Defaults to the backend's name when that is a builtin kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<BackendKind>,
    /// A required backend that cannot run makes its cells ERROR; an
    /// optional one makes them SKIP with the reason. Default: required.
    #[serde(default = "yes")]
    pub required: bool,
    /// Which device (GPU backends): an index, or a substring of its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceSelector>,
    /// The command an `external` backend runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<ExternalCommand>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum DeviceSelector {
    Index(u32),
    Name(String),
}

/// `--vulkan-device`'s text: a whole number is an index, anything else a
/// name (a case-insensitive part of the device's).
impl std::str::FromStr for DeviceSelector {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(s.parse().map(DeviceSelector::Index).unwrap_or_else(|_| DeviceSelector::Name(s.to_string())))
    }
}

impl std::fmt::Display for DeviceSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceSelector::Index(i) => write!(f, "{i}"),
            DeviceSelector::Name(n) => write!(f, "{n}"),
        }
    }
}

/// How an external backend is run and what device it declares.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExternalCommand {
    /// The program and its arguments, each a template. Placeholders:
    /// {reference} {distorted} (file paths; synthetic fixtures are written
    /// to temporary raw YUV files), {width} {height} {bit_depth}, {chroma}
    /// (420, 422, 444, 400), {pixel_format} (yuv420p, yuv420p10le, ...),
    /// {feature} (the feature's `feature_args`, else its name), {output}
    /// (a temporary file the command must write libvmaf's JSON to) and
    /// {threads} (1 in `run`, where sides run side by side; `bench --clip`'s
    /// `--threads`). `{{` and `}}` are literal braces.
    #[schemars(length(min = 1))]
    pub argv: Vec<String>,
    /// What {feature} becomes for a feature, e.g. `motion=debug=true`
    /// (default: the feature name). Required for features the gate gives
    /// options, so the command computes what the other side computes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub feature_args: BTreeMap<String, String>,
    /// Seconds before the command is killed (its cell is then ERROR).
    #[serde(default = "default_timeout")]
    #[schemars(range(min = 1))]
    pub timeout_s: u64,
    /// The device the command runs on, as reports should record it.
    pub device: DeclaredDevice,
}

fn default_timeout() -> u64 {
    600
}

/// The identity of an external backend's device, declared (not detected).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeclaredDevice {
    #[schemars(length(min = 1))]
    pub name: String,
    /// As Research-0041 spells it (`vulkan:0x8086:0x56a5`, `cuda:9.0`,
    /// `cpu:x86_64`): a `gpu` device's arch_id selects calibration rows.
    #[schemars(length(min = 1))]
    pub arch_id: String,
    #[serde(default)]
    pub kind: DeclaredKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_version: Option<String>,
}

/// What an external command computes on: `cpu` (the report records the
/// device as `external`) or `gpu` (recorded as `gpu`, so calibration rows
/// apply to its arch_id).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DeclaredKind {
    #[default]
    Cpu,
    Gpu,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PairDecl {
    /// `[a, b]`
    Short([String; 2]),
    Full(PairSpec),
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PairSpec {
    pub a: String,
    pub b: String,
    /// Only these features (default: every selected feature).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub features: Option<Vec<String>>,
    /// Only fixtures whose name matches one of these (exact, or a
    /// trailing-`*` prefix). Default: every fixture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixtures: Option<Vec<String>>,
    /// A tolerance for this pair that replaces the feature's (say, the
    /// printed precision of recorded scores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<PairTolerance>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PairTolerance {
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub abs: f64,
    /// Why this tolerance (an ADR or a document).
    #[schemars(length(min = 1))]
    pub adr: String,
}

impl PairDecl {
    pub fn spec(&self) -> PairSpec {
        match self {
            PairDecl::Short([a, b]) => {
                PairSpec { a: a.clone(), b: b.clone(), features: None, fixtures: None, tolerance: None }
            }
            PairDecl::Full(p) => p.clone(),
        }
    }
}

/// A reference/distorted pair: two files, or a synthetic spec.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FixtureDecl {
    #[schemars(length(min = 1))]
    pub name: String,
    /// Reference file (`.yuv` raw planar, or `.y4m`), relative to the gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distorted: Option<String>,
    /// Geometry of raw `.yuv` files (Y4M files carry their own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geometry: Option<Geometry>,
    /// Generate the pair instead of reading files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synthetic: Option<SyntheticSpec>,
    /// The number of frames the fixture must have (a check, not a limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub frames: Option<usize>,
    /// Folder of recorded libvmaf scores (`<feature>.json`) for the
    /// `golden` backend, relative to the gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub golden: Option<String>,
}
