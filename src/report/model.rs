//! The versioned JSON report (`schemas/report.schema.json`). Everything
//! outside `timing` is a pure function of the inputs: two runs on the same
//! inputs and machine give byte-identical reports apart from that block.

use crate::backend::DeviceInfo;
use crate::config::features::Precision;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The report format's version. Raise it when a field changes meaning or
/// goes away; new optional fields keep it.
pub const SCHEMA_VERSION: u32 = 1;

/// The report versions [`crate::report::read`] accepts.
pub const READABLE_VERSIONS: [u32; 1] = [1];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    /// Every metric within tolerance on every frame.
    Ok,
    /// At least one frame of one metric beyond tolerance, or non-finite.
    Fail,
    /// The comparison could not be made (see the note).
    Error,
    /// An optional backend could not run here (see the note).
    Skip,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::Fail => "FAIL",
            Status::Error => "ERROR",
            Status::Skip => "SKIP",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Report {
    #[schemars(extend("const" = 1))]
    pub schema_version: u32,
    pub tool: Tool,
    pub gates: Vec<GateRef>,
    /// The worst cell status (SKIP counts as OK).
    pub status: Status,
    /// 0 all OK, 1 a FAIL, 2 an ERROR.
    pub exit_code: u8,
    pub summary: Summary,
    /// Set when the run covered one shard of the cells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    pub cells: Vec<Cell>,
    /// What a reader must know about the run as a whole (an `--arch-id`
    /// that contradicts the detected device, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Wall-clock figures: the only part that differs between identical runs.
    pub timing: Timing,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

impl Tool {
    pub fn this() -> Self {
        Tool { name: "ulpgate".into(), version: env!("CARGO_PKG_VERSION").into() }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GateRef {
    pub name: String,
    pub file: String,
    pub registry: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<String>,
}

/// Which part of a plan a sharded run (`--shard K/N`) covered; `merge`
/// checks these to put the shards of one run back together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Shard {
    /// 1-based.
    #[schemars(range(min = 1))]
    pub index: usize,
    #[schemars(range(min = 1))]
    pub count: usize,
    /// Cells in the whole plan, every shard together.
    pub plan_cells: usize,
    /// A digest of the whole plan's cell ids, in order (`fnv1a64:...`):
    /// the shards of one run share it.
    pub plan_digest: String,
    /// Where each of this report's cells stands in the whole plan (0-based).
    pub positions: Vec<usize>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    pub cells: usize,
    pub ok: usize,
    pub fail: usize,
    pub error: usize,
    pub skip: usize,
}

impl Summary {
    pub fn of(cells: &[Cell]) -> Self {
        let count = |s| cells.iter().filter(|c| c.status == s).count();
        Summary {
            cells: cells.len(),
            ok: count(Status::Ok),
            fail: count(Status::Fail),
            error: count(Status::Error),
            skip: count(Status::Skip),
        }
    }

    /// The overall status and exit code: ERROR beats FAIL beats OK.
    pub fn verdict(&self) -> (Status, u8) {
        if self.error > 0 {
            (Status::Error, 2)
        } else if self.fail > 0 {
            (Status::Fail, 1)
        } else {
            (Status::Ok, 0)
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Cell {
    /// `gate/feature/a-vs-b/fixture`.
    pub id: String,
    pub gate: String,
    pub feature: String,
    /// The reference side of the diff.
    pub backend_a: String,
    pub backend_b: String,
    pub fixture: String,
    pub status: Status,
    /// Why a cell is ERROR or SKIP, or what else a reader should know.
    pub note: String,
    pub tolerance_abs: f64,
    /// `default`, `calibrated:<pattern>`, `placeholder:<pattern>`,
    /// `placeholder-default:<pattern>`, `no-calibration:<arch_id>`, or
    /// `pair:<a>-vs-<b>` for a pair's own tolerance.
    pub tolerance_source: String,
    pub adr: String,
    pub precision: Precision,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_frames: Option<usize>,
    pub metrics: Vec<String>,
    /// ADR-0214's flat fields: metric → max |a − b| (null: no finite frame).
    pub per_metric_max_abs_diff: BTreeMap<String, Option<f64>>,
    pub per_metric_mismatches: BTreeMap<String, usize>,
    /// Full per-metric detail, including the worst frame.
    pub per_metric: BTreeMap<String, MetricDiff>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_a: Option<DeviceInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_b: Option<DeviceInfo>,
    /// `--arch-id` overrides of this cell's GPU sides: the id the device
    /// reported and the one the calibration lookup used instead.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arch_overrides: Vec<ArchOverride>,
    /// Per-frame |a − b| of the worst metric, for FAIL cells (charts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_series: Option<Series>,
    /// Set under `run --gpu-calibrated` for cells with a GPU side: the
    /// offsets added to GPU scores, and the raw (uncalibrated) diffs. The
    /// cell's own diffs and status are then those of the calibrated scores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibrated: Option<Calibrated>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArchOverride {
    /// The backend name in the gate.
    pub backend: String,
    /// The arch_id its device reported.
    pub detected: String,
    /// The arch_id `--arch-id` gave, which the lookup used.
    pub used: String,
}

/// The offset tier (ADR-0234 alternative (d)) as applied to one cell.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Calibrated {
    /// The `calibrate fit --json-out` file the offsets came from.
    pub offsets_file: String,
    /// GPU backend → metric → the offset added to its every frame.
    pub offsets: BTreeMap<String, BTreeMap<String, AppliedOffset>>,
    /// GPU sides and metrics without a fitted offset in the file
    /// (`backend on arch_id (metric, ...)`): compared raw.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// What the cell's status would be on raw scores.
    pub status_raw: Status,
    /// Max |a − b| per metric on raw scores (the cell's own field holds the
    /// calibrated one).
    pub per_metric_max_abs_diff_raw: BTreeMap<String, Option<f64>>,
    pub per_metric_mismatches_raw: BTreeMap<String, usize>,
}

impl Calibrated {
    pub fn new(offsets_file: &str) -> Self {
        Calibrated {
            offsets_file: offsets_file.to_string(),
            offsets: BTreeMap::new(),
            missing: Vec::new(),
            status_raw: Status::Ok,
            per_metric_max_abs_diff_raw: BTreeMap::new(),
            per_metric_mismatches_raw: BTreeMap::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppliedOffset {
    /// Added to the GPU score (cpu ≈ gpu + offset).
    pub offset: f64,
    /// The fit's ADR-0234 decision for this (arch, backend, feature,
    /// metric): `bit-exact`, `offset`, `model` or `undetermined`.
    pub decision: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetricDiff {
    /// Largest |a − b| over frames where both are finite.
    pub max_abs_diff: Option<f64>,
    /// Frames beyond tolerance, plus frames with a non-finite value.
    pub mismatches: usize,
    /// Frames where either side is NaN or infinite.
    pub non_finite: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_non_finite_frame: Option<usize>,
    /// The frame of `max_abs_diff` (0-based) and the two values there.
    pub worst_frame: Option<usize>,
    pub worst_a: Option<f64>,
    pub worst_b: Option<f64>,
    /// Largest distance in f32 units in the last place.
    pub max_ulp_f32: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Series {
    pub metric: String,
    /// Per frame; null where a side is non-finite.
    pub abs_diff: Vec<Option<f64>>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Timing {
    pub wall_seconds: f64,
    pub sides: Vec<SideTiming>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SideTiming {
    pub backend: String,
    pub feature: String,
    pub fixture: String,
    pub frames: usize,
    /// The wall time of the pass that computed the side.
    pub seconds: f64,
    /// The features computed in the same pass, sharing its work (float_ssim
    /// and float_ms_ssim where their first SSIM map is the same):
    /// `seconds` is that pass's, counted in each of its sides. Absent: the
    /// side was computed alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub joint: Vec<String>,
}
