//! A CUDA stream driven by the shared [`Recorder`]: each ulpgate stream
//! owns one non-blocking CUDA stream, so the uploads of one in-flight
//! frame overlap the kernels of another. Staging is page-locked host
//! memory (`cuMemHostAlloc`), which the copy engines read asynchronously.

use super::context::{Ctx, CudaBuffer, CudaKernel};
use super::cu_error;
use crate::backend::gpu::{Buffer, Kernel};
use crate::backend::recorder::{Op, OwnedArg, Queue, Recorder};
use crate::backend::staging::{HostChunk, Staging};
use anyhow::{Result, anyhow};
use cudarc::driver::sys::{self, CUdeviceptr, CUstream, CUstream_flags};
use std::ffi::c_void;
use std::sync::Arc;

pub type CudaStream = Recorder<CudaQueue>;

/// Creates a stream on a new non-blocking CUDA stream.
pub fn new_stream(ctx: Arc<Ctx>) -> Result<CudaStream> {
    ctx.bind()?;
    let mut raw: CUstream = std::ptr::null_mut();
    // SAFETY: an out-parameter, in the bound context.
    unsafe { sys::cuStreamCreate(&mut raw, CUstream_flags::CU_STREAM_NON_BLOCKING as u32) }
        .result()
        .map_err(|e| cu_error("cuStreamCreate", e))?;
    Ok(Recorder::new(CudaQueue { ctx, raw }))
}

/// Page-locked host memory, or ordinary memory where the system refuses
/// to lock more (copies then still work, synchronously).
pub enum HostMemory {
    Pinned { ptr: *mut u8, len: usize, ctx: Arc<Ctx> },
    Pageable(Box<[u8]>),
}

// SAFETY: the memory is owned by this chunk; its stream hands out access
// through &mut only.
unsafe impl Send for HostMemory {}

impl HostChunk for HostMemory {
    fn ptr(&self) -> *mut u8 {
        match self {
            HostMemory::Pinned { ptr, .. } => *ptr,
            HostMemory::Pageable(b) => b.as_ptr() as *mut u8,
        }
    }
    fn len(&self) -> usize {
        match self {
            HostMemory::Pinned { len, .. } => *len,
            HostMemory::Pageable(b) => b.len(),
        }
    }
}

impl Drop for HostMemory {
    fn drop(&mut self) {
        if let HostMemory::Pinned { ptr, ctx, .. } = self
            && ctx.bind().is_ok()
        {
            // SAFETY: allocated by cuMemHostAlloc; its stream is idle.
            let _ = unsafe { sys::cuMemFreeHost(ptr.cast()) };
        }
    }
}

pub struct CudaQueue {
    ctx: Arc<Ctx>,
    raw: CUstream,
}

// SAFETY: a CUDA stream may be used from any thread with its context bound.
unsafe impl Send for CudaQueue {}

fn device_ptr(b: &Buffer) -> Result<CUdeviceptr> {
    b.raw::<CudaBuffer>().map(|c| c.ptr).ok_or_else(|| anyhow!("buffer does not belong to the CUDA backend"))
}

impl CudaQueue {
    fn launch(&self, kernel: &Kernel, groups: [u32; 3], args: &[OwnedArg]) -> Result<()> {
        let func = kernel.raw::<CudaKernel>().ok_or_else(|| anyhow!("kernel {} is not CUDA's", kernel.spec.name))?.func;
        // One 8-byte slot per parameter: a device pointer, or a 4-byte
        // scalar in its first half. cuLaunchKernel reads each parameter's
        // size from the kernel and copies the values during the call.
        let mut values: Vec<[u8; 8]> = Vec::with_capacity(args.len());
        for arg in args {
            values.push(match arg {
                OwnedArg::Buffer(b) => device_ptr(b)?.to_ne_bytes(),
                OwnedArg::Scalar(s) => [s[0], s[1], s[2], s[3], 0, 0, 0, 0],
            });
        }
        let mut params: Vec<*mut c_void> = values.iter_mut().map(|v| v.as_mut_ptr().cast()).collect();
        let [bx, by, bz] = kernel.spec.workgroup;
        // SAFETY: the parameter list matches the kernel (check_args and the
        // kernel-layout unit test); buffers stay alive in the Recorder.
        unsafe {
            sys::cuLaunchKernel(
                func,
                groups[0],
                groups[1],
                groups[2],
                bx,
                by,
                bz,
                0,
                self.raw,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
        .result()
        .map_err(|e| cu_error(&format!("cuLaunchKernel {}", kernel.spec.name), e))
    }
}

impl Queue for CudaQueue {
    type Chunk = HostMemory;
    const API: &'static str = "CUDA";

    fn owns_buffer(buffer: &Buffer) -> bool {
        buffer.raw::<CudaBuffer>().is_some()
    }

    fn owns_kernel(kernel: &Kernel) -> bool {
        kernel.raw::<CudaKernel>().is_some()
    }

    fn new_chunk(&mut self, size: usize) -> Result<HostMemory> {
        self.ctx.bind()?;
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: an out-parameter, in the bound context.
        match unsafe { sys::cuMemHostAlloc(&mut ptr, size, 0) }.result() {
            Ok(()) if !ptr.is_null() => Ok(HostMemory::Pinned { ptr: ptr.cast(), len: size, ctx: self.ctx.clone() }),
            _ => Ok(HostMemory::Pageable(vec![0u8; size].into_boxed_slice())),
        }
    }

    fn enqueue(&mut self, op: &Op, staging: &mut Staging<HostMemory>) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY (all copies): the Recorder keeps the buffers and the
        // staging regions untouched until finish() has returned; offsets
        // were checked against the buffers' sizes when recorded.
        match op {
            Op::Upload { dst, offset, region } => unsafe {
                sys::cuMemcpyHtoDAsync_v2(
                    device_ptr(dst)? + *offset as u64,
                    staging.ptr(*region).cast(),
                    region.len,
                    self.raw,
                )
                .result()
                .map_err(|e| cu_error("cuMemcpyHtoDAsync", e))
            },
            Op::Zero { dst } => unsafe {
                sys::cuMemsetD8Async(device_ptr(dst)?, 0, dst.bytes(), self.raw)
                    .result()
                    .map_err(|e| cu_error("cuMemsetD8Async", e))
            },
            Op::Dispatch { kernel, groups, args } => self.launch(kernel, *groups, args),
            Op::Download { src, offset, region } => unsafe {
                sys::cuMemcpyDtoHAsync_v2(
                    staging.ptr(*region).cast(),
                    device_ptr(src)? + *offset as u64,
                    region.len,
                    self.raw,
                )
                .result()
                .map_err(|e| cu_error("cuMemcpyDtoHAsync", e))
            },
        }
    }

    fn flush(&mut self) -> Result<()> {
        // Work on a CUDA stream starts as it is enqueued.
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: a live stream of the bound context.
        unsafe { sys::cuStreamSynchronize(self.raw) }.result().map_err(|e| cu_error("cuStreamSynchronize", e))
    }
}

impl Drop for CudaQueue {
    fn drop(&mut self) {
        // The Recorder has already waited for the stream to go idle.
        if self.ctx.bind().is_ok() {
            // SAFETY: created in new_stream, destroyed once.
            let _ = unsafe { sys::cuStreamDestroy_v2(self.raw) };
        }
    }
}
