//! The OpenCL backend (opencl3). The ICD loader (`libOpenCL.so.1`) is
//! opened at run time, so the binary builds and starts without any OpenCL
//! package; without a loader, a platform or a device the backend reports
//! "unavailable" with the reason.
//!
//! Devices are numbered across every platform, in the loader's order, as
//! `ulpgate devices` lists them. A gate picks one with `device:` (an index
//! or a case-insensitive substring of its name); without one, the first GPU
//! is used, else the first device. Either way the device that runs is the
//! device reported.

mod context;
mod stream;

use super::DeviceInfo;
use super::gpu::Gpu;
use crate::config::gate::DeviceSelector;
use opencl3::device::{
    CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU, Device, cl_device_id,
};
use opencl3::error_codes::ClError;
use opencl3::platform::{Platform, get_platforms};
use std::sync::Arc;

pub use context::ClGpu;

/// One device as enumeration found it.
struct Found {
    id: cl_device_id,
    platform: String,
    info: DeviceInfo,
}

/// Every OpenCL device on this machine, or why there is none.
pub fn enumerate() -> Result<Vec<DeviceInfo>, String> {
    Ok(find_devices()?.into_iter().map(|f| f.info).collect())
}

/// Opens the selected device (see the module docs).
pub fn open(selector: Option<&DeviceSelector>) -> Result<Arc<dyn Gpu>, String> {
    let devices = find_devices()?;
    let infos: Vec<DeviceInfo> = devices.iter().map(|d| d.info.clone()).collect();
    let chosen = super::select::select("OpenCL", &infos, selector)?;
    let found = &devices[chosen];
    let gpu = ClGpu::new(Device::new(found.id), found.info.clone())
        .map_err(|e| format!("cannot open OpenCL device {} ({}): {e:#}", found.info.name, found.platform))?;
    Ok(Arc::new(gpu))
}

fn find_devices() -> Result<Vec<Found>, String> {
    check_loader()?;
    let platforms = get_platforms().map_err(|e| match e.0 {
        opencl3::error_codes::CL_PLATFORM_NOT_FOUND_KHR => {
            "the OpenCL ICD loader found no platform (no vendor ICD in /etc/OpenCL/vendors or OCL_ICD_VENDORS; \
             on the CPU, PoCL: Debian's pocl-opencl-icd)"
                .to_string()
        }
        _ => format!("cannot list OpenCL platforms: {e}"),
    })?;
    let mut found = Vec::new();
    for platform in &platforms {
        let platform_name = platform.name().unwrap_or_else(|_| "unnamed platform".into());
        // A platform without devices answers CL_DEVICE_NOT_FOUND: skip it.
        let Ok(ids) = platform.get_devices(CL_DEVICE_TYPE_ALL) else { continue };
        for id in ids {
            let device = Device::new(id);
            let info = describe(&device, platform).map_err(|e| format!("cannot query an OpenCL device: {e}"))?;
            found.push(Found { id, platform: platform_name.clone(), info });
        }
    }
    if found.is_empty() {
        return Err(format!("no OpenCL device on {} platform(s)", platforms.len()));
    }
    Ok(found)
}

/// The loader is opened by cl3 on first use; open it here first to say
/// why it is missing (cl3 only reports that it failed).
fn check_loader() -> Result<(), String> {
    let mut candidates: Vec<String> = std::env::var("OPENCL_DYLIB_PATH")
        .map(|v| v.split(';').filter(|s| !s.is_empty()).map(String::from).collect())
        .unwrap_or_default();
    candidates.push("libOpenCL.so.1".into());
    let mut last = String::new();
    for c in &candidates {
        // SAFETY: loading the ICD loader runs only its initializers, which
        // cl3 would run anyway.
        match unsafe { libloading::Library::new(c) } {
            Ok(_) => return Ok(()),
            Err(e) => last = e.to_string(),
        }
    }
    Err(format!(
        "no OpenCL ICD loader (libOpenCL.so.1: {last}; Debian: ocl-icd-libopencl1, with a driver such as \
         pocl-opencl-icd on the CPU)"
    ))
}

fn describe(device: &Device, platform: &Platform) -> Result<DeviceInfo, ClError> {
    let vendor_id = device.vendor_id()?;
    let driver_version = device.driver_version()?.trim().to_string();
    let kind = device.dev_type()?;
    let device_type = if kind & CL_DEVICE_TYPE_GPU != 0 {
        if device.host_unified_memory().unwrap_or(false) { "integrated-gpu" } else { "discrete-gpu" }
    } else if kind & CL_DEVICE_TYPE_CPU != 0 {
        "cpu"
    } else if kind & CL_DEVICE_TYPE_ACCELERATOR != 0 {
        "accelerator"
    } else {
        "other"
    };
    Ok(DeviceInfo {
        backend: "opencl".into(),
        kind: super::DeviceKind::Gpu,
        arch_id: arch_id(vendor_id, &driver_version),
        name: device.name()?.trim().to_string(),
        driver: platform.name().ok().map(|s| s.trim().to_string()),
        driver_version: Some(driver_version),
        api_version: device.version().ok().map(|s| s.trim().to_string()),
        device_type: Some(device_type.into()),
        pci_bus_id: pci_bus_id(device),
    })
}

/// Research-0041: `opencl:{vendor_id:#06x}:{driver_version}`.
pub fn arch_id(vendor_id: u32, driver_version: &str) -> String {
    format!("opencl:{vendor_id:#06x}:{driver_version}")
}

/// `dddd:bb:dd.f` from cl_khr_pci_bus_info, else NVIDIA's attribute query.
fn pci_bus_id(device: &Device) -> Option<String> {
    if let Ok(p) = device.pcibusinfokhr_intel() {
        return Some(format!("{:04x}:{:02x}:{:02x}.{:x}", p.pci_domain, p.pci_bus, p.pci_device, p.pci_function));
    }
    let (bus, slot) = (device.pci_bus_id_nv().ok()?, device.pci_slot_id_nv().ok()?);
    const CL_DEVICE_PCI_DOMAIN_ID_NV: u32 = 0x400A;
    let domain = device
        .get_data(CL_DEVICE_PCI_DOMAIN_ID_NV)
        .ok()
        .and_then(|b| b.get(..4).map(|w| u32::from_ne_bytes([w[0], w[1], w[2], w[3]])))
        .unwrap_or(0);
    Some(format!("{domain:04x}:{bus:02x}:{:02x}.{:x}", slot >> 3, slot & 7))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_ids_follow_research_0041() {
        assert_eq!(arch_id(0x10006, "3.1"), "opencl:0x10006:3.1");
        assert_eq!(arch_id(0x10de, "580.159.03"), "opencl:0x10de:580.159.03");
    }
}
