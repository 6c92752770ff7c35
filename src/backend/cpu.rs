//! The CPU reference: the Rust ports of libvmaf's C extractors.

use super::{Backend, DeviceInfo, DeviceKind, SideOutput, SideRequest};
use crate::config::ResolvedFeature;
use crate::config::gate::BackendKind;
use crate::features;

pub struct CpuBackend {
    device: DeviceInfo,
}

impl CpuBackend {
    pub fn new(name: &str) -> Self {
        CpuBackend { device: device_info(name) }
    }
}

/// This machine's CPU: arch_id `cpu:{arch}`, named from /proc/cpuinfo.
pub fn device_info(backend: &str) -> DeviceInfo {
    let model = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    });
    DeviceInfo {
        backend: backend.to_string(),
        kind: DeviceKind::Cpu,
        arch_id: format!("cpu:{}", std::env::consts::ARCH),
        name: model.unwrap_or_else(|| format!("{} CPU", std::env::consts::ARCH)),
        driver: Some("ulpgate CPU reference".into()),
        driver_version: Some(env!("CARGO_PKG_VERSION").into()),
        api_version: None,
        device_type: Some("cpu".into()),
        pci_bus_id: None,
    }
}

impl Backend for CpuBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }

    fn device(&self) -> &DeviceInfo {
        &self.device
    }

    fn supports(&self, feature: &ResolvedFeature) -> Result<(), String> {
        features::find(&feature.name)
            .map(|_| ())
            .ok_or_else(|| format!("this build has no CPU implementation of {}", feature.name))
    }

    fn compute(&self, request: &SideRequest<'_>) -> Result<SideOutput, String> {
        self.supports(request.feature)?;
        let imp = features::find(&request.feature.name).expect("checked by supports");
        let fixture = (request.frames)().map_err(|e| e.to_string())?;
        let extractor =
            imp.cpu_extractor(&fixture.geometry(), &request.feature.options).map_err(|e| format!("{e:#}"))?;
        let scores = features::run_extractor(extractor, &*fixture, request.on_frame).map_err(|e| format!("{e:#}"))?;
        Ok(SideOutput { scores, frames: fixture.frames(), device: self.device.clone(), dispatches: None })
    }

    fn compute_joint(&self, requests: &[SideRequest<'_>]) -> Option<Result<Vec<SideOutput>, String>> {
        let plan = super::joint_plan(requests)?;
        let on_frame = || requests.iter().for_each(|r| (r.on_frame)());
        let result = (plan.joint.cpu)(&plan.fixture.geometry(), &plan.options)
            .and_then(|extractor| features::run_extractor(extractor, &*plan.fixture, &on_frame))
            .and_then(|scores| plan.split(requests, &scores, &self.device, None));
        Some(result.map_err(|e| format!("{e:#}")))
    }
}
