//! The Vulkan backend on ash. The loader (libvulkan) is opened at run time,
//! so one binary runs everywhere: where it or a driver is missing, `open`
//! says why and the cells ERROR or SKIP with that reason.

mod context;
mod info;
mod instance;
mod memory;
mod pipeline;
mod select;
mod shaders;
mod stream;

pub use context::{Options, VulkanGpu};

use crate::backend::DeviceInfo;
use crate::config::gate::DeviceSelector;
use std::sync::Arc;

/// Every Vulkan device the loader sees, in its order (the indices that
/// `--vulkan-device` takes).
pub fn enumerate() -> Result<Vec<DeviceInfo>, String> {
    let instance = instance::Instance::new()?;
    Ok(instance.physical_devices()?.into_iter().map(|d| d.info).collect())
}

/// Opens the device `selector` names (by index or name substring; with
/// none, the first non-CPU device, else the first). A selector that names
/// no device is an error listing those that exist.
pub fn open(selector: Option<&DeviceSelector>, options: Options) -> Result<Arc<VulkanGpu>, String> {
    let instance = instance::Instance::new()?;
    let devices = instance.physical_devices()?;
    let infos: Vec<DeviceInfo> = devices.iter().map(|d| d.info.clone()).collect();
    let index = select::select(&infos, selector)?;
    Ok(Arc::new(VulkanGpu::new(instance, &devices[index], options)?))
}

/// Checks that `selector` names a device, when the loader works at all:
/// `Err` only for a selector that names nothing (a usage error, whether
/// vulkan is required or not), never for a missing loader or driver.
pub fn check_selector(selector: &DeviceSelector) -> Result<(), String> {
    match enumerate() {
        Ok(devices) => select::select(&devices, Some(selector)).map(|_| ()),
        Err(_) => Ok(()),
    }
}
#[cfg(test)]
mod tests;
