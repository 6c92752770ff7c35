//! Recorded scores: per-frame numbers read from libvmaf-shaped JSON, so a
//! gate can pin a backend to what Netflix's libvmaf printed ("golden").

use super::{Backend, DeviceInfo, DeviceKind, SideOutput, SideRequest};
use crate::config::ResolvedFeature;
use crate::config::gate::BackendKind;
use crate::scores::read_libvmaf_json;

pub struct GoldenBackend {
    device: DeviceInfo,
}

impl GoldenBackend {
    pub fn new(name: &str) -> Self {
        GoldenBackend { device: DeviceInfo::named(name, DeviceKind::Recorded, "recorded scores", "recorded") }
    }
}

impl Backend for GoldenBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Golden
    }

    fn device(&self) -> &DeviceInfo {
        &self.device
    }

    fn supports(&self, _feature: &ResolvedFeature) -> Result<(), String> {
        Ok(())
    }

    fn compute(&self, request: &SideRequest<'_>) -> Result<SideOutput, String> {
        let dir =
            request.fixture.golden.as_ref().ok_or_else(|| {
                format!("fixture `{}` has no `golden:` folder of recorded scores", request.fixture.name)
            })?;
        let path = dir.join(format!("{}.json", request.feature.golden_file));
        if !path.exists() {
            return Err(format!("no recorded scores for {}: {} does not exist", request.feature.name, path.display()));
        }
        let recorded = read_libvmaf_json(&path).map_err(|e| format!("{e:#}"))?;
        let mut device = self.device.clone();
        device.name = recorded.tool.clone();
        device.arch_id = format!("recorded:{}", recorded.tool);
        Ok(SideOutput { frames: recorded.frames, scores: recorded.scores, device, dispatches: None })
    }
}
