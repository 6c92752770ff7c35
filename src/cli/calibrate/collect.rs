use super::Outcome;
use crate::calibration::collect::{self, Request, SMOKE_DEVICE, SMOKE_FRAMES};
use crate::calibration::corpus::{self, COLUMNS, Format};
use crate::calibration::manifest::{self, Collected, CorpusFile, GateSource, Manifest, Requested, Role};
use crate::calibration::{sha256_hex, time};
use crate::cli::device_args::DeviceArgs;
use crate::cli::stdout::outln;
use crate::config::gate::DeviceSelector;
use crate::config::{Diagnostic, Diagnostics, load_gate};
use crate::report::model::Tool;
use crate::report::write::Staged;
use std::io::IsTerminal;
use std::path::PathBuf;

/// The gate `--smoke` collects: Research-0041's smallest set.
pub const SMOKE_GATE: &str = "gates/calibration-smoke.yaml";

#[derive(clap::Args)]
pub struct Args {
    /// The corpus to write: .csv, or .jsonl / .ndjson for JSON Lines.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// The corpus format, when the extension does not say it.
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Where the manifest sidecar goes (default: <out>.manifest.json).
    #[arg(long, value_name = "FILE")]
    manifest_out: Option<PathBuf>,
    /// Research-0041's smallest set: Mesa lavapipe (vulkan), vif, motion,
    /// psnr, float_ssim and psnr_hvs, 100 frames of a synthetic fixture
    /// (gates/calibration-smoke.yaml): 1,500 rows. Fails when lavapipe is
    /// not available.
    #[arg(long, conflicts_with_all = ["gate", "features", "backends", "fixtures", "frames"])]
    smoke: bool,
    /// The gate whose CPU-vs-GPU pairs to collect (default: gates/default.yaml).
    #[arg(long, value_name = "FILE")]
    gate: Option<PathBuf>,
    /// Only these features (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    features: Option<Vec<String>>,
    /// Only these GPU backends (comma-separated); the CPU reference is
    /// always scored.
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    backends: Option<Vec<String>>,
    /// Only these fixtures (names or trailing-* patterns, comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    fixtures: Option<Vec<String>>,
    /// At most N frames of each fixture.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    frames: Option<u64>,
    /// Hold a fixture's frames in memory, shared by every side that scores
    /// it, when both files together take at most MIB mebibytes (default
    /// 256); a larger fixture is read from its files frame by frame by each
    /// side as the side scores it, so its length costs no memory. 0 reads
    /// every file fixture frame by frame.
    #[arg(long, value_name = "MIB")]
    fixture_memory: Option<u64>,
    // --smoke picks lavapipe (llvmpipe) unless --vulkan-device says otherwise.
    #[command(flatten)]
    devices: DeviceArgs,
    /// Print only where the files went.
    #[arg(long, short)]
    quiet: bool,
}

pub fn run(args: Args) -> Outcome {
    let format = Format::resolve(args.format, &args.out)?;
    let manifest_path = args.manifest_out.clone().unwrap_or_else(|| manifest::default_path(&args.out));
    if manifest_path == args.out {
        return Err(anyhow::anyhow!("--manifest-out is the corpus itself ({})", args.out.display()).into());
    }
    let gate_path = match (&args.gate, args.smoke) {
        (Some(g), _) => g.clone(),
        (None, true) => PathBuf::from(SMOKE_GATE),
        (None, false) => PathBuf::from("gates/default.yaml"),
    };
    if args.gate.is_none() && !gate_path.exists() {
        let what = if args.smoke { "the --smoke gate" } else { "the default gate" };
        let d = Diagnostic::file(&gate_path, format!("file not found ({what})"))
            .expected("to run from the repository root, or --gate path/to/gate.yaml");
        return Err(Diagnostics::from(d).into());
    }
    let gate = load_gate(&gate_path)?;
    crate::report::write::check_writable([args.out.as_path(), manifest_path.as_path()])?;
    let gate_source = GateSource {
        name: gate.name.clone(),
        file: gate.file.display().to_string(),
        registry: gate.registry_file.display().to_string(),
    };
    let frames = if args.smoke { Some(SMOKE_FRAMES) } else { args.frames.map(|n| n as usize) };
    let mut open = args.devices.open_options(true)?;
    if args.smoke && open.vulkan_device.is_none() {
        open.vulkan_device = Some(DeviceSelector::Name(SMOKE_DEVICE.into()));
    }
    let requested = Requested { features: args.features, backends: args.backends, fixtures: args.fixtures };
    let collection = collect::collect(Request {
        gate,
        requested: requested.clone(),
        frames,
        smoke: args.smoke,
        open,
        progress: std::io::stderr().is_terminal() && !args.quiet,
        hold_fixtures_up_to: args.fixture_memory.map(|mib| mib.saturating_mul(1 << 20)),
    })?;

    let bytes = corpus::write(&collection.rows, format)?;
    let manifest = Manifest {
        schema_version: manifest::SCHEMA_VERSION,
        kind: manifest::KIND.into(),
        tool: Tool::this(),
        command_line: std::env::args().collect(),
        created: time::date_time(time::now_epoch()),
        corpus: CorpusFile {
            path: args.out.display().to_string(),
            format,
            columns: COLUMNS.iter().map(|c| c.to_string()).collect(),
            sha256: sha256_hex(&bytes),
        },
        smoke: args.smoke,
        gate: gate_source,
        frames_limit: frames,
        requested,
        features: collection.features,
        backends: collection.backends,
        fixtures: collection.fixtures,
        rows: collection.rows.len(),
    };
    let mut staged = Staged::new();
    staged.add(&args.out, &bytes)?;
    staged.add(&manifest_path, manifest::to_json(&manifest).as_bytes())?;
    staged.commit()?;

    if !args.quiet {
        for b in &manifest.backends {
            let role = if b.role == Role::Reference { "reference" } else { "gpu" };
            match (&b.device, &b.reason) {
                (Some(d), _) => outln!("{} ({role}): {} [{}], {} rows", b.name, d.name, d.arch_id, b.rows),
                (None, Some(r)) => outln!("{} ({role}): skipped: {r}", b.name),
                (None, None) => outln!("{} ({role}): skipped", b.name),
            }
        }
        for f in &manifest.features {
            match f.status {
                Collected::Collected => outln!("  {}: {} rows", f.name, f.rows),
                Collected::Skipped => outln!("  {}: skipped: {}", f.name, f.reasons.join("; ")),
            }
        }
        for fx in &manifest.fixtures {
            outln!("  fixture {}: {} frames, {}", fx.name, fx.frames, fx.geometry);
        }
    }
    outln!(
        "wrote {} rows to {} ({}) and the manifest to {}",
        manifest.rows,
        args.out.display(),
        format.as_str(),
        manifest_path.display()
    );
    Ok(0)
}
