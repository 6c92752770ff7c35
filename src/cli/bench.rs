//! `ulpgate bench`: times a gate run and each of its sides, or a clip's
//! throughput per feature and backend (see `crate::bench`).

use super::Outcome;
use super::video::GeometryArgs;
use crate::backend::OpenOptions;
use crate::bench::{clip, gate};
use crate::config::gate::DeviceSelector;
use crate::config::{Diagnostics, load_gate};
use crate::gate::Filters;
use crate::report::write::Staged;
use anyhow::{Context, anyhow};
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};
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
    /// the backends to measure (default cpu,vulkan).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    backends: Option<Vec<String>>,
    /// Gate mode: only these fixtures (names or trailing-* patterns).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    fixtures: Option<Vec<String>>,
    /// Vulkan device: an index or a name substring.
    #[arg(long, value_name = "INDEX|NAME")]
    vulkan_device: Option<String>,
    /// Gate mode: whole runs timed as separate processes (start to exit).
    #[arg(long, default_value_t = 5, value_name = "N")]
    runs: usize,
    /// Gate mode: timed repetitions of each side alone (median reported).
    #[arg(long, default_value_t = 3, value_name = "N")]
    repeat: usize,
    /// Gate mode: seconds of a reference run (e.g. the old gate's) to
    /// compare the median process time with.
    #[arg(long, value_name = "SECONDS")]
    baseline_seconds: Option<f64>,
    /// Clip mode: a reference and a distorted video (.yuv or .y4m).
    #[arg(long, num_args = 2, value_names = ["REF", "DIST"])]
    clip: Option<Vec<PathBuf>>,
    #[command(flatten)]
    video: GeometryArgs,
    /// Clip mode: frame pairs per measurement (the clip loops).
    #[arg(long, default_value_t = 240, value_name = "N")]
    frames: usize,
    /// Clip mode: host threads reading and uploading frames for a GPU
    /// backend (default: as `run` does: up to 4 on a GPU, 1 on a CPU
    /// driver), and for the CPU reference the workers its frames are spread
    /// over, as libvmaf's `--threads` (default 1).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Clip mode: bytes per upload of the bandwidth measurement, in MiB.
    #[arg(long, default_value_t = 32, value_name = "MIB")]
    bandwidth_mib: usize,
    /// Write the results as JSON here too.
    #[arg(long, value_name = "FILE")]
    json_out: Option<PathBuf>,
}

fn selector(arg: &Option<String>) -> anyhow::Result<Option<DeviceSelector>> {
    let Some(s) = arg else { return Ok(None) };
    let sel = s.parse::<u32>().map(DeviceSelector::Index).unwrap_or_else(|_| DeviceSelector::Name(s.clone()));
    // Checked here, not per run: the instance it makes is not kept.
    drop(crate::backend::vulkan::check_selector(&sel).map_err(|e| anyhow!("--vulkan-device {sel}: {e}"))?);
    Ok(Some(sel))
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
    let open = OpenOptions { vulkan_device: selector(&args.vulkan_device)? };
    match &args.clip {
        Some(paths) => run_clip(&args, paths, open),
        None => run_gate(&args, open),
    }
}

fn run_gate(args: &Args, open: OpenOptions) -> Outcome {
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
    if let Some(d) = &args.vulkan_device {
        run_args.extend(["--vulkan-device".to_string(), d.clone()]);
    }
    let options = gate::Options { run_args, process_runs: args.runs, repeat: args.repeat, open };
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
    println!("{whole}");

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
    println!("Each side alone, warm (median of {}):\n{sides}", args.repeat.max(1));
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
    println!("Per feature and backend, all fixtures:\n{totals}");
    write_json(&args.json_out, &result)?;
    Ok(0)
}

fn run_clip(args: &Args, paths: &[PathBuf], open: OpenOptions) -> Outcome {
    if !args.gates.is_empty() {
        return Err(anyhow!("--clip times a clip, not gates: drop the GATE arguments").into());
    }
    let features = args.features.clone().unwrap_or_else(|| {
        crate::features::implementations().filter(|f| f.gpu.is_some()).map(|f| f.name.to_string()).collect()
    });
    let options = clip::Options {
        reference: args.video.source(&paths[0])?,
        distorted: args.video.source(&paths[1])?,
        frames: args.frames,
        features,
        backends: args.backends.clone().unwrap_or_else(|| vec!["cpu".into(), "vulkan".into()]),
        open,
        bandwidth_bytes: args.bandwidth_mib.max(1) << 20,
        threads: args.threads,
    };
    let result = clip::run(&options)?;

    let mut backends = table(&["Backend", "Device", "Open s", "Host→device GB/s", "Upload threads"]);
    for b in &result.backends {
        let device = match (&b.device, &b.error) {
            (Some(d), _) => format!("{} [{}]", d.name, d.arch_id),
            (None, Some(e)) => format!("unavailable: {e}"),
            _ => String::new(),
        };
        backends.add_row(vec![
            b.backend.clone(),
            device,
            format!("{:.3}", b.open_seconds),
            opt(b.h2d_bytes_per_second.map(|v| v / 1e9), 2),
            if b.h2d_bytes_per_second.is_some() { b.h2d_threads.to_string() } else { "—".into() },
        ]);
    }
    println!(
        "{} vs {} ({}), {} frame pairs per figure\n{backends}",
        result.reference, result.distorted, result.geometry, result.frames
    );
    let mut t = table(&[
        "Feature",
        "Backend",
        "Threads",
        "fps (upload incl.)",
        "ms/frame",
        "fps (resident)",
        "ms/frame",
        "Upload B/pair",
        "Upload-bound fps",
        "incl./bound",
        "vs cpu",
    ]);
    for r in &result.throughput {
        if let Some(e) = &r.error {
            t.add_row(vec![r.feature.clone(), r.backend.clone(), format!("error: {e}")]);
            continue;
        }
        t.add_row(vec![
            r.feature.clone(),
            r.backend.clone(),
            r.threads.to_string(),
            format!("{:.1}", r.upload_included_fps),
            format!("{:.3}", r.upload_included_ms_per_frame),
            format!("{:.1}", r.upload_excluded_fps),
            format!("{:.3}", r.upload_excluded_ms_per_frame),
            r.upload_bytes_per_pair.map_or_else(|| "—".into(), |b| b.to_string()),
            opt(r.upload_bound_fps, 0),
            opt(r.upload_included_vs_bound, 3),
            opt(r.speedup_vs_cpu, 2),
        ]);
    }
    println!("{t}");
    write_json(&args.json_out, &result)?;
    let failed =
        result.throughput.iter().any(|r| r.error.is_some()) || result.backends.iter().any(|b| b.error.is_some());
    Ok(if failed { 2 } else { 0 })
}
