//! A physical device's identity (Research-0041 arch_id, name, driver, API)
//! read from VkPhysicalDeviceProperties and the driver properties.

use super::instance::Instance;
use crate::backend::{DeviceInfo, DeviceKind};
use ash::vk;
use std::ffi::CStr;

/// One physical device as the loader lists it.
pub struct PhysicalDevice {
    /// Its position in the loader's list: what `--vulkan-device N` names.
    pub index: usize,
    pub handle: vk::PhysicalDevice,
    pub info: DeviceInfo,
    pub api_version: u32,
    pub extensions: Vec<String>,
}

impl PhysicalDevice {
    pub fn has_extension(&self, name: &CStr) -> bool {
        name.to_str().is_ok_and(|n| self.extensions.iter().any(|e| e == n))
    }
}

/// `major.minor.patch` of a VK_MAKE_API_VERSION number.
pub fn version_string(v: u32) -> String {
    format!("{}.{}.{}", vk::api_version_major(v), vk::api_version_minor(v), vk::api_version_patch(v))
}

/// A driver version as its vendor packs it: NVIDIA uses 10.8.8.6 bits,
/// everyone else (Mesa included) VK_MAKE_VERSION.
pub fn driver_version_string(vendor_id: u32, v: u32) -> String {
    if vendor_id == 0x10de {
        format!("{}.{}.{}.{}", v >> 22, (v >> 14) & 0xff, (v >> 6) & 0xff, v & 0x3f)
    } else {
        version_string(v)
    }
}

pub fn device_type_name(t: vk::PhysicalDeviceType) -> &'static str {
    match t {
        vk::PhysicalDeviceType::INTEGRATED_GPU => "integrated-gpu",
        vk::PhysicalDeviceType::DISCRETE_GPU => "discrete-gpu",
        vk::PhysicalDeviceType::VIRTUAL_GPU => "virtual-gpu",
        vk::PhysicalDeviceType::CPU => "cpu",
        _ => "other",
    }
}

/// Research-0041: `vulkan:{vendorID:#06x}:{deviceID:#06x}`.
pub fn arch_id(vendor_id: u32, device_id: u32) -> String {
    format!("vulkan:{vendor_id:#06x}:{device_id:#06x}")
}

fn c_chars(chars: &[std::ffi::c_char]) -> String {
    // The arrays are NUL-terminated within their length.
    let bytes: Vec<u8> = chars.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Reads a physical device's properties (and, where the device has them,
/// its driver and PCI bus properties).
pub fn describe(instance: &Instance, index: usize, handle: vk::PhysicalDevice) -> PhysicalDevice {
    let vk_instance = &instance.instance;
    // SAFETY: `handle` comes from this instance.
    let extensions: Vec<String> = unsafe { vk_instance.enumerate_device_extension_properties(handle) }
        .unwrap_or_default()
        .iter()
        .filter_map(|e| e.extension_name_as_c_str().ok().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    // SAFETY: as above.
    let basic = unsafe { vk_instance.get_physical_device_properties(handle) };
    let has = |name: &CStr| name.to_str().is_ok_and(|n| extensions.iter().any(|e| e == n));
    let driver_props = (basic.api_version >= vk::API_VERSION_1_2 && instance.api_version >= vk::API_VERSION_1_2)
        || has(ash::khr::driver_properties::NAME);
    let pci = has(ash::ext::pci_bus_info::NAME);

    let mut driver = vk::PhysicalDeviceDriverProperties::default();
    let mut bus = vk::PhysicalDevicePCIBusInfoPropertiesEXT::default();
    let mut props2 = vk::PhysicalDeviceProperties2::default();
    if driver_props {
        props2 = props2.push_next(&mut driver);
    }
    if pci {
        props2 = props2.push_next(&mut bus);
    }
    // SAFETY: the chained structs are those the device supports; all live
    // across the call.
    unsafe { vk_instance.get_physical_device_properties2(handle, &mut props2) };
    let p = props2.properties;

    let driver_name = driver_props
        .then(|| {
            let (name, info) = (c_chars(&driver.driver_name), c_chars(&driver.driver_info));
            [name, info].into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join(" ")
        })
        .filter(|s| !s.is_empty());
    let info = DeviceInfo {
        backend: "vulkan".into(),
        kind: DeviceKind::Gpu,
        arch_id: arch_id(p.vendor_id, p.device_id),
        name: c_chars(&p.device_name),
        driver: driver_name,
        driver_version: Some(driver_version_string(p.vendor_id, p.driver_version)),
        api_version: Some(version_string(p.api_version)),
        device_type: Some(device_type_name(p.device_type).into()),
        pci_bus_id: pci.then(|| {
            format!("{:04x}:{:02x}:{:02x}.{:x}", bus.pci_domain, bus.pci_bus, bus.pci_device, bus.pci_function)
        }),
    };
    PhysicalDevice { index, handle, info, api_version: p.api_version, extensions }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_ids_follow_research_0041() {
        assert_eq!(arch_id(0x10005, 0), "vulkan:0x10005:0x0000");
        assert_eq!(arch_id(0x10de, 0x2330), "vulkan:0x10de:0x2330");
        assert_eq!(arch_id(0x8086, 0x56a0), "vulkan:0x8086:0x56a0");
    }

    #[test]
    fn driver_versions_decode_per_vendor() {
        // NVIDIA 580.82.7.0 packs as 10.8.8.6 bits.
        let nv = (580 << 22) | (82 << 14) | (7 << 6);
        assert_eq!(driver_version_string(0x10de, nv), "580.82.7.0");
        // Mesa: VK_MAKE_VERSION(22, 3, 6).
        let mesa = vk::make_api_version(0, 22, 3, 6);
        assert_eq!(driver_version_string(0x10005, mesa), "22.3.6");
        assert_eq!(version_string(vk::API_VERSION_1_3), "1.3.0");
    }

    #[test]
    fn device_types_have_stable_names() {
        assert_eq!(device_type_name(vk::PhysicalDeviceType::CPU), "cpu");
        assert_eq!(device_type_name(vk::PhysicalDeviceType::DISCRETE_GPU), "discrete-gpu");
        assert_eq!(device_type_name(vk::PhysicalDeviceType::OTHER), "other");
    }
}
