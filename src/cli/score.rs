use super::Outcome;
use super::device_args::DeviceArgs;
use super::video::GeometryArgs;
use crate::backend::{self, SideFrames, SideRequest};
use crate::cli::stdout::out;
use crate::config::ResolvedBackend;
use crate::config::ResolvedFeature;
use crate::config::ResolvedFixture;
use crate::config::gate::BackendKind;
use crate::config::suggest::nearest;
use crate::features::{self, Options};
use crate::fixture::{FixtureError, open_pair};
use crate::report::write::Staged;
use crate::scores::to_libvmaf_json;
use anyhow::{Context, anyhow};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::OnceLock;

#[derive(clap::Args)]
pub struct Args {
    /// cpu, vulkan, cuda, opencl or golden.
    #[arg(long)]
    backend: String,
    /// A feature by its libvmaf name (psnr, float_psnr, ...).
    #[arg(long)]
    feature: String,
    /// Extractor option, `name=value` (repeatable): `--option enable_chroma=false`.
    #[arg(long = "option", value_name = "NAME=VALUE")]
    options: Vec<String>,
    /// Reference video: raw .yuv (give the geometry) or .y4m.
    #[arg(long)]
    reference: PathBuf,
    /// Distorted video, of the reference's geometry and frame count (raw
    /// .yuv or .y4m; both are read frame by frame as they are scored).
    #[arg(long)]
    distorted: PathBuf,
    #[command(flatten)]
    video: GeometryArgs,
    /// Folder of recorded scores (`--backend golden`).
    #[arg(long, value_name = "DIR")]
    golden: Option<PathBuf>,
    #[command(flatten)]
    devices: DeviceArgs,
    /// Write the JSON here instead of standard output.
    #[arg(long, value_name = "FILE")]
    json_out: Option<PathBuf>,
}

fn parse_options(given: &[String]) -> anyhow::Result<Options> {
    let mut options = Options::new();
    for o in given {
        let (k, v) = o.split_once('=').ok_or_else(|| anyhow!("--option {o}: expected NAME=VALUE"))?;
        let value = serde_json::from_str(v).unwrap_or_else(|_| serde_json::Value::String(v.to_string()));
        options.insert(k.to_string(), value);
    }
    Ok(options)
}

pub fn run(args: Args) -> Outcome {
    let kind = BackendKind::from_name(&args.backend).ok_or_else(|| {
        let names = BackendKind::BUILTIN.map(BackendKind::as_str);
        match nearest(&args.backend, names) {
            Some(s) => anyhow!("unknown backend `{}` (did you mean `{s}`?)", args.backend),
            None => anyhow!("unknown backend `{}`; expected one of: {}", args.backend, names.join(", ")),
        }
    })?;
    let imp = features::find(&args.feature).ok_or_else(|| {
        let names: Vec<&str> = features::implementations().map(|f| f.name).collect();
        match nearest(&args.feature, names.iter().copied()) {
            Some(s) => anyhow!("unknown feature `{}` (did you mean `{s}`?)", args.feature),
            None => anyhow!("unknown feature `{}`; this build implements: {}", args.feature, names.join(", ")),
        }
    })?;
    let options = parse_options(&args.options)?;
    let metrics = (imp.metrics)(&options)?;
    args.video.check_used(&[&args.reference, &args.distorted])?;
    let fixture = ResolvedFixture {
        name: "score".into(),
        reference: args.video.source(&args.reference)?,
        distorted: args.video.source(&args.distorted)?,
        golden: args.golden,
        expected_frames: None,
    };
    let feature = ResolvedFeature {
        name: imp.name.into(),
        metrics,
        tolerance: 0.0,
        adr: String::new(),
        precision: Default::default(),
        options,
        golden_file: imp.name.into(),
    };
    let decl = ResolvedBackend { name: args.backend.clone(), kind, required: true, device: None, command: None };
    crate::report::write::check_writable(args.json_out.as_deref())?;
    let open = args.devices.open_options(true)?;
    let backend = backend::open(&decl, &open).map_err(|r| anyhow!("{} unavailable: {r}", args.backend))?;
    backend.supports(&feature).map_err(|r| anyhow!("{}: {r}", args.backend))?;
    // Files (raw or Y4M) are read frame by frame as the side scores them:
    // a long clip costs no memory.
    // Frames scored on standard error where a person watches; the bar
    // learns the count when the files are opened (their sizes or the Y4M
    // index the pair builds anyway).
    let bar = if std::io::stderr().is_terminal() {
        crate::gate::execute::frames_bar(0)
    } else {
        indicatif::ProgressBar::hidden()
    };
    let slot: OnceLock<Result<SideFrames, FixtureError>> = OnceLock::new();
    let load = || {
        slot.get_or_init(|| {
            let pair = open_pair(&fixture.reference, &fixture.distorted, None, 0);
            if let Ok(pair) = &pair {
                bar.set_length(pair.frames() as u64);
            }
            pair
        })
        .clone()
    };
    let on_frame = || bar.inc(1);
    let request = SideRequest { feature: &feature, fixture: &fixture, frames: &load, on_frame: &on_frame };
    let out = backend.compute(&request).map_err(|e| anyhow!("{e}"));
    bar.finish_and_clear();
    let out = out?;
    // As in a gate: a GPU side that ran no kernel on its device has no score.
    crate::gate::execute::check_provenance(backend.as_ref(), &out).map_err(|e| anyhow!("{}: {e}", args.backend))?;
    let mut scores = out.scores;
    scores.retain(&feature.metrics);
    let mut extra = serde_json::Map::new();
    extra.insert("feature".into(), serde_json::json!(feature.name));
    extra.insert("device".into(), serde_json::to_value(&out.device).context("device serializes")?);
    if let Some(n) = out.dispatches {
        extra.insert("dispatches".into(), serde_json::json!(n));
    }
    let text = serde_json::to_string_pretty(&to_libvmaf_json(&scores, out.frames, extra)).expect("serializes") + "\n";
    match &args.json_out {
        Some(path) => {
            let mut staged = Staged::new();
            staged.add(path, text.as_bytes())?;
            staged.commit()?;
        }
        None => out!("{text}"),
    }
    Ok(0)
}
