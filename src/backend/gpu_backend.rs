//! Any [`Gpu`] as a [`Backend`]: runs each feature's shared host pipeline
//! on the context's device and proves it did.

use super::gpu::{CountingGpu, Gpu};
use super::{Backend, DeviceInfo, SideOutput, SideRequest};
use crate::config::ResolvedFeature;
use crate::config::gate::BackendKind;
use crate::features;
use std::sync::Arc;

pub struct GpuBackend {
    kind: BackendKind,
    gpu: Arc<dyn Gpu>,
    device: DeviceInfo,
}

impl GpuBackend {
    pub fn new(kind: BackendKind, name: &str, gpu: Arc<dyn Gpu>) -> Self {
        let mut device = gpu.device().clone();
        device.backend = name.to_string();
        GpuBackend { kind, gpu, device }
    }
}

impl Backend for GpuBackend {
    fn kind(&self) -> BackendKind {
        self.kind
    }

    fn device(&self) -> &DeviceInfo {
        &self.device
    }

    fn supports(&self, feature: &ResolvedFeature) -> Result<(), String> {
        match features::find(&feature.name) {
            Some(imp) if imp.gpu.is_some() => Ok(()),
            Some(_) => Err(format!("{} has no GPU kernels yet", feature.name)),
            None => Err(format!("this build does not implement {}", feature.name)),
        }
    }

    fn gpu(&self) -> Option<Arc<dyn Gpu>> {
        Some(self.gpu.clone())
    }

    fn compute(&self, request: &SideRequest<'_>) -> Result<SideOutput, String> {
        self.supports(request.feature)?;
        let factory = features::find(&request.feature.name).and_then(|f| f.gpu).expect("checked by supports");
        let fixture = (request.frames)().map_err(|e| e.to_string())?;
        let counting = CountingGpu::new(self.gpu.clone());
        let extractor =
            factory(counting.clone(), &fixture.geometry, &request.feature.options).map_err(|e| format!("{e:#}"))?;
        let scores = features::run_extractor(extractor, &fixture, request.on_frame).map_err(|e| format!("{e:#}"))?;
        let mut device = counting.device().clone();
        device.backend = self.device.backend.clone();
        Ok(SideOutput { scores, frames: fixture.frames(), device, dispatches: Some(counting.dispatches()) })
    }
}
