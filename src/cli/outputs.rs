//! What `run` and `merge` write and print once they have a report: the
//! JSON, Markdown and JUnit files (all or none), the verdict, and GitHub
//! annotations.

use crate::cli::stdout::outln;
use crate::report::model::Report;
use crate::report::{self, annotations, junit, render, terminal, write::Staged, write::check_writable};
use anyhow::Context;
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct OutputArgs {
    /// Write the JSON report here.
    #[arg(long, value_name = "FILE")]
    pub json_out: Option<PathBuf>,
    /// Write the Markdown report (PR comment) here.
    #[arg(long, value_name = "FILE")]
    pub md_out: Option<PathBuf>,
    /// Write JUnit XML here (one test case per cell).
    #[arg(long, value_name = "FILE")]
    pub junit_out: Option<PathBuf>,
    /// Render the Markdown with this minijinja template instead.
    #[arg(long, value_name = "FILE", requires = "md_out")]
    pub template: Option<PathBuf>,
    /// No summary table: only why cells FAILed or ERRORed, and the verdict.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print no `::error` annotations, even under GitHub Actions.
    #[arg(long)]
    pub no_annotations: bool,
}

impl OutputArgs {
    /// The template to render Markdown with.
    pub fn template(&self) -> anyhow::Result<String> {
        match &self.template {
            Some(p) => std::fs::read_to_string(p).with_context(|| format!("cannot read template {}", p.display())),
            None => Ok(render::PR_COMMENT.to_string()),
        }
    }

    /// Fails at once where an output file could not be written, so a long
    /// run does not end in that error.
    pub fn check_writable(&self) -> anyhow::Result<()> {
        check_writable([&self.json_out, &self.md_out, &self.junit_out].into_iter().flatten().map(PathBuf::as_path))
    }

    /// Renders every output before writing any, then renames them all into
    /// place: no half-written reports. Then prints the verdict.
    pub fn emit(&self, report: &Report, template: &str) -> anyhow::Result<()> {
        let mut staged = Staged::new();
        if let Some(path) = &self.json_out {
            staged.add(path, report::to_json(report).as_bytes())?;
        }
        if let Some(path) = &self.md_out {
            let md = render::render(report, template).with_context(|| match &self.template {
                Some(t) => format!("template {}", t.display()),
                None => "the builtin PR comment template".into(),
            })?;
            staged.add(path, md.as_bytes())?;
        }
        if let Some(path) = &self.junit_out {
            staged.add(path, junit::to_junit(report).as_bytes())?;
        }
        staged.commit()?;
        for w in &report.warnings {
            eprintln!("warning: {w}");
        }
        if self.quiet {
            outln!("{}", terminal::quiet_summary(report));
        } else {
            outln!("{}", terminal::summary_table(report, std::io::stdout().is_terminal()));
        }
        if !self.no_annotations && annotations::under_github_actions() {
            for line in annotations::for_report(report) {
                outln!("{line}");
            }
        }
        Ok(())
    }
}
