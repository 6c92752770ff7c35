//! `ulpgate bench`: times a gate run and each of its sides, or a clip's
//! throughput per feature and backend (see `crate::bench`).

use super::Outcome;
use super::device_args::DeviceArgs;
use super::video::GeometryArgs;
use crate::backend::OpenOptions;
use crate::backend::external::libvmaf_backend;
use crate::bench::{clip, gate};
use crate::cli::stdout::outln;
use crate::config::ResolvedBackend;
use crate::config::gate::BackendKind;
use crate::config::suggest::nearest;
use crate::config::{Diagnostics, load_gate};
use crate::gate::Filters;
use crate::report::write::Staged;
use anyhow::{Context, anyhow};
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Gate files to time (default: gates/default.yaml). Not with --clip.
    #[arg(value_name = "GATE")]
    gates: Vec<PathBuf>,
    /// Only these features (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    features: Option<Vec<String>>,
    /// Gate mode: only cells whose two backends are both listed. Clip mode:
    /// the backends to measure, in order (default cpu,vulkan, and vmaf with
    /// --vmaf): built-in ones, or names --gate or --vmaf declares.
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    backends: Option<Vec<String>>,
    /// Clip mode: take backend declarations from this gate's `backends:`
    /// (an external command such as a real `vmaf`, a GPU backend's device).
    #[arg(long = "gate", value_name = "GATE", requires = "clip")]
    declarations: Option<PathBuf>,
    /// Clip mode: time this libvmaf `vmaf` binary as the external backend
    /// `vmaf` (`-r {reference} -d {distorted} -w -h -p -b --feature
    /// {feature} --no_prediction --threads {threads} --quiet --json -o
    /// {output}`), side by side with the CPU reference at the same threads.
    #[arg(long, value_name = "PATH", requires = "clip")]
    vmaf: Option<PathBuf>,
    /// Gate mode: only these fixtures (names or trailing-* patterns).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    fixtures: Option<Vec<String>>,
    #[command(flatten)]
    devices: DeviceArgs,
    /// Gate mode: whole runs timed as separate processes (start to exit).
    #[arg(long, default_value_t = 5, value_name = "N", conflicts_with = "clip")]
    runs: usize,
    /// Gate mode: timed repetitions of each side alone (median reported).
    #[arg(long, default_value_t = 3, value_name = "N", conflicts_with = "clip")]
    repeat: usize,
    /// Gate mode: hold a fixture's frames in memory up to MIB mebibytes, as
    /// `run --fixture-memory` does (default 256; 0 reads every file fixture
    /// frame by frame), in the process runs, the in-process run and the
    /// sides alone.
    #[arg(long, value_name = "MIB")]
    fixture_memory: Option<u64>,
    /// Gate mode: seconds of a reference run (e.g. the old gate's) to
    /// compare the median process time with.
    #[arg(long, value_name = "SECONDS", conflicts_with = "clip")]
    baseline_seconds: Option<f64>,
    /// Clip mode: a reference and a distorted video (.yuv or .y4m).
    #[arg(long, num_args = 2, value_names = ["REF", "DIST"])]
    clip: Option<Vec<PathBuf>>,
    #[command(flatten)]
    video: GeometryArgs,
    /// Clip mode: frame pairs per measurement (the clip loops).
    #[arg(long, default_value_t = 240, value_name = "N", requires = "clip")]
    frames: usize,
    /// Clip mode: host threads reading and uploading frames for a GPU
    /// backend (default: as `run` does: up to 4 on a GPU, 1 on a CPU
    /// driver), for the CPU reference the workers its frames are spread
    /// over, as libvmaf's `--threads` (default 1; a temporal feature's
    /// workers each take a run of frames),
    /// and an external command's `{threads}` (default 1). A list
    /// (`1,2`) measures each count in turn.
    #[arg(long, value_delimiter = ',', value_name = "N[,N...]", requires = "clip")]
    threads: Vec<usize>,
    /// Clip mode: take every measurement this many times, the backends in
    /// turn each time, and report the median (robust to other work on the
    /// machine).
    #[arg(long, default_value_t = 1, value_name = "N", requires = "clip")]
    rounds: usize,
    /// Clip mode: bytes per upload of the bandwidth measurement, in MiB.
    #[arg(long, default_value_t = 32, value_name = "MIB", requires = "clip")]
    bandwidth_mib: usize,
    /// Write the results as JSON here too.
    #[arg(long, value_name = "FILE")]
    json_out: Option<PathBuf>,
}

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED).set_header(header.to_vec());
    for i in 0..header.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "—".into(), |x| format!("{x:.digits$}"))
}

fn write_json(path: &Option<PathBuf>, value: &impl serde::Serialize) -> anyhow::Result<()> {
    if let Some(path) = path {
        let text = serde_json::to_string_pretty(value).context("bench results serialize")? + "\n";
        let mut staged = Staged::new();
        staged.add(path, text.as_bytes())?;
        staged.commit()?;
    }
    Ok(())
}

pub fn run(args: Args) -> Outcome {
    crate::report::write::check_writable(args.json_out.as_deref())?;
    let open = args.devices.open_options(true)?;
    match &args.clip {
        Some(paths) => run_clip(&args, paths, open),
        None => run_gate(&args, open),
    }
}

fn run_gate(args: &Args, open: OpenOptions) -> Outcome {
    // The other clip-mode flags `requires = "clip"`; these are shared with `score`.
    if args.video.given() {
        return Err(anyhow!("--width, --height, --bit-depth and --chroma describe a --clip's raw YUV").into());
    }
    let files = if args.gates.is_empty() { vec![PathBuf::from("gates/default.yaml")] } else { args.gates.clone() };
    let mut gates = Vec::new();
    let mut diags = Diagnostics::default();
    for f in &files {
        match load_gate(f) {
            Ok(g) => gates.push(g),
            Err(d) => diags.extend(d),
        }
    }
    diags.into_result()?;
    let filters =
        Filters { features: args.features.clone(), backends: args.backends.clone(), fixtures: args.fixtures.clone() };
    let plan = crate::gate::plan(gates, &filters)?;

    let mut run_args: Vec<String> = vec!["run".into()];
    run_args.extend(files.iter().map(|f| f.display().to_string()));
    run_args.push("--quiet".into());
    for (flag, list) in [("--features", &args.features), ("--backends", &args.backends), ("--fixtures", &args.fixtures)]
    {
        if let Some(l) = list {
            run_args.extend([flag.to_string(), l.join(",")]);
        }
    }
    run_args.extend(args.devices.to_args());
    if let Some(mib) = args.fixture_memory {
        run_args.extend(["--fixture-memory".to_string(), mib.to_string()]);
    }
    let hold_fixtures_up_to = args.fixture_memory.map(|mib| mib.saturating_mul(1 << 20));
    let options = gate::Options { run_args, process_runs: args.runs, repeat: args.repeat, open, hold_fixtures_up_to };
    let result = gate::run(&plan, files, &options)?;

    let mut whole = table(&["Whole run", "Seconds", "Note"]);
    if let Some(w) = result.process.wall {
        let codes: Vec<String> =
            result.process.exit_codes.iter().map(|c| c.map_or("signal".into(), |c| c.to_string())).collect();
        whole.add_row(vec![
            format!("process, start to exit (median of {})", w.runs),
            format!("{:.3}", w.median),
            format!("min {:.3}, max {:.3}; exit {}", w.min, w.max, codes.join(",")),
        ]);
        if let Some(base) = args.baseline_seconds {
            whole.add_row(vec![
                "baseline given".into(),
                format!("{base:.3}"),
                format!("{:.1}x faster", base / w.median),
            ]);
        }
    }
    let ip = &result.in_process;
    whole.add_row(vec![
        "in-process gate run, drivers loaded (opens, kernels, sides, diffs)".into(),
        format!("{:.3}", ip.gate_seconds),
        format!("{}: {} of {} cells OK", ip.status, ip.ok, ip.cells),
    ]);
    for o in &result.open {
        let note = match (&o.device, &o.error) {
            (Some(d), _) => format!("{} [{}]", d.name, d.arch_id),
            (None, Some(e)) => format!("unavailable: {e}"),
            _ => String::new(),
        };
        whole.add_row(vec![format!("open {} in this process", o.backend), format!("{:.3}", o.seconds), note]);
    }
    outln!("{whole}");

    let mut sides = table(&["Feature", "Fixture", "Backend", "Frames", "ms/frame", "fps", "vs cpu"]);
    for s in &result.sides {
        let (ms, fps) = match &s.error {
            Some(e) => (format!("error: {e}"), String::new()),
            None => (format!("{:.3}", s.ms_per_frame), format!("{:.1}", s.fps)),
        };
        sides.add_row(vec![
            s.feature.clone(),
            s.fixture.clone(),
            s.backend.clone(),
            s.frames.to_string(),
            ms,
            fps,
            opt(s.speedup_vs_cpu, 2),
        ]);
    }
    outln!("Each side alone, warm (median of {}):\n{sides}", args.repeat.max(1));
    let mut totals = table(&["Feature", "Backend", "Frames", "ms/frame", "fps", "vs cpu"]);
    for t in &result.totals {
        totals.add_row(vec![
            t.feature.clone(),
            t.backend.clone(),
            t.frames.to_string(),
            format!("{:.3}", t.ms_per_frame),
            format!("{:.1}", t.fps),
            opt(t.speedup_vs_cpu, 2),
        ]);
    }
    outln!("Per feature and backend, all fixtures:\n{totals}");
    write_json(&args.json_out, &result)?;
    Ok(0)
}

/// The backends `--clip` measures, declared: built-in kinds by name, and
/// what `--gate` and `--vmaf` declare.
fn clip_backends(args: &Args) -> anyhow::Result<Vec<ResolvedBackend>> {
    let mut declared: BTreeMap<String, ResolvedBackend> = BTreeMap::new();
    if let Some(path) = &args.declarations {
        let mut diags = Diagnostics::default();
        match load_gate(path) {
            Ok(g) => declared = g.backends,
            Err(d) => diags.extend(d),
        }
        diags.into_result()?;
    }
    if let Some(program) = &args.vmaf {
        if declared.contains_key("vmaf") {
            return Err(anyhow!(
                "--vmaf declares backend `vmaf`, which {} declares too: drop one",
                args.declarations.as_ref().map_or(String::new(), |p| p.display().to_string())
            ));
        }
        let vmaf = libvmaf_backend("vmaf", program).map_err(|e| anyhow!("--vmaf: {e}"))?;
        declared.insert("vmaf".into(), vmaf);
    }
    let names = match &args.backends {
        Some(names) => {
            if args.vmaf.is_some() && !names.iter().any(|n| n == "vmaf") {
                return Err(anyhow!("--vmaf declares backend `vmaf`: name it in --backends (say cpu,vmaf)"));
            }
            names.clone()
        }
        None => {
            let mut names = vec!["cpu".to_string(), "vulkan".to_string()];
            if args.vmaf.is_some() {
                names.push("vmaf".into());
            }
            names
        }
    };
    names
        .iter()
        .map(|name| {
            if let Some(decl) = declared.get(name) {
                return Ok(decl.clone());
            }
            let kind = BackendKind::from_name(name).ok_or_else(|| {
                let known: Vec<&str> = BackendKind::BUILTIN
                    .iter()
                    .map(|k| k.as_str())
                    .chain(declared.keys().map(String::as_str))
                    .collect();
                let hint =
                    nearest(name, known.iter().copied()).map_or(String::new(), |s| format!(" (did you mean `{s}`?)"));
                anyhow!(
                    "unknown backend `{name}`{hint}: not built in ({}), and neither --gate nor --vmaf declares it",
                    BackendKind::BUILTIN.map(|k| k.as_str()).join(", ")
                )
            })?;
            Ok(ResolvedBackend { name: name.clone(), kind, required: true, device: None, command: None })
        })
        .collect()
}

fn run_clip(args: &Args, paths: &[PathBuf], open: OpenOptions) -> Outcome {
    if !args.gates.is_empty() {
        return Err(
            anyhow!("--clip times a clip, not gates: drop the GATE arguments (--gate declares backends)").into()
        );
    }
    if args.fixture_memory.is_some() {
        return Err(anyhow!("--fixture-memory is for gates: --clip reads its files frame by frame").into());
    }
    args.video.check_used(&[&paths[0], &paths[1]])?;
    let features = args.features.clone().unwrap_or_else(|| {
        crate::features::implementations().filter(|f| f.gpu.is_some()).map(|f| f.name.to_string()).collect()
    });
    let options = clip::Options {
        reference: args.video.source(&paths[0])?,
        distorted: args.video.source(&paths[1])?,
        frames: args.frames,
        features,
        backends: clip_backends(args)?,
        open,
        bandwidth_bytes: args.bandwidth_mib.max(1) << 20,
        threads: args.threads.clone(),
        rounds: args.rounds,
    };
    let result = clip::run(&options)?;

    let mut backends = table(&["Backend", "Device", "Open s", "Host→device GB/s (threads)"]);
    for b in &result.backends {
        let device = match (&b.device, &b.error) {
            (Some(d), _) => format!("{} [{}]", d.name, d.arch_id),
            (None, Some(e)) => format!("unavailable: {e}"),
            _ => String::new(),
        };
        let h2d: Vec<String> =
            b.h2d.iter().map(|h| format!("{:.2} ({})", h.bytes_per_second / 1e9, h.threads)).collect();
        backends.add_row(vec![
            b.backend.clone(),
            device,
            format!("{:.3}", b.open_seconds),
            if h2d.is_empty() { "—".into() } else { h2d.join(", ") },
        ]);
    }
    let m = &result.machine;
    outln!(
        "{} vs {} ({}, {} frames), {} frame pairs per figure, the median of {} round(s)\nmachine: {} ({} CPUs, {} {}), {}\n{backends}",
        result.reference,
        result.distorted,
        result.geometry,
        result.clip_frames,
        result.frames,
        result.rounds,
        m.cpu_model.as_deref().unwrap_or("unknown CPU"),
        m.cpus,
        m.os,
        m.arch,
        result.date,
    );
    let mut t = table(&[
        "Feature",
        "Backend",
        "Threads",
        "fps (upload incl.)",
        "ms/frame",
        "Setup s",
        "fps (resident)",
        "ms/frame",
        "Upload B/pair",
        "Upload-bound fps",
        "incl./bound",
        "vs cpu",
        "max |Δ| vs cpu",
    ]);
    for r in &result.throughput {
        if let Some(e) = &r.error {
            t.add_row(vec![r.feature.clone(), r.backend.clone(), r.threads.to_string(), format!("error: {e}")]);
            continue;
        }
        t.add_row(vec![
            r.feature.clone(),
            r.backend.clone(),
            r.threads.to_string(),
            format!("{:.1}", r.upload_included_fps),
            format!("{:.3}", r.upload_included_ms_per_frame),
            opt(r.setup_seconds, 3),
            opt(r.upload_excluded_fps, 1),
            opt(r.upload_excluded_ms_per_frame, 3),
            r.upload_bytes_per_pair.map_or_else(|| "—".into(), |b| b.to_string()),
            opt(r.upload_bound_fps, 0),
            opt(r.upload_included_vs_bound, 3),
            opt(r.speedup_vs_cpu, 2),
            r.max_abs_diff_vs_cpu.map_or_else(|| "—".into(), crate::report::number),
        ]);
    }
    outln!("{t}");
    if result.throughput.iter().any(|r| r.setup_seconds.is_some()) {
        outln!(
            "GPU rows' upload-included figures are the steady state: the clock starts once every worker \
             thread has its buffers and streams and has scored {} frames; `Setup s` is that time, paid once \
             per run.",
            clip::WARM_UP_FRAMES
        );
    }
    if result.throughput.iter().any(|r| r.reading_thread == Some(true)) {
        outln!(
            "cpu rows read as libvmaf's `--threads N` does: N workers score while, where a core is left, one \
             more thread reads the next frame pairs (not for temporal features, whose workers read the \
             earlier frames they need)."
        );
    }
    let externals: Vec<&clip::Throughput> =
        result.throughput.iter().filter(|r| r.process_runs.is_some() && r.error.is_none()).collect();
    if let Some(first) = externals.first() {
        outln!(
            "External backends run as whole processes: start-up, reading the files and writing their JSON \
             count in their time, {} run(s) of the {}-frame clip per round after one untimed run; `{{threads}}` \
             is the Threads column. ulpgate's \"upload incl.\" figures read the frames from the files too \
             (without a process start).",
            first.process_runs.unwrap_or(0),
            result.clip_frames
        );
    }
    if !result.comparisons.is_empty() {
        let mut c = table(&["Feature", "Threads", "ulpgate cpu fps", "Backend", "fps", "cpu / backend", "max |Δ|"]);
        for r in &result.comparisons {
            c.add_row(vec![
                r.feature.clone(),
                r.threads.to_string(),
                format!("{:.1}", r.cpu_fps),
                r.backend.clone(),
                format!("{:.1}", r.backend_fps),
                format!("{:.2}", r.cpu_over_backend),
                r.max_abs_diff.map_or_else(|| "—".into(), crate::report::number),
            ]);
        }
        outln!("The CPU reference side by side with each external backend, reading included:\n{c}");
    }
    write_json(&args.json_out, &result)?;
    let failed =
        result.throughput.iter().any(|r| r.error.is_some()) || result.backends.iter().any(|b| b.error.is_some());
    Ok(if failed { 2 } else { 0 })
}
