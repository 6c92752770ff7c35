//! `ulpgate calibrate`: the ADR-0234 calibration workflow, collect → fit
//! (→ --write-table) → `run --gpu-calibrated`.

mod collect;
mod fit;

use super::Outcome;
use clap::Subcommand;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Score fixtures on each GPU backend and on the CPU reference, and
    /// write one corpus row per (arch_id, backend, feature, metric, fixture,
    /// frame), with a manifest sidecar.
    Collect(collect::Args),
    /// Fit cpu ~ gpu per (arch_id, backend, feature, metric), decide offset
    /// vs model (ADR-0234), check the bars on held-out frames; optionally
    /// write the measured tolerances into the calibration table.
    Fit(fit::Args),
}

pub fn run(args: Args) -> Outcome {
    match args.command {
        Command::Collect(a) => collect::run(a),
        Command::Fit(a) => fit::run(a),
    }
}
