//! The command line: one module per subcommand.

mod bench;
mod calibrate;
mod device_args;
mod devices;
mod merge;
mod outputs;
mod render;
mod run;
mod schema;
mod score;
pub(crate) mod stdout;
mod validate;
mod video;

use crate::config::Diagnostics;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Proves GPU backends compute the same VMAF features as the CPU reference.
///
/// Exit status: 0 every cell OK, 1 a cell FAILed, 2 a cell ERRORed or the
/// configuration or command line is invalid.
#[derive(Parser)]
#[command(name = "ulpgate", version, about, long_about = None, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run gates: compute every cell and print the verdict.
    Run(run::Args),
    /// Check gates, the feature registry and calibration tables.
    Validate(validate::Args),
    /// Write (or check) the JSON Schemas of every file format.
    Schema(schema::Args),
    /// List the devices of every backend this build knows.
    Devices(devices::Args),
    /// Re-render a saved JSON report as Markdown.
    Render(render::Args),
    /// Combine reports: the shards of one run, or runs of different gates.
    Merge(merge::Args),
    /// Print one backend's per-frame scores in libvmaf's JSON shape.
    Score(score::Args),
    /// Calibration (ADR-0234): collect a per-frame corpus, fit it, write
    /// measured tolerances back into the calibration table.
    Calibrate(calibrate::Args),
    /// Time a gate run and each side, or a clip's throughput per backend.
    Bench(bench::Args),
}

/// What a subcommand failed with.
pub enum Failure {
    /// Invalid configuration: located diagnostics.
    Config(Diagnostics),
    /// Anything else that stops a command before it has a verdict.
    Other(anyhow::Error),
}

impl From<Diagnostics> for Failure {
    fn from(d: Diagnostics) -> Self {
        Failure::Config(d)
    }
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure::Other(e)
    }
}

/// A subcommand's result: its exit code, or why it could not run (exit 2).
pub type Outcome = Result<u8, Failure>;

pub fn main() -> ExitCode {
    crate::trace::mark("started");
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Validate(args) => validate::run(args),
        Command::Schema(args) => schema::run(args),
        Command::Devices(args) => devices::run(args),
        Command::Render(args) => render::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Score(args) => score::run(args),
        Command::Calibrate(args) => calibrate::run(args),
        Command::Bench(args) => bench::run(args),
    };
    crate::trace::mark("command done");
    crate::kernel_times::print();
    let code = match result {
        Ok(code) => code,
        Err(Failure::Config(d)) => {
            d.print();
            2
        }
        Err(Failure::Other(e)) => {
            eprintln!("error: {e:#}");
            2
        }
    };
    // A reader that closed standard output early changes nothing; a write
    // that failed otherwise lost output, which is an error.
    if let Some(e) = stdout::failure() {
        eprintln!("error: cannot write to standard output: {e}");
        return ExitCode::from(code.max(2));
    }
    ExitCode::from(code)
}

/// `--vulkan-device`, checked at once: a device that does not exist is a
/// usage error (exit 2) naming the ones that do, not a backend that SKIPs.
/// A machine without a Vulkan loader or driver passes: opening the backend
/// then says so, as the gate's `required` decides. (`run` checks the same
/// while it reads the fixtures: `RunOptions::check_vulkan_device`.)
fn vulkan_device(arg: Option<String>) -> anyhow::Result<Option<crate::config::gate::DeviceSelector>> {
    let Some(arg) = arg else { return Ok(None) };
    let Ok(selector) = arg.parse();
    // The instance the check makes is not kept.
    drop(crate::backend::vulkan::check_selector(&selector).map_err(|e| anyhow::anyhow!("--vulkan-device {arg}: {e}"))?);
    Ok(Some(selector))
}
