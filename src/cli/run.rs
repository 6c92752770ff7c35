use super::Outcome;
use super::device_args::DeviceArgs;
use super::outputs::OutputArgs;
use crate::calibration::offsets::Offsets;
use crate::config::suggest::nearest;
use crate::config::{Diagnostics, load_gate};
use crate::gate::{self, Filters, RunOptions, ShardSpec};
use crate::report;
use anyhow::bail;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct Args {
    /// Gate files to run (default: gates/default.yaml).
    #[arg(value_name = "GATE")]
    gates: Vec<PathBuf>,
    /// Only these features (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    features: Option<Vec<String>>,
    /// Only cells whose two backends are both listed (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    backends: Option<Vec<String>>,
    /// Only these fixtures (names or trailing-* patterns, comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    fixtures: Option<Vec<String>>,
    /// Run shard K of N: a deterministic, balanced part of the cells (every
    /// cell is in exactly one shard). `ulpgate merge` puts the reports back
    /// together.
    #[arg(long, value_name = "K/N")]
    shard: Option<ShardSpec>,
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    devices: DeviceArgs,
    /// Look BACKEND's calibration up as arch_id ID instead of the id its
    /// device reports (repeatable). An ID that differs from the detected one
    /// is used, and reported as a warning in the report and on every cell.
    #[arg(long = "arch-id", value_name = "BACKEND=ID")]
    arch_ids: Vec<String>,
    /// Add the per-cell scalar offsets of a `calibrate fit --json-out` file
    /// to GPU sides before diffing (never to the CPU reference or recorded
    /// scores); the report shows raw and calibrated differences.
    #[arg(long, value_name = "FIT_JSON")]
    gpu_calibrated: Option<PathBuf>,
    /// Hold a fixture's frames in memory, shared by every side that scores
    /// it, when both files together take at most MIB mebibytes (default
    /// 256); a larger fixture is read from its files frame by frame by each
    /// side as the side scores it, so its length costs no memory. 0 reads
    /// every file fixture frame by frame.
    #[arg(long, value_name = "MIB")]
    fixture_memory: Option<u64>,
}

/// Parses `--arch-id BACKEND=ID` against the gates' GPU backends.
fn parse_arch_ids(given: &[String], gates: &[crate::config::ResolvedGate]) -> anyhow::Result<BTreeMap<String, String>> {
    let gpu: Vec<&str> =
        gates.iter().flat_map(|g| g.backends.values()).filter(|b| b.kind.is_gpu()).map(|b| b.name.as_str()).collect();
    let mut out = BTreeMap::new();
    for item in given {
        let Some((backend, id)) = item.split_once('=').filter(|(b, i)| !b.is_empty() && !i.is_empty()) else {
            bail!("--arch-id {item}: expected BACKEND=ID, e.g. --arch-id vulkan=vulkan:0x10de:0x2684");
        };
        if !gpu.contains(&backend) {
            let hint =
                nearest(backend, gpu.iter().copied()).map_or(String::new(), |s| format!(" (did you mean `{s}`?)"));
            bail!(
                "--arch-id {item}: `{backend}` is not a GPU backend of the gate{hint}; GPU backends: {}",
                if gpu.is_empty() { "none".to_string() } else { gpu.join(", ") }
            );
        }
        if id.contains('*') {
            bail!("--arch-id {item}: an arch_id is one device's id, not a pattern");
        }
        if let Some(previous) = out.insert(backend.to_string(), id.to_string())
            && previous != id
        {
            bail!("--arch-id: `{backend}` given twice ({previous} and {id})");
        }
    }
    Ok(out)
}

pub fn run(args: Args) -> Outcome {
    let files = if args.gates.is_empty() {
        let default = PathBuf::from("gates/default.yaml");
        if !default.exists() {
            let d = crate::config::Diagnostic::file(&default, "file not found (the default gate)")
                .expected("to run from the repository root, or a gate file: `ulpgate run path/to/gate.yaml`");
            return Err(Diagnostics::from(d).into());
        }
        vec![default]
    } else {
        args.gates
    };
    let mut gates = Vec::new();
    let mut diags = Diagnostics::default();
    for f in &files {
        match load_gate(f) {
            Ok(g) => gates.push(g),
            Err(d) => diags.extend(d),
        }
    }
    diags.into_result()?;
    let filters = Filters { features: args.features, backends: args.backends, fixtures: args.fixtures };
    let mut plan = gate::plan(gates, &filters)?;
    if let Some(spec) = args.shard {
        plan = gate::shard::select(plan, spec);
        if plan.cells.is_empty() {
            eprintln!(
                "note: shard {spec} has no cells: cells that share a computed side stay in one shard, and the plan has \
                 fewer such groups than shards"
            );
        }
    }
    let template = args.out.template()?;
    args.out.check_writable()?;
    // A device asked for on the command line that does not exist is a usage
    // error (exit 2), even where its backend is optional (vulkan's is
    // checked while the fixtures are read: `check_vulkan_device`); a machine
    // without a loader or driver still SKIPs or ERRORs its cells as the gate
    // says.
    let open = args.devices.open_options(false)?;
    let arch_ids = parse_arch_ids(&args.arch_ids, &plan.gates)?;
    let offsets = match &args.gpu_calibrated {
        Some(path) => Some(Arc::new(Offsets::load(path)?)),
        None => None,
    };
    // The bar is drawn on standard error: shown where that is a terminal,
    // whatever standard output goes to.
    let interactive = std::io::stderr().is_terminal();
    let options = RunOptions {
        open,
        progress: interactive && !args.out.quiet,
        max_frames: None,
        arch_ids,
        offsets,
        check_vulkan_device: true,
        fingerprint_fixtures: false,
        hold_fixtures_up_to: args.fixture_memory.map(|mib| mib.saturating_mul(1 << 20)),
    };
    crate::trace::mark("gates loaded and planned");
    let outcome = gate::execute(&plan, &options).map_err(anyhow::Error::msg)?;
    crate::trace::mark("cells assembled (backends released)");
    let report = report::build(&plan, outcome);
    args.out.emit(&report, &template)?;
    crate::trace::mark("reports written");
    Ok(report.exit_code)
}
