//! The feature registry (`gates/features.yaml`): every feature the gate
//! knows, its metrics, default tolerance and the ADR that justifies it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The version of ulpgate's configuration and report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("const" = 1))]
pub struct SchemaVersion(pub u32);

impl Default for SchemaVersion {
    fn default() -> Self {
        SchemaVersion(1)
    }
}

/// `gates/features.yaml`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeatureRegistry {
    pub schema_version: SchemaVersion,
    /// Feature name (libvmaf's `--feature` name) → definition.
    pub features: BTreeMap<String, FeatureSpec>,
}

/// Arithmetic precision of a feature's GPU kernels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    #[default]
    Fp32,
    /// Half precision: the tolerance is forced to 1e-2.
    Fp16,
}

/// The absolute tolerance every fp16 feature gets.
pub const FP16_TOLERANCE: f64 = 1e-2;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeatureSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The metrics the extractor emits, by the names libvmaf prints.
    #[schemars(length(min = 1), extend("uniqueItems" = true))]
    pub metrics: Vec<String>,
    /// Default absolute per-frame tolerance (places=4 is 5e-5).
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub tolerance: f64,
    /// The ADR (or ADRs) that justify the tolerance.
    #[schemars(length(min = 1))]
    pub adr: String,
    #[serde(default)]
    pub precision: Precision,
    /// Extractor options a gate may set.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, OptionSpec>,
    /// Stem of the recorded-scores file for the `golden` backend
    /// (default: the feature name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub golden_file: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The value libvmaf uses when the option is not given. Its type is
    /// the option's type: a value of another type is refused, and so is a
    /// fraction where the default is a whole number (libvmaf's int options).
    pub default: Value,
    /// libvmaf's short name for the option, accepted in its place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// A feature parameter (libvmaf's VMAF_OPT_FLAG_FEATURE_PARAM): a value
    /// other than the default renames the metrics, as libvmaf does
    /// (`integer_vif_scale0_egl_1`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub feature_param: bool,
    /// The smallest value libvmaf's option table accepts (numbers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// The largest value libvmaf's option table accepts (numbers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// Metrics emitted in addition when the option is set to `true`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adds_metrics: Vec<String>,
    /// Recorded-scores file stem to use when the option is `true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub golden_file: Option<String>,
}
