//! `--vulkan-device`, `--cuda-device` and `--opencl-device`: which device
//! every backend of that kind opens, overriding a gate's `device`. Shared
//! by `run`, `score`, `bench` and `calibrate collect`.

use crate::backend::OpenOptions;
use crate::backend::{cuda, opencl, select};
use crate::config::gate::DeviceSelector;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct DeviceArgs {
    /// Vulkan device for every vulkan backend: an index or a name substring.
    #[arg(long, value_name = "INDEX|NAME")]
    pub vulkan_device: Option<String>,
    /// CUDA device for every cuda backend: an index or a name substring.
    #[arg(long, value_name = "INDEX|NAME")]
    pub cuda_device: Option<String>,
    /// OpenCL device for every opencl backend: an index into every
    /// platform's devices as `ulpgate devices` lists them, or a name
    /// substring.
    #[arg(long, value_name = "INDEX|NAME")]
    pub opencl_device: Option<String>,
}

impl DeviceArgs {
    /// The selectors, each checked at once where its API can list devices:
    /// a device that does not exist is a usage error (exit 2) naming the
    /// ones that do, not a backend that SKIPs. A machine without the API's
    /// loader or driver passes: opening the backend then says so, as the
    /// gate's `required` decides. With `check_vulkan` false the caller
    /// checks `--vulkan-device` itself (`run` does, while it reads the
    /// fixtures: `RunOptions::check_vulkan_device`).
    pub fn open_options(&self, check_vulkan: bool) -> anyhow::Result<OpenOptions> {
        let vulkan_device = match &self.vulkan_device {
            Some(arg) if check_vulkan => super::vulkan_device(Some(arg.clone()))?,
            Some(arg) => Some(selector(arg)),
            None => None,
        };
        let cuda_device = checked("--cuda-device", "CUDA", self.cuda_device.as_deref(), cuda::enumerate)?;
        let opencl_device = checked("--opencl-device", "OpenCL", self.opencl_device.as_deref(), opencl::enumerate)?;
        Ok(OpenOptions { vulkan_device, cuda_device, opencl_device })
    }

    /// The same flags as command-line arguments (`bench` passes them to
    /// the `run` processes it times).
    pub fn to_args(&self) -> Vec<String> {
        let flags = [
            ("--vulkan-device", &self.vulkan_device),
            ("--cuda-device", &self.cuda_device),
            ("--opencl-device", &self.opencl_device),
        ];
        flags.into_iter().filter_map(|(flag, v)| v.as_ref().map(|v| [flag.to_string(), v.clone()])).flatten().collect()
    }
}

fn selector(arg: &str) -> DeviceSelector {
    let Ok(selector) = arg.parse();
    selector
}

/// `arg` as a selector, held to the devices `enumerate` lists when it can
/// list them.
fn checked(
    flag: &str,
    api: &str,
    arg: Option<&str>,
    enumerate: fn() -> Result<Vec<crate::backend::DeviceInfo>, String>,
) -> anyhow::Result<Option<DeviceSelector>> {
    let Some(arg) = arg else { return Ok(None) };
    let selector = selector(arg);
    if let Ok(devices) = enumerate() {
        select::select(api, &devices, Some(&selector)).map_err(|e| anyhow::anyhow!("{flag} {arg}: {e}"))?;
    }
    Ok(Some(selector))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flags_round_trip_as_arguments() {
        let args =
            DeviceArgs { vulkan_device: Some("llvmpipe".into()), cuda_device: None, opencl_device: Some("1".into()) };
        assert_eq!(args.to_args(), ["--vulkan-device", "llvmpipe", "--opencl-device", "1"]);
        assert!(DeviceArgs::default().to_args().is_empty());
    }
}
