//! Run-time compilation of the kernel families with NVRTC, straight to
//! machine code (CUBIN) for the device's compute capability, or to PTX for
//! the driver to finish when this NVRTC predates the device.

use anyhow::{Result, anyhow, bail};
use cudarc::nvrtc::result as nvrtc;
use cudarc::nvrtc::sys;
use std::ffi::{CString, c_int};

/// Options every kernel is compiled with. `--fmad=false`: no fused
/// multiply-add, so float kernels round like the CPU reference (the
/// kernels also spell their float operations with `__f*_rn`).
/// Correctly rounded division and no flush-to-zero are NVRTC's defaults
/// and are stated anyway.
pub const OPTIONS: &[&str] = &["--fmad=false", "--prec-div=true", "--ftz=false"];

/// What NVRTC is asked to produce for a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Machine code for exactly this architecture (`sm_90`).
    Cubin(u32),
    /// PTX for an older virtual architecture (`compute_90`), JIT-compiled
    /// by the driver for a device newer than this NVRTC knows.
    Ptx(u32),
}

impl Target {
    /// The best target for a device of `capability` (major * 10 + minor)
    /// among the architectures this NVRTC supports.
    pub fn choose(capability: u32, supported: &[u32]) -> Result<Target> {
        if supported.contains(&capability) {
            return Ok(Target::Cubin(capability));
        }
        match supported.iter().copied().filter(|&a| a <= capability).max() {
            Some(older) => Ok(Target::Ptx(older)),
            None => bail!(
                "NVRTC supports no architecture up to compute capability {}.{} (it knows {supported:?})",
                capability / 10,
                capability % 10
            ),
        }
    }

    pub fn option(self) -> String {
        match self {
            Target::Cubin(a) => format!("--gpu-architecture=sm_{a}"),
            Target::Ptx(a) => format!("--gpu-architecture=compute_{a}"),
        }
    }
}

/// NVRTC's (major, minor) version.
pub fn version() -> Result<(i32, i32)> {
    let (mut major, mut minor): (c_int, c_int) = (0, 0);
    // SAFETY: two out-parameters.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) }.result().map_err(|e| anyhow!("nvrtcVersion: {e}"))?;
    Ok((major, minor))
}

/// The architectures this NVRTC can target, as major * 10 + minor.
pub fn supported_archs() -> Result<Vec<u32>> {
    let mut n: c_int = 0;
    // SAFETY: an out-parameter, then a buffer of the size it gave.
    unsafe { sys::nvrtcGetNumSupportedArchs(&mut n) }.result().map_err(|e| anyhow!("NVRTC: {e}"))?;
    let mut archs = vec![0 as c_int; n.max(0) as usize];
    unsafe { sys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) }.result().map_err(|e| anyhow!("NVRTC: {e}"))?;
    Ok(archs.into_iter().map(|a| a as u32).collect())
}

/// Compiles one self-contained source; returns the CUBIN or the
/// NUL-terminated PTX, ready for `cuModuleLoadData`.
pub fn compile(source: &str, file_name: &str, target: Target) -> Result<Vec<u8>> {
    let src = CString::new(source).map_err(|_| anyhow!("{file_name}: NUL byte in kernel source"))?;
    let name = CString::new(file_name).map_err(|_| anyhow!("NUL byte in {file_name:?}"))?;
    let prog = nvrtc::create_program(&src, Some(&name)).map_err(|e| anyhow!("nvrtcCreateProgram: {e}"))?;
    let mut options: Vec<String> = OPTIONS.iter().map(|s| s.to_string()).collect();
    options.push(target.option());
    // SAFETY: `prog` is valid until destroyed below, on every path.
    let result = unsafe {
        match nvrtc::compile_program(prog, &options) {
            Ok(()) => image(prog, target),
            Err(e) => {
                let log = nvrtc::get_program_log(prog).map(|l| c_chars_to_string(&l)).unwrap_or_default();
                Err(anyhow!("NVRTC could not compile {file_name} ({e}):\n{}", log.trim_end()))
            }
        }
    };
    // SAFETY: created above, destroyed once.
    let _ = unsafe { nvrtc::destroy_program(prog) };
    result
}

/// # Safety
/// `prog` must be a successfully compiled program.
unsafe fn image(prog: sys::nvrtcProgram, target: Target) -> Result<Vec<u8>> {
    match target {
        Target::Cubin(_) => {
            let mut size = 0usize;
            unsafe { sys::nvrtcGetCUBINSize(prog, &mut size) }.result().map_err(|e| anyhow!("NVRTC: {e}"))?;
            let mut cubin = vec![0u8; size];
            unsafe { sys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr().cast()) }
                .result()
                .map_err(|e| anyhow!("NVRTC: {e}"))?;
            Ok(cubin)
        }
        Target::Ptx(_) => {
            let ptx = unsafe { nvrtc::get_ptx(prog) }.map_err(|e| anyhow!("NVRTC: {e}"))?;
            let mut bytes: Vec<u8> = ptx.into_iter().map(|c| c as u8).collect();
            if bytes.last() != Some(&0) {
                bytes.push(0);
            }
            Ok(bytes)
        }
    }
}

fn c_chars_to_string(chars: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = chars.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_prefer_exact_machine_code_then_older_ptx() {
        let archs = [75, 80, 86, 89, 90];
        assert_eq!(Target::choose(90, &archs).unwrap(), Target::Cubin(90));
        assert_eq!(Target::choose(100, &archs).unwrap(), Target::Ptx(90));
        assert!(Target::choose(70, &archs).unwrap_err().to_string().contains("compute capability 7.0"));
        assert_eq!(Target::Cubin(90).option(), "--gpu-architecture=sm_90");
        assert_eq!(Target::Ptx(90).option(), "--gpu-architecture=compute_90");
    }

    #[test]
    fn no_option_allows_contraction_or_fast_math() {
        assert!(OPTIONS.contains(&"--fmad=false"));
        assert!(!OPTIONS.iter().any(|o| o.contains("fast") || o.contains("fmad=true")));
    }
}
