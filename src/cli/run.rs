use super::Outcome;
use super::outputs::OutputArgs;
use crate::backend::OpenOptions;
use crate::config::gate::DeviceSelector;
use crate::config::{Diagnostics, load_gate};
use crate::gate::{self, Filters, RunOptions, ShardSpec};
use crate::report;
use std::io::IsTerminal;
use std::path::PathBuf;

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
    /// Vulkan device for every vulkan backend: an index or a name substring.
    #[arg(long, value_name = "INDEX|NAME")]
    vulkan_device: Option<String>,
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
    let vulkan_device = args.vulkan_device.map(|s| match s.parse::<u32>() {
        Ok(i) => DeviceSelector::Index(i),
        Err(_) => DeviceSelector::Name(s),
    });
    // A device asked for on the command line that does not exist is a usage
    // error (exit 2), even where vulkan is optional; a machine without a
    // loader or driver still SKIPs or ERRORs its cells as the gate says.
    if let Some(selector) = &vulkan_device {
        crate::backend::vulkan::check_selector(selector)
            .map_err(|e| anyhow::anyhow!("--vulkan-device {selector}: {e}"))?;
    }
    let interactive = std::io::stdout().is_terminal();
    let options = RunOptions { open: OpenOptions { vulkan_device }, progress: interactive && !args.out.quiet };
    let outcome = gate::execute(&plan, &options);
    let report = report::build(&plan, outcome);
    args.out.emit(&report, &template)?;
    Ok(report.exit_code)
}
