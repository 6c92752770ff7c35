//! An OpenCL stream: one in-order command queue driven by the shared
//! [`Recorder`]. Staging is pinned host memory: buffers created with
//! `CL_MEM_ALLOC_HOST_PTR` and mapped once, the path NVIDIA's OpenCL
//! copies from at full speed.

use super::context::{ClBuffer, ClKernel};
use crate::backend::gpu::{Buffer, Kernel};
use crate::backend::recorder::{Op, OwnedArg, Queue, Recorder};
use crate::backend::staging::{HostChunk, Staging};
use anyhow::{Result, anyhow};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::Device;
use opencl3::kernel::Kernel as KernelObject;
use opencl3::memory::{
    Buffer as MemBuffer, CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_WRITE, ClMem,
};
use opencl3::types::{CL_BLOCKING, CL_NON_BLOCKING, cl_mem};
use std::collections::HashMap;
use std::mem::ManuallyDrop;
use std::sync::Arc;

pub type ClStream = Recorder<ClQueue>;

/// A new in-order command queue on `device`.
pub fn new_queue(context: &Context, device: &Device) -> Result<CommandQueue> {
    // SAFETY: the device is the one the context was made for.
    unsafe { CommandQueue::create_with_properties(context, device.id(), 0, 0) }
        .or_else(|_| unsafe { CommandQueue::create(context, device.id(), 0) })
        .map_err(|e| anyhow!("clCreateCommandQueue: {e}"))
}

/// Creates a stream on `shared` (every stream of a CPU device's context
/// shares one queue: see `ClGpu::new`), or else on a new in-order queue.
pub fn new_stream(context: Arc<Context>, device: &Device, shared: Option<Arc<CommandQueue>>) -> Result<ClStream> {
    let queue = match shared {
        Some(queue) => queue,
        None => Arc::new(new_queue(&context, device)?),
    };
    Ok(Recorder::new(ClQueue { context, queue, kernels: HashMap::new() }))
}

/// A mapped `CL_MEM_ALLOC_HOST_PTR` buffer; unmapped by [`ClQueue::release`].
pub struct MappedChunk {
    mem: MemBuffer<u8>,
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is host memory owned by this chunk; its stream
// hands out access through &mut only.
unsafe impl Send for MappedChunk {}

impl HostChunk for MappedChunk {
    fn ptr(&self) -> *mut u8 {
        self.ptr
    }
    fn len(&self) -> usize {
        self.len
    }
}

pub struct ClQueue {
    context: Arc<Context>,
    /// In order; on a CPU device shared by every stream of the context
    /// (`finish` then waits for the others' work too).
    queue: Arc<CommandQueue>,
    /// This queue's own kernel objects: arguments are set per object, so
    /// streams never share one.
    kernels: HashMap<&'static str, KernelObject>,
}

/// A non-owning view of a buffer's `cl_mem` for opencl3 calls that take
/// `&mut Buffer`; the owner stays alive in the operation that uses it.
fn alias(mem: cl_mem) -> ManuallyDrop<MemBuffer<u8>> {
    ManuallyDrop::new(MemBuffer::new(mem))
}

fn mem(b: &Buffer) -> Result<cl_mem> {
    b.raw::<ClBuffer>().map(|c| c.0.get()).ok_or_else(|| anyhow!("buffer does not belong to the OpenCL backend"))
}

impl ClQueue {
    fn dispatch(&mut self, kernel: &Kernel, groups: [u32; 3], args: &[OwnedArg]) -> Result<()> {
        let spec = kernel.spec;
        if !self.kernels.contains_key(spec.name) {
            let program =
                &kernel.raw::<ClKernel>().ok_or_else(|| anyhow!("kernel {} is not OpenCL's", spec.name))?.program;
            let object = KernelObject::create(program, spec.c_entry())
                .map_err(|e| anyhow!("clCreateKernel {}: {e}", spec.c_entry()))?;
            self.kernels.insert(spec.name, object);
        }
        let object = &self.kernels[spec.name];
        for (i, arg) in args.iter().enumerate() {
            // SAFETY: sizes match the kernel's parameters (check_args, and
            // the kernel-layout unit test): a cl_mem per buffer, 4 bytes else.
            let set = match arg {
                OwnedArg::Buffer(b) => unsafe { object.set_arg(i as u32, &mem(b)?) },
                OwnedArg::Scalar(bytes) => unsafe { object.set_arg(i as u32, bytes) },
            };
            set.map_err(|e| anyhow!("clSetKernelArg {} #{i}: {e}", spec.name))?;
        }
        let local = spec.workgroup.map(|v| v as usize);
        let global = [0, 1, 2].map(|d| groups[d] as usize * local[d]);
        // SAFETY: three work dimensions, matching the arrays.
        unsafe {
            self.queue.enqueue_nd_range_kernel(object.get(), 3, std::ptr::null(), global.as_ptr(), local.as_ptr(), &[])
        }
        .map_err(|e| anyhow!("clEnqueueNDRangeKernel {}: {e}", spec.name))?;
        Ok(())
    }
}

impl Queue for ClQueue {
    type Chunk = MappedChunk;
    const API: &'static str = "OpenCL";

    fn owns_buffer(buffer: &Buffer) -> bool {
        buffer.raw::<ClBuffer>().is_some()
    }

    fn owns_kernel(kernel: &Kernel) -> bool {
        kernel.raw::<ClKernel>().is_some()
    }

    fn new_chunk(&mut self, size: usize) -> Result<MappedChunk> {
        // SAFETY: no host pointer is passed.
        let mem = unsafe {
            MemBuffer::<u8>::create(
                &self.context,
                CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                size,
                std::ptr::null_mut(),
            )
        }
        .map_err(|e| anyhow!("clCreateBuffer of {size} bytes of staging: {e}"))?;
        let mut ptr: cl_mem = std::ptr::null_mut();
        // SAFETY: a blocking map of the whole, freshly made buffer.
        unsafe { self.queue.enqueue_map_buffer(&mem, CL_BLOCKING, CL_MAP_READ | CL_MAP_WRITE, 0, size, &mut ptr, &[]) }
            .map_err(|e| anyhow!("clEnqueueMapBuffer of staging: {e}"))?;
        anyhow::ensure!(!ptr.is_null(), "clEnqueueMapBuffer returned no address");
        Ok(MappedChunk { mem, ptr: ptr.cast(), len: size })
    }

    fn enqueue(&mut self, op: &Op, staging: &mut Staging<MappedChunk>) -> Result<()> {
        // SAFETY (all enqueues): the Recorder keeps the buffers and the
        // staging regions untouched until finish() has returned.
        match op {
            Op::Upload { dst, offset, region } => {
                let data = staging.slice(*region);
                unsafe { self.queue.enqueue_write_buffer(&mut alias(mem(dst)?), CL_NON_BLOCKING, *offset, data, &[]) }
                    .map_err(|e| anyhow!("clEnqueueWriteBuffer: {e}"))?;
            }
            Op::Zero { dst } if dst.bytes() > 0 => {
                unsafe { self.queue.enqueue_fill_buffer(&mut alias(mem(dst)?), &[0u8], 0, dst.bytes(), &[]) }
                    .map_err(|e| anyhow!("clEnqueueFillBuffer: {e}"))?;
            }
            Op::Zero { .. } => {}
            Op::Dispatch { kernel, groups, args } => self.dispatch(kernel, *groups, args)?,
            Op::Download { src, offset, region } => {
                let data = staging.slice_mut(*region);
                unsafe { self.queue.enqueue_read_buffer(&alias(mem(src)?), CL_NON_BLOCKING, *offset, data, &[]) }
                    .map_err(|e| anyhow!("clEnqueueReadBuffer: {e}"))?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.queue.flush().map_err(|e| anyhow!("clFlush: {e}"))
    }

    fn finish(&mut self) -> Result<()> {
        self.queue.finish().map_err(|e| anyhow!("clFinish: {e}"))
    }

    fn release(&mut self, chunks: Vec<MappedChunk>) {
        for chunk in &chunks {
            // SAFETY: the address this chunk was mapped at; the queue is idle.
            let _ = unsafe { self.queue.enqueue_unmap_mem_object(chunk.mem.get(), chunk.ptr.cast(), &[]) };
        }
        let _ = self.queue.finish();
        drop(chunks);
    }
}
