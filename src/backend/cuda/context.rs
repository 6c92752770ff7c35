//! A CUDA context on one device (its primary context, retained on first
//! use): device buffers, kernel modules compiled by NVRTC on first use and
//! cached on disk, streams.

use super::nvrtc::{self, Target};
use super::stream::new_stream;
use super::{CudaDevice, cu_error, timed};
use crate::backend::DeviceInfo;
use crate::backend::gpu::{Buffer, Gpu, Kernel, KernelSpec, Stream};
use crate::backend::kernel_cache::DiskCache;
use crate::backend::kernels::{self, fnv1a};
use anyhow::{Context as _, Result, anyhow};
use cudarc::driver::sys::{self, CUcontext, CUdevice, CUdeviceptr, CUfunction, CUmodule};
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::{Arc, Mutex, OnceLock};

/// The device's primary context (kept for the life of the process).
pub struct Ctx {
    raw: CUcontext,
}

// SAFETY: a CUDA context may be made current on any thread; every user
// binds it first (`bind`).
unsafe impl Send for Ctx {}
unsafe impl Sync for Ctx {}

impl Ctx {
    fn retain(device: CUdevice) -> Result<Arc<Ctx>> {
        let mut raw: CUcontext = std::ptr::null_mut();
        // SAFETY: `device` came from cuDeviceGet.
        unsafe { sys::cuDevicePrimaryCtxRetain(&mut raw, device) }
            .result()
            .map_err(|e| cu_error("cuDevicePrimaryCtxRetain", e))?;
        Ok(Arc::new(Ctx { raw }))
    }

    /// Makes this context current on the calling thread (cheap; rayon may
    /// run a side on any thread).
    pub fn bind(&self) -> Result<()> {
        // SAFETY: the context is retained for as long as `self` lives.
        unsafe { sys::cuCtxSetCurrent(self.raw) }.result().map_err(|e| cu_error("cuCtxSetCurrent", e))
    }
}

// The primary context is never released: it lives until the process exits,
// and the driver frees it then. Releasing it by hand costs ~50 ms at the end
// of every run (measured on an H200), and a later open in the same process
// (tests, `bench`) gets the live context for free instead of paying the
// driver's ~0.1 s to create it again. Buffers, modules and streams are
// still freed as their owners go.

/// A device allocation of this backend.
pub struct CudaBuffer {
    pub ptr: CUdeviceptr,
    ctx: Arc<Ctx>,
}

impl Drop for CudaBuffer {
    fn drop(&mut self) {
        if self.ctx.bind().is_ok() {
            // SAFETY: allocated by cuMemAlloc in this context; streams keep
            // a clone of every buffer their queued work uses until it ends.
            let _ = unsafe { sys::cuMemFree_v2(self.ptr) };
        }
    }
}

struct Module {
    raw: CUmodule,
    ctx: Arc<Ctx>,
}

// SAFETY: modules are context-wide objects, usable from any thread.
unsafe impl Send for Module {}
unsafe impl Sync for Module {}

impl Drop for Module {
    fn drop(&mut self) {
        if self.ctx.bind().is_ok() {
            // SAFETY: loaded once in this context.
            let _ = unsafe { sys::cuModuleUnload(self.raw) };
        }
    }
}

/// A kernel of this backend: a function in a loaded module.
pub struct CudaKernel {
    pub func: CUfunction,
    _module: Arc<Module>,
}

// SAFETY: as Module; launches take the function handle by value.
unsafe impl Send for CudaKernel {}
unsafe impl Sync for CudaKernel {}

pub struct CudaGpu {
    info: DeviceInfo,
    device: CudaDevice,
    nvrtc_version: (i32, i32),
    cache: DiskCache,
    ctx: OnceLock<Arc<Ctx>>,
    /// Serialises the context's creation: workers arriving together wait
    /// for one retain instead of each making their own.
    creating: Mutex<()>,
    modules: Mutex<HashMap<&'static str, Arc<Module>>>,
}

impl CudaGpu {
    pub fn new(device: CudaDevice, info: DeviceInfo, nvrtc_version: (i32, i32)) -> Self {
        CudaGpu {
            info,
            device,
            nvrtc_version,
            cache: DiskCache::user(),
            ctx: OnceLock::new(),
            creating: Mutex::new(()),
            modules: Mutex::new(HashMap::new()),
        }
    }

    /// Starts creating the context on a background thread. The driver
    /// takes about 0.1 s for it (an H200, persistence mode off); begun when
    /// the backend opens, it overlaps reading fixtures and CPU work instead
    /// of delaying the first CUDA side. A failure here is reported again,
    /// in place, by the first real use.
    pub fn warm_up(self: &Arc<Self>) {
        let gpu = self.clone();
        std::thread::spawn(move || {
            let _ = gpu.ctx();
        });
    }

    /// The context, bound to this thread, created once.
    fn ctx(&self) -> Result<&Arc<Ctx>> {
        if self.ctx.get().is_none() {
            let _creating = self.creating.lock().map_err(|_| anyhow!("CUDA context creation poisoned"))?;
            if self.ctx.get().is_none() {
                let c = timed("primary context retained", || Ctx::retain(self.device.raw))?;
                let _ = self.ctx.set(c);
            }
        }
        let ctx = self.ctx.get().ok_or_else(|| anyhow!("no CUDA context"))?;
        ctx.bind()?;
        Ok(ctx)
    }

    fn module(&self, family: &'static str) -> Result<Arc<Module>> {
        let ctx = self.ctx()?;
        let mut modules = self.modules.lock().map_err(|_| anyhow!("CUDA module cache poisoned"))?;
        if let Some(m) = modules.get(family) {
            return Ok(m.clone());
        }
        let source = kernels::source(family)?;
        let target = Target::choose(self.device.capability(), &nvrtc::supported_archs()?)?;
        let key = format!(
            "cuda|{family}|source={:016x}|nvrtc={}.{}|{}|{}",
            fnv1a(&[source.as_bytes()]),
            self.nvrtc_version.0,
            self.nvrtc_version.1,
            target.option(),
            nvrtc::OPTIONS.join(" ")
        );
        let cached = timed(&format!("{family}: cached image loaded, if any"), || {
            self.cache.load(family, &key).and_then(|image| load_module(&image).ok())
        });
        let module = match cached {
            Some(raw) => raw,
            None => {
                // Not cached, or the entry would not load: compile and
                // (re)write it.
                let image = timed(&format!("{family}: NVRTC compile"), || {
                    nvrtc::compile(&source, &format!("{family}.cl"), target)
                })?;
                let raw = load_module(&image)
                    .with_context(|| format!("loading kernels/{family}.cl for {}", self.info.name))?;
                self.cache.store(family, &key, &image);
                raw
            }
        };
        let module = Arc::new(Module { raw: module, ctx: ctx.clone() });
        modules.insert(family, module.clone());
        Ok(module)
    }
}

fn load_module(image: &[u8]) -> Result<CUmodule> {
    let mut raw: CUmodule = std::ptr::null_mut();
    // SAFETY: a CUBIN or NUL-terminated PTX image, read during the call.
    unsafe { sys::cuModuleLoadData(&mut raw, image.as_ptr().cast()) }
        .result()
        .map_err(|e| cu_error("cuModuleLoadData", e))?;
    Ok(raw)
}

impl Gpu for CudaGpu {
    fn device(&self) -> &DeviceInfo {
        &self.info
    }

    fn create_buffer(&self, bytes: usize) -> Result<Buffer> {
        let ctx = self.ctx()?;
        let mut ptr: CUdeviceptr = 0;
        // SAFETY: an out-parameter; CUDA has no empty allocations.
        unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes.max(4)) }
            .result()
            .map_err(|e| cu_error(&format!("cuMemAlloc of {bytes} bytes"), e))?;
        Ok(Buffer::new(CudaBuffer { ptr, ctx: ctx.clone() }, bytes))
    }

    fn load_kernel(&self, spec: &'static KernelSpec) -> Result<Kernel> {
        let module = self.module(spec.family)?;
        crate::trace::mark(&format!("cuda: kernel {}", spec.name));
        let name = CString::new(spec.c_entry()).map_err(|_| anyhow!("kernel name {:?} has a NUL byte", spec.name))?;
        let mut func: CUfunction = std::ptr::null_mut();
        // SAFETY: the module is loaded in the current context.
        unsafe { sys::cuModuleGetFunction(&mut func, module.raw, name.as_ptr()) }.result().map_err(|e| {
            anyhow!(
                "kernels/{}.cl has no kernel {}: {}",
                spec.family,
                spec.c_entry(),
                cu_error("cuModuleGetFunction", e)
            )
        })?;
        Ok(Kernel::new(CudaKernel { func, _module: module }, spec))
    }

    fn create_stream(&self) -> Result<Box<dyn Stream>> {
        Ok(Box::new(new_stream(self.ctx()?.clone())?))
    }
}
