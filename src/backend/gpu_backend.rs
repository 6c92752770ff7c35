//! Any [`Gpu`] as a [`Backend`]: runs each feature's shared host pipeline
//! on the context's device and proves it did.

use super::gpu::{CountingGpu, Gpu};
use super::{Backend, DeviceInfo, SideOutput, SideRequest};
use crate::config::ResolvedFeature;
use crate::config::gate::BackendKind;
use crate::features;
use crate::features::Extractor;
use crate::features::gpu::score_parallel;
use crate::fixture::PairSource;
use crate::scores::Scores;
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
            Some(imp) if imp.has_gpu() => Ok(()),
            Some(_) => Err(format!("{} has no GPU kernels yet", feature.name)),
            None => Err(format!("this build does not implement {}", feature.name)),
        }
    }

    fn gpu(&self) -> Option<Arc<dyn Gpu>> {
        Some(self.gpu.clone())
    }

    fn compute(&self, request: &SideRequest<'_>) -> Result<SideOutput, String> {
        self.supports(request.feature)?;
        let imp = features::find(&request.feature.name).expect("checked by supports");
        let fixture = (request.frames)().map_err(|e| e.to_string())?;
        let (scores, device, dispatches) = self
            .score(&*fixture, request.on_frame, |gpu| {
                imp.gpu_extractor(gpu, &fixture.geometry(), &request.feature.options)
            })
            .map_err(|e| format!("{e:#}"))?;
        Ok(SideOutput { scores, frames: fixture.frames(), device, dispatches: Some(dispatches) })
    }

    fn compute_joint(&self, requests: &[SideRequest<'_>]) -> Option<Result<Vec<SideOutput>, String>> {
        let plan = super::joint_plan(requests)?;
        let on_frame = || requests.iter().for_each(|r| (r.on_frame)());
        let result = self
            .score(&*plan.fixture, &on_frame, |gpu| (plan.joint.gpu)(gpu, &plan.fixture.geometry(), &plan.options))
            .and_then(|(scores, device, dispatches)| plan.split(requests, &scores, &device, Some(dispatches)));
        Some(result.map_err(|e| format!("{e:#}")))
    }
}

impl GpuBackend {
    /// Scores `fixture` with the pipelines `make` builds on this context
    /// (one a worker), counting the kernels that complete: the scores, the
    /// device that computed them and the dispatch count that proves it.
    fn score(
        &self,
        fixture: &dyn PairSource,
        on_frame: &(dyn Fn() + Sync),
        make: impl Fn(Arc<dyn Gpu>) -> anyhow::Result<Box<dyn Extractor>> + Sync,
    ) -> anyhow::Result<(Scores, DeviceInfo, u64)> {
        let counting = CountingGpu::new(self.gpu.clone());
        let make = || make(counting.clone());
        // Temporal features too: they are windowed (features/gpu.rs), so
        // their frames spread over workers and frames in flight as well.
        let scores = score_parallel(&make, fixture, worker_threads(&self.device, fixture.frames()), on_frame)?;
        let mut device = counting.device().clone();
        device.backend = self.device.backend.clone();
        Ok((scores, device, counting.dispatches()))
    }
}

/// Host threads feeding one device for `frames` frames: several keep a
/// GPU's copy engines and kernels busy (each reads frames into its own
/// pinned staging); a CPU driver (lavapipe, PoCL) already spreads each
/// dispatch over the cores. Measured on an H200 at 1080p, 4 threads feed it
/// best (8 and 16 contend); a worker only pays off with a few frames in
/// flight of its own.
pub fn worker_threads(device: &DeviceInfo, frames: usize) -> usize {
    if device.device_type.as_deref() == Some("cpu") {
        return 1;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (frames / (2 * crate::features::gpu::IN_FLIGHT)).clamp(1, 4).min(cores)
}
