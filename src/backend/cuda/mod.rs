//! The CUDA backend (cudarc, driver API + NVRTC, both loaded at run time).
//! The binary builds and starts with no CUDA at all: then this backend is
//! "unavailable" with the reason (no driver, no NVRTC, no device, cuInit
//! failed) and its cells SKIP or ERROR; it never panics.
//!
//! Devices are CUDA's ordinals. A gate picks one with `device:` (an ordinal
//! or a case-insensitive substring of its name), else ordinal 0. arch_id is
//! `cuda:{major}.{minor}`, the compute capability.

mod context;
mod library;
mod nvrtc;
mod stream;

use super::gpu::Gpu;
use super::{DeviceInfo, DeviceKind};
use crate::config::gate::DeviceSelector;
use anyhow::anyhow;
use cudarc::driver::result::DriverError;
use cudarc::driver::sys::{self, CUdevice, CUdevice_attribute};
use std::ffi::{c_char, c_int};
use std::sync::{Arc, OnceLock};

pub use context::CudaGpu;

/// Why CUDA cannot run here, or `None` when it can: the same check the
/// backend makes (libraries, then cuInit), for callers that only need to
/// know.
pub fn unavailable_reason() -> Option<String> {
    init().err()
}

/// Compiles kernel family `family` with NVRTC, with the options every CUDA
/// run uses, for `sm_{arch}` (major * 10 + minor), without a driver or a
/// device: the check that the CUDA dialect of every family compiles, which
/// runs wherever NVRTC is (CI installs it from PyPI's nvidia-cuda-nvrtc).
/// Returns the CUBIN's size.
pub fn compile_family(family: &str, arch: u32) -> anyhow::Result<usize> {
    library::nvrtc_only().map_err(|e| anyhow!(e))?;
    let source = super::kernels::source(family)?;
    let image = nvrtc::compile(&source, &format!("{family}.cl"), nvrtc::Target::Cubin(arch))?;
    Ok(image.len())
}

/// The architectures this NVRTC compiles for (major * 10 + minor).
pub fn nvrtc_archs() -> anyhow::Result<Vec<u32>> {
    library::nvrtc_only().map_err(|e| anyhow!(e))?;
    nvrtc::supported_archs()
}

/// A device as the driver API names it.
#[derive(Debug, Clone, Copy)]
pub struct CudaDevice {
    raw: CUdevice,
    major: i32,
    minor: i32,
}

impl CudaDevice {
    /// major * 10 + minor, as NVRTC numbers architectures.
    fn capability(&self) -> u32 {
        (self.major * 10 + self.minor) as u32
    }
}

/// "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected" for a call.
fn cu_error(call: &str, e: DriverError) -> anyhow::Error {
    let name = e.error_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|_| format!("{:?}", e.0));
    match e.error_string() {
        Ok(text) => anyhow!("{call}: {name}: {}", text.to_string_lossy()),
        Err(_) => anyhow!("{call}: {name}"),
    }
}

/// Loads the libraries and initializes the driver, once per process.
fn init() -> Result<(), String> {
    static INIT: OnceLock<Result<(), String>> = OnceLock::new();
    INIT.get_or_init(|| {
        timed("libcuda + libnvrtc opened and checked", library::libraries)?;
        guard(|| {
            // SAFETY: the driver library is loaded and has cuInit.
            timed("cuInit", || unsafe { sys::cuInit(0) }.result()).map_err(|e| format!("{:#}", cu_error("cuInit", e)))
        })
    })
    .clone()
}

/// Runs `f`, timed under `ULPGATE_TRACE` (start-up diagnosis).
fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    crate::trace::timed(&format!("cuda: {what}"), f)
}

/// Runs a cudarc call that could panic (a symbol it loads lazily that the
/// library check did not foresee) and turns the panic into a reason.
fn guard<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
        Err(format!("the CUDA libraries failed: {}", msg.unwrap_or_else(|| "panic".into())))
    })
}

/// Every CUDA device on this machine, or why there is none.
pub fn enumerate() -> Result<Vec<DeviceInfo>, String> {
    init()?;
    guard(|| {
        let nvrtc = nvrtc::version().map_err(|e| format!("{e:#}"))?;
        devices()?.into_iter().map(|d| describe(d, nvrtc).map_err(|e| format!("{e:#}"))).collect()
    })
}

/// Opens the selected device (see the module docs) and starts creating its
/// context in the background.
pub fn open(selector: Option<&DeviceSelector>) -> Result<Arc<dyn Gpu>, String> {
    init()?;
    guard(|| {
        let nvrtc = nvrtc::version().map_err(|e| format!("{e:#}"))?;
        let devices = devices()?;
        let infos = devices
            .iter()
            .map(|&d| describe(d, nvrtc))
            .collect::<anyhow::Result<Vec<_>>>()
            .map_err(|e| format!("{e:#}"))?;
        let chosen = super::select::select("CUDA", &infos, selector)?;
        let gpu = Arc::new(CudaGpu::new(devices[chosen], infos[chosen].clone(), nvrtc));
        gpu.warm_up();
        Ok(gpu as Arc<dyn Gpu>)
    })
}

fn devices() -> Result<Vec<CudaDevice>, String> {
    let mut count: c_int = 0;
    // SAFETY: an out-parameter; the driver is initialized.
    unsafe { sys::cuDeviceGetCount(&mut count) }
        .result()
        .map_err(|e| format!("{:#}", cu_error("cuDeviceGetCount", e)))?;
    if count == 0 {
        return Err("the CUDA driver reports no device".into());
    }
    (0..count)
        .map(|ordinal| {
            let mut raw: CUdevice = 0;
            // SAFETY: an out-parameter for a valid ordinal.
            unsafe { sys::cuDeviceGet(&mut raw, ordinal) }
                .result()
                .map_err(|e| format!("{:#}", cu_error("cuDeviceGet", e)))?;
            let attr = |a| attribute(raw, a).map_err(|e| format!("{e:#}"));
            Ok(CudaDevice {
                raw,
                major: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
                minor: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
            })
        })
        .collect()
}

fn attribute(device: CUdevice, attribute: CUdevice_attribute) -> anyhow::Result<i32> {
    let mut value: c_int = 0;
    // SAFETY: an out-parameter for a device from cuDeviceGet.
    unsafe { sys::cuDeviceGetAttribute(&mut value, attribute, device) }
        .result()
        .map_err(|e| cu_error("cuDeviceGetAttribute", e))?;
    Ok(value)
}

/// A NUL-terminated string a driver call writes into a buffer.
fn driver_string(call: &str, f: impl FnOnce(*mut c_char, c_int) -> sys::CUresult) -> anyhow::Result<String> {
    let mut buf = [0u8; 256];
    f(buf.as_mut_ptr().cast(), buf.len() as c_int).result().map_err(|e| cu_error(call, e))?;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Ok(String::from_utf8_lossy(&buf[..end]).trim().to_string())
}

fn describe(device: CudaDevice, nvrtc: (i32, i32)) -> anyhow::Result<DeviceInfo> {
    // SAFETY (both calls): a buffer of the given length, a valid device.
    let name = driver_string("cuDeviceGetName", |p, n| unsafe { sys::cuDeviceGetName(p, n, device.raw) })?;
    let pci = driver_string("cuDeviceGetPCIBusId", |p, n| unsafe { sys::cuDeviceGetPCIBusId(p, n, device.raw) })?;
    let mut version: c_int = 0;
    // SAFETY: an out-parameter.
    unsafe { sys::cuDriverGetVersion(&mut version) }.result().map_err(|e| cu_error("cuDriverGetVersion", e))?;
    let integrated = attribute(device.raw, CUdevice_attribute::CU_DEVICE_ATTRIBUTE_INTEGRATED)? != 0;
    Ok(DeviceInfo {
        backend: "cuda".into(),
        kind: DeviceKind::Gpu,
        arch_id: arch_id(device.major, device.minor),
        name,
        driver: Some("NVIDIA CUDA driver".into()),
        driver_version: Some(format!("{}.{}", version / 1000, version % 1000 / 10)),
        api_version: Some(format!("NVRTC {}.{}", nvrtc.0, nvrtc.1)),
        device_type: Some(if integrated { "integrated-gpu" } else { "discrete-gpu" }.into()),
        pci_bus_id: Some(pci.to_lowercase()),
    })
}

/// Research-0041: `cuda:{major}.{minor}`.
pub fn arch_id(major: i32, minor: i32) -> String {
    format!("cuda:{major}.{minor}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(name: &str) -> DeviceInfo {
        DeviceInfo::named("cuda", DeviceKind::Gpu, name, &arch_id(9, 0))
    }

    #[test]
    fn arch_id_is_the_compute_capability() {
        assert_eq!(arch_id(9, 0), "cuda:9.0");
        assert_eq!(arch_id(12, 1), "cuda:12.1");
    }

    #[test]
    fn selection_by_ordinal_or_name() {
        let devices = [info("NVIDIA H100 80GB HBM3"), info("NVIDIA L4")];
        let select = |s: Option<DeviceSelector>| super::super::select::select("CUDA", &devices, s.as_ref());
        assert_eq!(select(None), Ok(0));
        assert_eq!(select(Some(DeviceSelector::Name("l4".into()))), Ok(1));
        let err = select(Some(DeviceSelector::Index(2))).unwrap_err();
        assert_eq!(
            err,
            "no CUDA device 2; the devices are 0: NVIDIA H100 80GB HBM3 [cuda:9.0]; 1: NVIDIA L4 [cuda:9.0]"
        );
    }

    #[test]
    fn without_cuda_every_entry_point_says_why_instead_of_panicking() {
        // On a machine with CUDA this is the device list; either way no panic.
        match unavailable_reason() {
            Some(reason) => {
                assert!(!reason.is_empty());
                assert_eq!(enumerate(), Err(reason.clone()));
                assert_eq!(open(None).err(), Some(reason));
            }
            None => assert!(enumerate().is_ok_and(|d| !d.is_empty())),
        }
    }
}
