use super::Outcome;
use crate::backend::OpenOptions;
use crate::config::gate::DeviceSelector;
use crate::config::{Diagnostics, load_gate};
use crate::gate::{self, Filters, RunOptions};
use crate::report::{self, render, terminal, write::Staged};
use anyhow::Context;
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
    /// Write the JSON report here.
    #[arg(long, value_name = "FILE")]
    json_out: Option<PathBuf>,
    /// Write the Markdown report (PR comment) here.
    #[arg(long, value_name = "FILE")]
    md_out: Option<PathBuf>,
    /// Render the Markdown with this minijinja template instead.
    #[arg(long, value_name = "FILE")]
    template: Option<PathBuf>,
    /// Vulkan device for every vulkan backend: an index or a name substring.
    #[arg(long, value_name = "INDEX|NAME")]
    vulkan_device: Option<String>,
    /// No progress bar and no summary table (the verdict line stays).
    #[arg(long, short)]
    quiet: bool,
}

pub fn run(args: Args) -> Outcome {
    let files = if args.gates.is_empty() { vec![PathBuf::from("gates/default.yaml")] } else { args.gates };
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
    let plan = gate::plan(gates, &filters)?;
    let template = match &args.template {
        Some(p) => std::fs::read_to_string(p).with_context(|| format!("cannot read template {}", p.display()))?,
        None => render::PR_COMMENT.to_string(),
    };
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
    let options = RunOptions { open: OpenOptions { vulkan_device }, progress: interactive && !args.quiet };
    let outcome = gate::execute(&plan, &options);
    let report = report::build(&plan, outcome);

    // Render everything before writing anything: no half-written reports.
    let mut staged = Staged::new();
    if let Some(path) = &args.json_out {
        staged.add(path, report::to_json(&report).as_bytes())?;
    }
    if let Some(path) = &args.md_out {
        staged.add(path, render::render(&report, &template)?.as_bytes())?;
    }
    staged.commit()?;
    if args.quiet {
        let s = &report.summary;
        println!(
            "{}: {} cells, {} OK, {} FAIL, {} ERROR, {} SKIP",
            report.status.as_str(),
            s.cells,
            s.ok,
            s.fail,
            s.error,
            s.skip
        );
    } else {
        println!("{}", terminal::summary_table(&report, interactive));
    }
    Ok(report.exit_code)
}
