use super::Outcome;
use crate::cli::stdout::out;
use crate::report::write::Staged;
use crate::report::{self, render};
use anyhow::Context;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// A JSON report written by `ulpgate run --json-out`.
    report: PathBuf,
    /// A minijinja template (default: the PR comment).
    #[arg(long, value_name = "FILE")]
    template: Option<PathBuf>,
    /// Use a builtin template: pr-comment or step-summary.
    #[arg(long, value_name = "NAME", conflicts_with = "template", value_parser = ["pr-comment", "step-summary"])]
    builtin: Option<String>,
    /// Write here instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    out: Option<PathBuf>,
}

pub fn run(args: Args) -> Outcome {
    let report = report::read(&args.report)?;
    let template = match (&args.template, args.builtin.as_deref()) {
        (Some(p), _) => std::fs::read_to_string(p).with_context(|| format!("cannot read template {}", p.display()))?,
        (None, Some("step-summary")) => render::STEP_SUMMARY.to_string(),
        _ => render::PR_COMMENT.to_string(),
    };
    let md = render::render(&report, &template).with_context(|| match (&args.template, args.builtin.as_deref()) {
        (Some(t), _) => format!("template {}", t.display()),
        (None, name) => format!("the builtin {} template", name.unwrap_or("pr-comment")),
    })?;
    match &args.out {
        Some(path) => {
            let mut staged = Staged::new();
            staged.add(path, md.as_bytes())?;
            staged.commit()?;
        }
        None => out!("{md}"),
    }
    Ok(0)
}
