//! The Vulkan backend on ash. The loader (libvulkan) is opened at run time,
//! so one binary runs everywhere: where it or a driver is missing, `open`
//! says why and the cells ERROR or SKIP with that reason.

mod context;
mod info;
mod instance;
mod memory;
mod pipeline;
pub(crate) mod shaders;
mod stream;

pub use context::{LANES_VAR, Options, Uploads, VulkanGpu, lanes_from_env};

use crate::backend::DeviceInfo;
use crate::config::gate::DeviceSelector;
use std::sync::{Arc, Mutex};

/// An instance [`check_selector`] made, kept for the [`open`] that follows:
/// creating one loads every installed driver (tens of milliseconds).
static SPARE: Mutex<Option<instance::Instance>> = Mutex::new(None);

fn new_instance() -> Result<instance::Instance, String> {
    match SPARE.lock().ok().and_then(|mut spare| spare.take()) {
        Some(instance) => Ok(instance),
        None => instance::Instance::new(),
    }
}

/// Every Vulkan device the loader sees, in its order (the indices that
/// `--vulkan-device` takes).
pub fn enumerate() -> Result<Vec<DeviceInfo>, String> {
    let instance = new_instance()?;
    Ok(instance.physical_devices()?.into_iter().map(|d| d.info).collect())
}

/// Opens the device `selector` names (by index or name substring; with
/// none, the first non-CPU device, else the first). A selector that names
/// no device is an error listing those that exist.
pub fn open(selector: Option<&DeviceSelector>, options: Options) -> Result<Arc<VulkanGpu>, String> {
    let instance = new_instance()?;
    let devices = instance.physical_devices()?;
    let infos: Vec<DeviceInfo> = devices.iter().map(|d| d.info.clone()).collect();
    let index = super::select::select("Vulkan", &infos, selector)?;
    Ok(Arc::new(VulkanGpu::new(instance, &devices[index], options)?))
}

/// Checks that `selector` names a device, when the loader works at all:
/// `Err` only for a selector that names nothing (a usage error, whether
/// vulkan is required or not), never for a missing loader or driver. The
/// instance it made waits in the returned guard for the next [`open`]; the
/// guard destroys it if nothing used it.
pub fn check_selector(selector: &DeviceSelector) -> Result<SpareInstance, String> {
    let Ok(instance) = new_instance() else { return Ok(SpareInstance) };
    let devices = match instance.physical_devices() {
        Ok(d) => d.into_iter().map(|d| d.info).collect::<Vec<_>>(),
        Err(_) => return Ok(SpareInstance),
    };
    super::select::select("Vulkan", &devices, Some(selector))?;
    if let Ok(mut spare) = SPARE.lock() {
        *spare = Some(instance);
    }
    Ok(SpareInstance)
}

/// Drops the instance [`check_selector`] kept, if no [`open`] took it.
pub struct SpareInstance;

impl Drop for SpareInstance {
    fn drop(&mut self) {
        if let Ok(mut spare) = SPARE.lock() {
            spare.take();
        }
    }
}

#[cfg(test)]
mod tests;
