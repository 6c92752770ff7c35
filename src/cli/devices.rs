use super::Outcome;
use crate::backend::gpu::Gpu;
use crate::backend::{self, DeviceInfo, cuda, opencl, selftest, vulkan};
use crate::cli::stdout::outln;
use crate::config::gate::{BackendKind, DeviceSelector};
use comfy_table::Table;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use serde_json::json;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct Args {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Also run the kernel-dialect self-test on every GPU device: 64-bit
    /// integer products, arithmetic shifts and leading zeros (what the
    /// integer features' kernels are built from), and floats widened to
    /// doubles and multiplied, subnormals included (the ciede and SSIM
    /// kernels' double arithmetic), compared with the CPU's. Exits 1 when a
    /// device computes them differently, 2 when one cannot run it.
    #[arg(long)]
    check: bool,
}

pub fn run(args: Args) -> Outcome {
    let found = backend::enumerate();
    let checks = if args.check { self_tests(&found) } else { Vec::new() };
    let worst = checks.iter().map(|c| c.code).max().unwrap_or(0);
    if args.json {
        let list: Vec<_> = found
            .iter()
            .map(|(kind, r)| match r {
                Ok(devices) => json!({"backend": kind.as_str(), "available": true, "devices": devices}),
                Err(reason) => json!({"backend": kind.as_str(), "available": false, "reason": reason, "devices": []}),
            })
            .collect();
        let mut doc = json!(list);
        if args.check {
            let results: Vec<_> = checks
                .iter()
                .map(|c| json!({"backend": c.backend, "device": c.index, "name": c.name, "ok": c.code == 0, "detail": c.detail}))
                .collect();
            doc = json!({"devices": list, "self_test": results});
        }
        outln!("{}", serde_json::to_string_pretty(&doc).expect("serializes"));
        return Ok(worst);
    }
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header(vec!["Backend", "#", "arch_id", "Name", "Driver", "API", "Type"]);
    for (kind, r) in &found {
        match r {
            Ok(devices) => {
                for (i, d) in devices.iter().enumerate() {
                    let driver = [d.driver.as_deref(), d.driver_version.as_deref()]
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                        .join(" ");
                    table.add_row(vec![
                        kind.as_str().to_string(),
                        i.to_string(),
                        d.arch_id.clone(),
                        d.name.clone(),
                        driver,
                        d.api_version.clone().unwrap_or_default(),
                        d.device_type.clone().unwrap_or_default(),
                    ]);
                }
            }
            Err(reason) => {
                table.add_row(vec![
                    kind.as_str().to_string(),
                    "—".into(),
                    "—".into(),
                    format!("unavailable: {reason}"),
                    String::new(),
                    String::new(),
                    String::new(),
                ]);
            }
        }
    }
    outln!("{table}");
    for c in &checks {
        let verdict = match c.code {
            0 => "OK",
            1 => "FAIL",
            _ => "ERROR",
        };
        outln!("self-test {} #{} {}: {verdict} ({})", c.backend, c.index, c.name, c.detail);
    }
    Ok(worst)
}

/// One device's self-test: exit code 0 (equal), 1 (different), 2 (could not run).
struct SelfTest {
    backend: &'static str,
    index: usize,
    name: String,
    code: u8,
    detail: String,
}

/// Runs [`backend::selftest::check_int64`],
/// [`backend::selftest::check_widen`] and
/// [`backend::selftest::check_float`] on every GPU device found. A device
/// that flushes float subnormals passes (the kernels are right; the driver
/// cannot be asked otherwise) with that said in its line.
fn self_tests(found: &[(BackendKind, Result<Vec<DeviceInfo>, String>)]) -> Vec<SelfTest> {
    let mut out = Vec::new();
    for (kind, devices) in found {
        let Ok(devices) = devices else { continue };
        for (index, info) in devices.iter().enumerate() {
            let selector = DeviceSelector::Index(index as u32);
            let gpu: Result<Arc<dyn Gpu>, String> = match kind {
                BackendKind::Vulkan => vulkan::Options::from_env()
                    .and_then(|options| vulkan::open(Some(&selector), options))
                    .map(|g| g as Arc<dyn Gpu>),
                BackendKind::Cuda => cuda::open(Some(&selector)),
                BackendKind::Opencl => opencl::open(Some(&selector)),
                _ => continue,
            };
            let (code, detail) = match gpu {
                Err(e) => (2, format!("cannot open: {e}")),
                Ok(gpu) => {
                    let shifts = [1, 14, 16, 31, 32];
                    let checked = shifts
                        .iter()
                        .try_for_each(|&s| selftest::check_int64(gpu.as_ref(), s))
                        .and_then(|()| selftest::check_widen(gpu.as_ref()))
                        .and_then(|()| selftest::check_float(gpu.as_ref()));
                    match checked {
                        Ok(float) => (
                            0,
                            format!(
                                "{} cases x {} shifts equal; {} widened floats and products equal; {}",
                                selftest::inputs().len(),
                                shifts.len(),
                                selftest::widen_inputs().len(),
                                float_arithmetic(&float)
                            ),
                        ),
                        Err(e) if e.to_string().starts_with("selftest_") => (1, format!("{e:#}")),
                        Err(e) => (2, format!("{e:#}")),
                    }
                }
            };
            out.push(SelfTest { backend: kind.as_str(), index, name: info.name.clone(), code, detail });
        }
    }
    out
}

/// A device's float arithmetic in words, for its self-test line.
fn float_arithmetic(float: &selftest::FloatArithmetic) -> String {
    match float {
        selftest::FloatArithmetic::Exact { pairs } => {
            format!("{pairs} float products and sums equal, subnormals included")
        }
        selftest::FloatArithmetic::FlushesSubnormals { flushed, pairs } => format!(
            "float arithmetic flushes subnormals to zero ({flushed} of {pairs} pairs; the rest equal): float \
             kernels differ from the CPU where a value falls below 1.2e-38"
        ),
    }
}
