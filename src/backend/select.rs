//! Picks a device from a GPU API's list, the same way for Vulkan, CUDA and
//! OpenCL: by index, by a case-insensitive substring of its name, or the
//! default. A selector that matches nothing is an error naming the devices
//! that exist, never a fallback to another device.

use crate::backend::DeviceInfo;
use crate::config::gate::DeviceSelector;

/// `0: llvmpipe (LLVM 15.0.6, 256 bits) [vulkan:0x10005:0x0000]; 1: ...`
fn list(devices: &[DeviceInfo]) -> String {
    devices.iter().enumerate().map(|(i, d)| format!("{i}: {} [{}]", d.name, d.arch_id)).collect::<Vec<_>>().join("; ")
}

/// The index of the device `selector` names among `devices` of `api`
/// ("Vulkan", "CUDA", "OpenCL"). With no selector: the first device that is
/// not a CPU implementation (lavapipe, PoCL), else the first device.
pub fn select(api: &str, devices: &[DeviceInfo], selector: Option<&DeviceSelector>) -> Result<usize, String> {
    if devices.is_empty() {
        return Err(format!("no {api} device"));
    }
    match selector {
        None => Ok(devices.iter().position(|d| d.device_type.as_deref() != Some("cpu")).unwrap_or(0)),
        Some(DeviceSelector::Index(i)) => {
            let i = *i as usize;
            if i < devices.len() {
                Ok(i)
            } else {
                Err(format!("no {api} device {i}; the devices are {}", list(devices)))
            }
        }
        Some(DeviceSelector::Name(name)) => {
            let needle = name.to_lowercase();
            devices
                .iter()
                .position(|d| d.name.to_lowercase().contains(&needle))
                .ok_or_else(|| format!("no {api} device's name contains \"{name}\"; the devices are {}", list(devices)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::DeviceKind;

    fn device(name: &str, arch_id: &str, device_type: &str) -> DeviceInfo {
        DeviceInfo {
            device_type: Some(device_type.into()),
            ..DeviceInfo::named("vulkan", DeviceKind::Gpu, name, arch_id)
        }
    }

    fn two() -> Vec<DeviceInfo> {
        vec![
            device("llvmpipe (LLVM 15.0.6, 256 bits)", "vulkan:0x10005:0x0000", "cpu"),
            device("NVIDIA H100 80GB HBM3", "vulkan:0x10de:0x2330", "discrete-gpu"),
        ]
    }

    #[test]
    fn default_prefers_hardware() {
        assert_eq!(select("Vulkan", &two(), None), Ok(1));
        assert_eq!(select("Vulkan", &two()[..1], None), Ok(0));
    }

    #[test]
    fn index_and_name_select() {
        assert_eq!(select("Vulkan", &two(), Some(&DeviceSelector::Index(0))), Ok(0));
        assert_eq!(select("Vulkan", &two(), Some(&DeviceSelector::Name("h100".into()))), Ok(1));
        assert_eq!(select("Vulkan", &two(), Some(&DeviceSelector::Name("LLVMpipe".into()))), Ok(0));
    }

    #[test]
    fn a_missing_device_names_those_that_exist() {
        let err = select("Vulkan", &two(), Some(&DeviceSelector::Index(99))).unwrap_err();
        assert!(err.contains("no Vulkan device 99"), "{err}");
        assert!(err.contains("0: llvmpipe (LLVM 15.0.6, 256 bits) [vulkan:0x10005:0x0000]"), "{err}");
        assert!(err.contains("1: NVIDIA H100 80GB HBM3 [vulkan:0x10de:0x2330]"), "{err}");
        let err = select("Vulkan", &two(), Some(&DeviceSelector::Name("arc".into()))).unwrap_err();
        assert!(err.contains("\"arc\"") && err.contains("vulkan:0x10de:0x2330"), "{err}");
    }
}
