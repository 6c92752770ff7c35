//! Corpus collection: the runner's own machinery (plan, backends opened
//! once, fixtures read once, sides computed in parallel, the same proof
//! that a GPU side ran on its GPU) applied to a gate's CPU-vs-GPU pairs,
//! keeping the per-frame scores instead of their differences.

use super::corpus::Row;
use super::manifest::{BackendEntry, Collected, FeatureEntry, FixtureEntry, Requested, Role};
use crate::backend::{DeviceKind, OpenOptions};
use crate::config::ResolvedGate;
use crate::config::gate::BackendKind;
use crate::config::suggest::nearest;
use crate::fixture::FrameSource;
use crate::gate::execute::check_provenance;
use crate::gate::{self, Filters, RunOptions};
use anyhow::{Result, bail};
use std::collections::{BTreeMap, BTreeSet};

/// Research-0041's smallest viable set: Mesa lavapipe (the vendor id every
/// lavapipe reports), over this many frames; its features are
/// `gates/calibration-smoke.yaml`'s (`tests/cli/calibrate.rs` holds them to
/// the research's five).
pub const SMOKE_FRAMES: usize = 100;
pub const SMOKE_ARCH_PREFIX: &str = "vulkan:0x10005:";
/// The Vulkan device name lavapipe reports starts with this.
pub const SMOKE_DEVICE: &str = "llvmpipe";

pub struct Request {
    pub gate: ResolvedGate,
    pub requested: Requested,
    pub frames: Option<usize>,
    pub smoke: bool,
    pub open: OpenOptions,
    pub progress: bool,
    /// `--fixture-memory` ([`RunOptions::hold_fixtures_up_to`]).
    pub hold_fixtures_up_to: Option<u64>,
}

pub struct Collection {
    pub rows: Vec<Row>,
    pub features: Vec<FeatureEntry>,
    pub backends: Vec<BackendEntry>,
    pub fixtures: Vec<FixtureEntry>,
}

/// A source as the manifest names it: a path, or a synthetic spec in full.
fn describe(source: &FrameSource) -> String {
    match source {
        FrameSource::Raw { path, .. } | FrameSource::Y4m { path } => path.display().to_string(),
        FrameSource::Synthetic { spec, distorted } => format!(
            "synthetic {} ({})",
            serde_json::to_string(spec).expect("specs serialize"),
            if *distorted { "distorted" } else { "reference" }
        ),
    }
}

/// (cpu, gpu) backend names of the gate's CPU-vs-GPU pairs, one CPU
/// reference per GPU backend (the first pair that names it).
fn corpus_pairs(gate: &ResolvedGate) -> Vec<(String, String)> {
    let kind = |n: &str| gate.backends[n].kind;
    let mut out: Vec<(String, String)> = Vec::new();
    for p in &gate.pairs {
        let pair = match (kind(&p.a), kind(&p.b)) {
            (BackendKind::Cpu, k) if k.is_gpu() => (p.a.clone(), p.b.clone()),
            (k, BackendKind::Cpu) if k.is_gpu() => (p.b.clone(), p.a.clone()),
            _ => continue,
        };
        if !out.iter().any(|(_, g)| *g == pair.1) {
            out.push(pair);
        }
    }
    out
}

pub fn collect(request: Request) -> Result<Collection> {
    let gate = request.gate;
    let mut pairs = corpus_pairs(&gate);
    if pairs.is_empty() {
        bail!("gate `{}` ({}) has no CPU-vs-GPU pair to collect", gate.name, gate.file.display());
    }
    if let Some(names) = &request.requested.backends {
        let known: Vec<&str> = pairs.iter().map(|(_, g)| g.as_str()).collect();
        for name in names {
            let is_cpu = pairs.iter().any(|(c, _)| c == name);
            if !known.contains(&name.as_str()) && !is_cpu {
                let hint =
                    nearest(name, known.iter().copied()).map_or(String::new(), |s| format!(" (did you mean `{s}`?)"));
                bail!(
                    "--backends: `{name}` is not a GPU backend of a CPU-vs-GPU pair in gate `{}`{hint}; those are: {}",
                    gate.name,
                    known.join(", ")
                );
            }
        }
        pairs.retain(|(_, g)| names.contains(g));
        if pairs.is_empty() {
            bail!("--backends names no GPU backend (the CPU reference is always collected)");
        }
    }
    let gpu_names: BTreeSet<String> = pairs.iter().map(|(_, g)| g.clone()).collect();
    let filters = Filters {
        features: request.requested.features.clone(),
        backends: None,
        fixtures: request.requested.fixtures.clone(),
    };
    let mut plan = gate::plan(vec![gate], &filters).map_err(anyhow::Error::new)?;
    plan.cells.retain(|c| pairs.iter().any(|(cpu, gpu)| (&c.a, &c.b) == (cpu, gpu) || (&c.b, &c.a) == (cpu, gpu)));
    if plan.cells.is_empty() {
        bail!(
            "nothing to collect: no cell of the gate pairs the CPU with {}",
            gpu_names.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    let options = RunOptions {
        open: request.open,
        progress: request.progress,
        max_frames: request.frames,
        // The manifest's hashes of each fixture's frames, taken as they go.
        fingerprint_fixtures: true,
        hold_fixtures_up_to: request.hold_fixtures_up_to,
        ..RunOptions::default()
    };
    let computed = gate::compute(&plan, &options).map_err(anyhow::Error::msg)?;
    let gate = &plan.gates[0];

    let mut fatal: Vec<String> = Vec::new();
    let mut backends: Vec<BackendEntry> = Vec::new();
    for (cpu, gpu) in &pairs {
        for (name, role) in [(cpu, Role::Reference), (gpu, Role::Gpu)] {
            if backends.iter().any(|b| b.name == *name) {
                continue;
            }
            let decl = &gate.backends[name];
            let (status, reason, device) = match computed.backend(0, name) {
                Ok(b) => (Collected::Collected, None, Some(b.device().clone())),
                Err(reason) => (Collected::Skipped, Some(format!("unavailable: {reason}")), None),
            };
            if let Some(reason) = &reason {
                let explicit = request.requested.backends.as_ref().is_some_and(|n| n.contains(name));
                if request.smoke {
                    fatal.push(format!(
                        "--smoke collects on Mesa lavapipe (vulkan), and {name} is {reason}; install lavapipe \
                         (Debian: mesa-vulkan-drivers)"
                    ));
                } else if role == Role::Reference || decl.required || explicit {
                    let why = if role == Role::Reference {
                        "the CPU reference"
                    } else if explicit {
                        "named by --backends"
                    } else {
                        "required by the gate"
                    };
                    fatal.push(format!("{name} ({why}) is {reason}"));
                }
            }
            if request.smoke
                && role == Role::Gpu
                && let Some(d) = &device
                && !d.arch_id.starts_with(SMOKE_ARCH_PREFIX)
            {
                fatal.push(format!(
                    "--smoke collects on Mesa lavapipe ({SMOKE_ARCH_PREFIX}*), but {name} opened {} ({}); pick \
                     lavapipe with --vulkan-device {SMOKE_DEVICE}",
                    d.name, d.arch_id
                ));
            }
            backends.push(BackendEntry {
                name: name.clone(),
                kind: decl.kind.as_str().to_string(),
                role,
                status,
                reason,
                device,
                rows: 0,
            });
        }
    }
    if !fatal.is_empty() {
        bail!("{}", fatal.join("\n"));
    }

    let mut rows = Vec::new();
    let mut feature_rows: BTreeMap<String, usize> = BTreeMap::new();
    let mut feature_reasons: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut used_fixtures: Vec<String> = Vec::new();
    for cell in &plan.cells {
        let (cpu, gpu) = if gpu_names.contains(&cell.b) { (&cell.a, &cell.b) } else { (&cell.b, &cell.a) };
        let gpu_open = computed.backend(0, gpu).is_ok();
        if computed.readiness(&plan, cell).is_err() {
            // An unavailable (optional) backend is listed under backends;
            // a feature one side does not implement is a skipped feature.
            if gpu_open {
                let reasons = feature_reasons.entry(cell.feature.name.clone()).or_default();
                for name in [cpu, gpu] {
                    if let Ok(b) = computed.backend(0, name)
                        && let Err(why) = b.supports(&cell.feature)
                    {
                        let reason = format!("{name}: {why}");
                        if !reasons.contains(&reason) {
                            reasons.push(reason);
                        }
                    }
                }
            }
            continue;
        }
        let (Some(rc), Some(rg)) = (computed.side(cell, cpu), computed.side(cell, gpu)) else {
            fatal.push(format!("{}: a side was not computed", cell.id(&plan.gates)));
            continue;
        };
        let (c, g) = match (rc, rg) {
            (Ok(c), Ok(g)) => (c, g),
            (rc, rg) => {
                for (n, r) in [(cpu, rc), (gpu, rg)] {
                    if let Err(e) = r {
                        fatal.push(format!("{}: {n}: {e}", cell.id(&plan.gates)));
                    }
                }
                continue;
            }
        };
        let backend = computed.backend(0, gpu).as_ref().expect("computed sides have open backends");
        if let Err(e) = check_provenance(backend.as_ref(), g) {
            fatal.push(format!("{}: {gpu}: {e}", cell.id(&plan.gates)));
            continue;
        }
        if g.device.kind != DeviceKind::Gpu || c.device.kind != DeviceKind::Cpu {
            fatal.push(format!("{}: expected a GPU and the CPU reference", cell.id(&plan.gates)));
            continue;
        }
        if c.frames != g.frames {
            fatal.push(format!(
                "{}: frame-count mismatch: {cpu} has {} frames, {gpu} has {}",
                cell.id(&plan.gates),
                c.frames,
                g.frames
            ));
            continue;
        }
        for metric in &cell.feature.metrics {
            let (Some(cs), Some(gs)) = (c.scores.get(metric), g.scores.get(metric)) else {
                fatal.push(format!("{}: a side produced no {metric}", cell.id(&plan.gates)));
                continue;
            };
            // A frame a side never recorded reads as NaN: kept, never dropped.
            let at = |s: &[f64], i: usize| s.get(i).copied().unwrap_or(f64::NAN);
            for frame in 0..c.frames {
                rows.push(Row {
                    arch_id: g.device.arch_id.clone(),
                    backend: gpu.clone(),
                    feature: cell.feature.name.clone(),
                    metric: metric.clone(),
                    fixture: cell.fixture.clone(),
                    frame,
                    gpu_score: at(gs, frame),
                    cpu_score: at(cs, frame),
                });
            }
            *feature_rows.entry(cell.feature.name.clone()).or_default() += c.frames;
            for b in backends.iter_mut().filter(|b| b.name == *gpu || b.name == *cpu) {
                b.rows += c.frames;
            }
        }
        if !used_fixtures.contains(&cell.fixture) {
            used_fixtures.push(cell.fixture.clone());
        }
    }
    if !fatal.is_empty() {
        bail!("{}", fatal.join("\n"));
    }
    let features: Vec<FeatureEntry> = gate
        .features
        .iter()
        .filter(|f| plan.cells.iter().any(|c| c.feature.name == f.name))
        .map(|f| {
            let n = feature_rows.get(&f.name).copied().unwrap_or(0);
            FeatureEntry {
                name: f.name.clone(),
                metrics: f.metrics.clone(),
                status: if n > 0 { Collected::Collected } else { Collected::Skipped },
                reasons: feature_reasons.remove(&f.name).unwrap_or_default(),
                rows: n,
            }
        })
        .collect();
    if rows.is_empty() {
        let skipped: Vec<String> = features
            .iter()
            .map(|f| format!("{}: {}", f.name, f.reasons.join("; ")))
            .chain(backends.iter().filter_map(|b| b.reason.as_ref().map(|r| format!("{}: {r}", b.name))))
            .collect();
        bail!("nothing collected:\n{}", skipped.join("\n"));
    }
    let mut fixtures = Vec::new();
    for name in &used_fixtures {
        let decl = gate.fixtures.iter().find(|f| f.name == *name).expect("planned fixture");
        match computed.fingerprint(0, name) {
            Some(Ok(print)) => {
                fixtures.push(FixtureEntry::of(name, describe(&decl.reference), describe(&decl.distorted), &print))
            }
            Some(Err(e)) => bail!("fixture {name}: {e}"),
            None => bail!("fixture {name} was not read"),
        }
    }
    Ok(Collection { rows, features, backends, fixtures })
}
