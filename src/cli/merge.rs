use super::Outcome;
use super::outputs::OutputArgs;
use crate::report::{self, merge};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// JSON reports: the shards of one run (`run --shard K/N`), and/or whole
    /// runs of different gates.
    #[arg(value_name = "REPORT", required = true)]
    reports: Vec<PathBuf>,
    #[command(flatten)]
    out: OutputArgs,
}

/// Exit status: the merged verdict's (0, 1, 2); 2 when the reports cannot
/// be merged, and then nothing is written.
pub fn run(args: Args) -> Outcome {
    let mut inputs = Vec::with_capacity(args.reports.len());
    for path in &args.reports {
        inputs.push(merge::Input { report: report::read(path)?, path: path.clone() });
    }
    let template = args.out.template()?;
    let merged = merge::merge(inputs)?;
    args.out.emit(&merged, &template)?;
    Ok(merged.exit_code)
}
