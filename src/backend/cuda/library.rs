//! Finds the CUDA driver (`libcuda.so.1`) and NVRTC (`libnvrtc.so.13`,
//! `.12`, ...) before cudarc touches them: cudarc's loader panics when a
//! library or a symbol is missing, so this module opens each library under
//! the names cudarc will ask for, checks every symbol this backend calls,
//! and keeps the library loaded. A missing piece becomes the reason CUDA
//! is "unavailable", never a panic.

use libloading::Library;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Driver API entry points this backend (and cudarc's error messages) use.
const DRIVER_SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuDeviceGetPCIBusId",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxSetCurrent",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemHostAlloc",
    "cuMemFreeHost",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuMemsetD8Async",
    "cuStreamCreate",
    "cuStreamSynchronize",
    "cuStreamDestroy_v2",
    "cuModuleLoadData",
    "cuModuleGetFunction",
    "cuModuleUnload",
    "cuLaunchKernel",
    "cuGetErrorName",
    "cuGetErrorString",
];

const NVRTC_SYMBOLS: &[&str] = &[
    "nvrtcVersion",
    "nvrtcGetNumSupportedArchs",
    "nvrtcGetSupportedArchs",
    "nvrtcCreateProgram",
    "nvrtcCompileProgram",
    "nvrtcGetProgramLogSize",
    "nvrtcGetProgramLog",
    "nvrtcGetCUBINSize",
    "nvrtcGetCUBIN",
    "nvrtcGetPTXSize",
    "nvrtcGetPTX",
    "nvrtcDestroyProgram",
];

/// The libraries found, kept loaded for the life of the process.
pub struct Libraries {
    _keep: [Library; 2],
}

/// The CUDA libraries, found once per process; `Err(reason)` says what is
/// missing.
pub fn libraries() -> Result<&'static Libraries, String> {
    static FOUND: OnceLock<Result<Libraries, String>> = OnceLock::new();
    FOUND.get_or_init(find).as_ref().map_err(Clone::clone)
}

/// NVRTC alone, for compiling kernels where there is no driver (the
/// tests' check that every family compiles as CUDA).
pub fn nvrtc_only() -> Result<(), String> {
    static FOUND: OnceLock<Result<Library, String>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let mut names = cudarc::get_lib_name_candidates("nvrtc");
            names.extend(toolkit_nvrtc_paths());
            open_first("NVRTC", "libnvrtc.so.13", &names, NVRTC_SYMBOLS)
        })
        .as_ref()
        .map(|_| ())
        .map_err(Clone::clone)
}

fn find() -> Result<Libraries, String> {
    let driver =
        open_first("the CUDA driver", "libcuda.so.1", &cudarc::get_lib_name_candidates("cuda"), DRIVER_SYMBOLS)?;
    let mut nvrtc_names = cudarc::get_lib_name_candidates("nvrtc");
    nvrtc_names.extend(toolkit_nvrtc_paths());
    let nvrtc = open_first("NVRTC", "libnvrtc.so.13", &nvrtc_names, NVRTC_SYMBOLS)?;
    Ok(Libraries { _keep: [driver, nvrtc] })
}

/// NVRTC inside a CUDA toolkit that is not on the loader's path, tried
/// after cudarc's own names. Loaded by full path, it answers cudarc's later
/// `dlopen("libnvrtc.so.13")` by its soname, so cudarc uses this very copy.
fn toolkit_nvrtc_paths() -> Vec<String> {
    let mut roots: Vec<PathBuf> = ["ULPGATE_CUDA_HOME", "CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"]
        .iter()
        .filter_map(std::env::var_os)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .collect();
    roots.push(PathBuf::from("/usr/local/cuda"));
    let mut out = Vec::new();
    for root in roots {
        for lib in ["lib64", "lib", "targets/x86_64-linux/lib"] {
            for version in ["13", "12"] {
                out.push(root.join(lib).join(format!("libnvrtc.so.{version}")).to_string_lossy().into_owned());
            }
        }
    }
    out
}

/// The first candidate that loads, as cudarc picks it, provided it has
/// every symbol (else it is too old, and cudarc would panic on it).
/// "Not found" quotes the dynamic loader's message for `primary`.
fn open_first(what: &str, primary: &str, candidates: &[String], symbols: &[&str]) -> Result<Library, String> {
    let mut primary_error = None;
    for name in candidates {
        // SAFETY: loading runs the library's initializers, as the CUDA
        // runtime itself would; nothing is called yet.
        match unsafe { Library::new(name) } {
            Ok(lib) => {
                // SAFETY: only the presence of each symbol is checked.
                return match symbols.iter().find(|s| unsafe { lib.get::<*const ()>(s.as_bytes()) }.is_err()) {
                    None => Ok(lib),
                    Some(missing) => Err(format!("{what}: {name} lacks {missing} (too old)")),
                };
            }
            Err(e) if name == primary => primary_error = Some(loader_message(&e)),
            Err(_) => {}
        }
    }
    Err(format!(
        "{what} was not found: {}; {} other names searched",
        primary_error.unwrap_or_else(|| format!("{primary} was not searched")),
        candidates.len().saturating_sub(1)
    ))
}

/// The dynamic loader's own words ("libcuda.so.1: cannot open shared
/// object file: No such file or directory").
fn loader_message(e: &libloading::Error) -> String {
    match std::error::Error::source(e) {
        Some(source) => source.to_string(),
        None => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cudarc_asks_for_the_names_cuda_12_and_13_install() {
        let driver = cudarc::get_lib_name_candidates("cuda");
        assert!(driver.iter().any(|n| n == "libcuda.so.1"), "{driver:?}");
        let nvrtc = cudarc::get_lib_name_candidates("nvrtc");
        for soname in ["libnvrtc.so.13", "libnvrtc.so.12"] {
            assert!(nvrtc.iter().any(|n| n == soname), "{soname} not in {nvrtc:?}");
        }
    }

    #[test]
    fn a_missing_library_is_a_reason_not_a_panic() {
        let name = "libulpgate-does-not-exist.so.13";
        let err = open_first("NVRTC", name, &[name.into(), "libalso-missing.so".into()], NVRTC_SYMBOLS).unwrap_err();
        assert!(err.starts_with("NVRTC was not found: libulpgate-does-not-exist.so.13: cannot open"), "{err}");
        assert!(err.ends_with("; 1 other names searched"), "{err}");
    }

    #[test]
    fn a_library_without_the_symbols_is_too_old() {
        // libc loads everywhere and has no CUDA entry points.
        let err = open_first("the CUDA driver", "libcuda.so.1", &["libc.so.6".into()], DRIVER_SYMBOLS).unwrap_err();
        assert_eq!(err, "the CUDA driver: libc.so.6 lacks cuInit (too old)");
    }
}
