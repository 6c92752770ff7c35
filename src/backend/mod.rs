//! Backends compute one side of a cell: a feature's per-frame scores on a
//! fixture. Each records the identity of the device that computed it.

pub mod cpu;
pub mod cuda;
pub mod external;
pub mod golden;
pub mod gpu;
mod gpu_backend;
pub mod kernel_cache;
pub mod kernels;
pub mod opencl;
mod recorder;
pub mod select;
pub mod selftest;
mod staging;
pub mod vulkan;
mod watchdog;

pub use gpu_backend::{GpuBackend, worker_threads};

use crate::config::gate::BackendKind;
use crate::config::{ResolvedBackend, ResolvedFeature, ResolvedFixture};
use crate::fixture::{FixtureError, PairSource};
use crate::scores::Scores;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// What kind of thing computed a side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    Cpu,
    Gpu,
    /// Scores read from a recording, computed elsewhere.
    Recorded,
    /// An external command; its identity is declared in the gate.
    External,
}

/// The identity of the device that computed a side (Research-0041 arch_id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DeviceInfo {
    /// The backend name in the gate (`cpu`, `vulkan`, ...).
    pub backend: String,
    pub kind: DeviceKind,
    /// `vulkan:{vendorID:#06x}:{deviceID:#06x}`, `cuda:{major}.{minor}`,
    /// `opencl:{vendor_id:#06x}:{driver_version}`, `cpu:{arch}`, ...
    pub arch_id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `discrete-gpu`, `integrated-gpu`, `cpu` (a software rasterizer), ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci_bus_id: Option<String>,
}

impl DeviceInfo {
    /// A device known by its identity alone (backend, kind, name, arch_id),
    /// every detail a driver may add left empty: recorded scores, and the
    /// made-up devices of tests.
    pub fn named(backend: &str, kind: DeviceKind, name: &str, arch_id: &str) -> Self {
        DeviceInfo {
            backend: backend.into(),
            kind,
            arch_id: arch_id.into(),
            name: name.into(),
            driver: None,
            driver_version: None,
            api_version: None,
            device_type: None,
            pci_bus_id: None,
        }
    }

    /// The driver in words: `llvmpipe Mesa 22.3.6 (LLVM 15.0.6), version
    /// 0.0.1`, the version left out where the name already says it.
    pub fn driver_text(&self) -> Option<String> {
        driver_text(self.driver.as_deref(), self.driver_version.as_deref())
    }
}

/// [`DeviceInfo::driver_text`] of a driver's name and version.
pub fn driver_text(driver: Option<&str>, version: Option<&str>) -> Option<String> {
    match (driver, version) {
        (Some(driver), Some(version)) if !names_version(driver, version) => {
            Some(format!("{driver}, version {version}"))
        }
        (Some(driver), _) => Some(driver.to_string()),
        (None, Some(version)) => Some(format!("driver {version}")),
        (None, None) => None,
    }
}

/// Whether `driver` already states `version`, as text or as numbers:
/// NVIDIA's Vulkan driver calls itself `580.159.04` and packs 580.159.4.0
/// into its driver version.
fn names_version(driver: &str, version: &str) -> bool {
    fn numbers(dotted: &str) -> Option<Vec<u64>> {
        let mut parts = dotted.split('.').map(|p| p.parse().ok()).collect::<Option<Vec<u64>>>()?;
        while parts.len() > 1 && parts.last() == Some(&0) {
            parts.pop();
        }
        Some(parts)
    }
    let Some(wanted) = numbers(version) else { return driver.contains(version) };
    driver.contains(version)
        || driver
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .any(|token| numbers(token.trim_matches('.')).is_some_and(|n| n == wanted))
}

/// A side's frames: a fixture read into memory ([`crate::fixture::LoadedFixture`]), or one
/// that reads each frame from its files when asked ([`crate::fixture::FilePair`]:
/// `score`, and a fixture larger than a run's `--fixture-memory`).
pub type SideFrames = Arc<dyn PairSource + Send + Sync>;

/// One side to compute.
pub struct SideRequest<'a> {
    pub feature: &'a ResolvedFeature,
    pub fixture: &'a ResolvedFixture,
    /// The fixture's frames, read on first use and shared by every side
    /// (in memory), or read from the files as the side scores them.
    pub frames: &'a (dyn Fn() -> Result<SideFrames, FixtureError> + Sync),
    /// Called after each frame is scored (progress).
    pub on_frame: &'a (dyn Fn() + Sync),
}

/// A computed side.
#[derive(Debug, Clone)]
pub struct SideOutput {
    pub scores: Scores,
    pub frames: usize,
    /// The device that actually computed it.
    pub device: DeviceInfo,
    /// Kernels that completed on the device (GPU backends only): the proof
    /// that the side ran where it says.
    pub dispatches: Option<u64>,
}

/// What a backend's joint pass over `requests` starts from
/// ([`joint_plan`]).
pub(crate) struct JointPlan<'a> {
    pub joint: &'static crate::features::JointImpl,
    /// The fixture the requests share.
    pub fixture: SideFrames,
    /// Each request's feature options, in order.
    pub options: Vec<&'a crate::features::Options>,
}

impl JointPlan<'_> {
    /// Each request's own metrics of the pass's `scores`, as its output.
    pub fn split(
        &self,
        requests: &[SideRequest<'_>],
        scores: &Scores,
        device: &DeviceInfo,
        dispatches: Option<u64>,
    ) -> anyhow::Result<Vec<SideOutput>> {
        let features: Vec<(&str, &crate::features::Options)> =
            requests.iter().map(|r| r.feature.name.as_str()).zip(self.options.iter().copied()).collect();
        let frames = self.fixture.frames();
        Ok(crate::features::split_joint_scores(scores, &features)?
            .into_iter()
            .map(|scores| SideOutput { scores, frames, device: device.clone(), dispatches })
            .collect())
    }
}

/// The joint pass for `requests` (sides of one fixture), where there is one
/// and their options and geometry share work; `None` otherwise, and where
/// the fixture cannot be read (each side's own pass reports that).
pub(crate) fn joint_plan<'a>(requests: &'a [SideRequest<'_>]) -> Option<JointPlan<'a>> {
    let names: Vec<&str> = requests.iter().map(|r| r.feature.name.as_str()).collect();
    let joint = crate::features::find_joint(&names)?;
    let fixture = (requests.first()?.frames)().ok()?;
    let options: Vec<&crate::features::Options> = requests.iter().map(|r| &r.feature.options).collect();
    (joint.shares)(&fixture.geometry(), &options).then_some(JointPlan { joint, fixture, options })
}

pub trait Backend: Send + Sync {
    fn kind(&self) -> BackendKind;

    /// The device this backend was opened on.
    fn device(&self) -> &DeviceInfo;

    /// `Err(reason)` when this backend cannot compute `feature` at all
    /// (no kernel for it yet, no recording, ...).
    fn supports(&self, feature: &ResolvedFeature) -> Result<(), String>;

    fn compute(&self, request: &SideRequest<'_>) -> Result<SideOutput, String>;

    /// Computes sides of one fixture in one pass ([`crate::features::JointImpl`]),
    /// an output per request in order; `None` when this backend has no such
    /// pass for them (the caller computes each alone), `Some(Err)` when the
    /// pass failed (the caller computes each alone, for each side's own
    /// outcome).
    fn compute_joint(&self, _requests: &[SideRequest<'_>]) -> Option<Result<Vec<SideOutput>, String>> {
        None
    }

    /// The GPU context behind a GPU backend (benchmarks drive it directly).
    fn gpu(&self) -> Option<Arc<dyn gpu::Gpu>> {
        None
    }
}

/// Options that pick devices, from the command line.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// Overrides every vulkan backend's `device`.
    pub vulkan_device: Option<crate::config::gate::DeviceSelector>,
    /// Overrides every cuda backend's `device`.
    pub cuda_device: Option<crate::config::gate::DeviceSelector>,
    /// Overrides every opencl backend's `device`.
    pub opencl_device: Option<crate::config::gate::DeviceSelector>,
}

/// Opens a backend; `Err(reason)` when it cannot run on this build or
/// machine (the cells then ERROR or SKIP with that reason).
pub fn open(decl: &ResolvedBackend, options: &OpenOptions) -> Result<Arc<dyn Backend>, String> {
    match decl.kind {
        BackendKind::Cpu => Ok(Arc::new(cpu::CpuBackend::new(&decl.name))),
        BackendKind::Golden => Ok(Arc::new(golden::GoldenBackend::new(&decl.name))),
        BackendKind::External => Ok(Arc::new(external::ExternalBackend::new(decl)?)),
        BackendKind::Vulkan => {
            // The command line's --vulkan-device (--cuda-device,
            // --opencl-device) overrides the gate's `device`.
            let selector = options.vulkan_device.as_ref().or(decl.device.as_ref());
            let gpu = vulkan::open(selector, vulkan::Options::from_env()?)?;
            Ok(Arc::new(GpuBackend::new(BackendKind::Vulkan, &decl.name, gpu)))
        }
        BackendKind::Cuda => {
            let gpu = cuda::open(options.cuda_device.as_ref().or(decl.device.as_ref()))?;
            Ok(Arc::new(GpuBackend::new(decl.kind, &decl.name, gpu)))
        }
        BackendKind::Opencl => {
            let gpu = opencl::open(options.opencl_device.as_ref().or(decl.device.as_ref()))?;
            Ok(Arc::new(GpuBackend::new(decl.kind, &decl.name, gpu)))
        }
    }
}

/// The devices each backend kind can see on this machine, for `devices`.
pub fn enumerate() -> Vec<(BackendKind, Result<Vec<DeviceInfo>, String>)> {
    vec![
        (BackendKind::Cpu, Ok(vec![cpu::device_info("cpu")])),
        (BackendKind::Vulkan, vulkan::enumerate()),
        (BackendKind::Cuda, cuda::enumerate()),
        (BackendKind::Opencl, opencl::enumerate()),
    ]
}

#[cfg(test)]
mod tests {
    use super::driver_text;

    #[test]
    fn the_version_is_left_out_where_the_name_states_it() {
        let text = |d, v| driver_text(Some(d), Some(v)).unwrap();
        assert_eq!(text("NVIDIA 580.159.04", "580.159.4.0"), "NVIDIA 580.159.04");
        assert_eq!(text("NVIDIA CUDA driver", "13.0"), "NVIDIA CUDA driver, version 13.0");
        assert_eq!(
            text("llvmpipe Mesa 22.3.6 (LLVM 15.0.6)", "0.0.1"),
            "llvmpipe Mesa 22.3.6 (LLVM 15.0.6), version 0.0.1"
        );
        assert_eq!(text("Mesa 25.0.7", "25.0.7"), "Mesa 25.0.7");
        assert_eq!(text("PoCL 3.1", "3.1.0"), "PoCL 3.1");
        assert_eq!(text("PoCL 3.1", "3.10"), "PoCL 3.1, version 3.10");
        assert_eq!(driver_text(None, Some("1.2")).unwrap(), "driver 1.2");
    }
}
