//! An OpenCL stream: one in-order command queue. Operations are recorded,
//! then enqueued at submit; uploads go through pinned staging (buffers
//! created with `CL_MEM_ALLOC_HOST_PTR` and mapped once, the path NVIDIA's
//! OpenCL copies from at full speed).

use super::context::{ClBuffer, ClKernel};
use crate::backend::gpu::{Arg, Buffer, Kernel, Stream, check_args};
use crate::backend::staging::{HostChunk, Region, Staging};
use anyhow::{Result, anyhow, bail, ensure};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::Device;
use opencl3::kernel::Kernel as ClKernelObject;
use opencl3::memory::{
    Buffer as MemBuffer, CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_WRITE, ClMem,
};
use opencl3::types::{CL_BLOCKING, CL_NON_BLOCKING, cl_mem};
use std::collections::HashMap;
use std::mem::ManuallyDrop;
use std::sync::Arc;

/// Host memory the device reads and writes directly: a mapped
/// `CL_MEM_ALLOC_HOST_PTR` buffer. Unmapped by the stream before release.
struct MappedChunk {
    mem: MemBuffer<u8>,
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain host memory owned by this chunk; the stream
// that owns the chunk hands out access through &mut self only.
unsafe impl Send for MappedChunk {}

impl HostChunk for MappedChunk {
    fn ptr(&self) -> *mut u8 {
        self.ptr
    }
    fn len(&self) -> usize {
        self.len
    }
}

enum OwnedArg {
    Buffer(Buffer),
    Scalar([u8; 4]),
}

enum Op {
    Upload { dst: Buffer, offset: usize, region: Region },
    Zero { dst: Buffer },
    Dispatch { kernel: Kernel, groups: [u32; 3], args: Vec<OwnedArg> },
    Download { src: Buffer, offset: usize, region: Region },
}

pub struct ClStream {
    context: Arc<Context>,
    queue: CommandQueue,
    staging: Staging<MappedChunk>,
    recorded: Vec<Op>,
    /// What enqueued work uses, held until it has finished.
    in_flight: Vec<Op>,
    downloads: Vec<Region>,
    /// This stream's own kernel objects (arguments are per object).
    kernels: HashMap<&'static str, ClKernelObject>,
}

/// A non-owning view of a buffer's `cl_mem`, for opencl3 calls that take
/// `&mut Buffer` (the owner stays alive in the op that uses it).
fn alias(mem: cl_mem) -> ManuallyDrop<MemBuffer<u8>> {
    ManuallyDrop::new(MemBuffer::new(mem))
}

fn cl_buffer(b: &Buffer) -> Result<cl_mem> {
    b.raw::<ClBuffer>().map(|c| c.0.get()).ok_or_else(|| anyhow!("buffer does not belong to the OpenCL backend"))
}

fn check_range(b: &Buffer, offset: usize, len: usize, what: &str) -> Result<()> {
    ensure!(
        offset.checked_add(len).is_some_and(|end| end <= b.bytes()),
        "{what} of {len} bytes at offset {offset} overruns a buffer of {} bytes",
        b.bytes()
    );
    Ok(())
}

impl ClStream {
    pub fn new(context: Arc<Context>, device: &Device) -> Result<Self> {
        // SAFETY: the device is the one the context was made for.
        let queue = unsafe { CommandQueue::create_with_properties(&context, device.id(), 0, 0) }
            .or_else(|_| unsafe { CommandQueue::create(&context, device.id(), 0) })
            .map_err(|e| anyhow!("clCreateCommandQueue: {e}"))?;
        Ok(ClStream {
            context,
            queue,
            staging: Staging::default(),
            recorded: Vec::new(),
            in_flight: Vec::new(),
            downloads: Vec::new(),
            kernels: HashMap::new(),
        })
    }

    fn new_chunk(context: &Context, queue: &CommandQueue, size: usize) -> Result<MappedChunk> {
        // SAFETY: no host pointer is passed.
        let mem = unsafe {
            MemBuffer::<u8>::create(context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, size, std::ptr::null_mut())
        }
        .map_err(|e| anyhow!("clCreateBuffer of {size} bytes of staging: {e}"))?;
        let mut ptr: cl_mem = std::ptr::null_mut();
        // SAFETY: a blocking map of the whole, freshly made buffer.
        unsafe { queue.enqueue_map_buffer(&mem, CL_BLOCKING, CL_MAP_READ | CL_MAP_WRITE, 0, size, &mut ptr, &[]) }
            .map_err(|e| anyhow!("clEnqueueMapBuffer of staging: {e}"))?;
        ensure!(!ptr.is_null(), "clEnqueueMapBuffer returned no address");
        Ok(MappedChunk { mem, ptr: ptr.cast(), len: size })
    }

    fn stage(&mut self, len: usize) -> Result<Region> {
        let (context, queue) = (&self.context, &self.queue);
        self.staging.alloc(len, |size| Self::new_chunk(context, queue, size))
    }

    fn enqueue(&mut self, op: &Op) -> Result<()> {
        match op {
            Op::Upload { dst, offset, region } => {
                let data = self.staging.slice(*region);
                // SAFETY: the staging region stays untouched, and `dst` alive
                // in `in_flight`, until wait() has seen the queue finish.
                unsafe {
                    self.queue.enqueue_write_buffer(&mut alias(cl_buffer(dst)?), CL_NON_BLOCKING, *offset, data, &[])
                }
                .map_err(|e| anyhow!("clEnqueueWriteBuffer: {e}"))?;
            }
            Op::Zero { dst } => {
                if dst.bytes() > 0 {
                    // SAFETY: as above; the pattern is copied at enqueue.
                    unsafe { self.queue.enqueue_fill_buffer(&mut alias(cl_buffer(dst)?), &[0u8], 0, dst.bytes(), &[]) }
                        .map_err(|e| anyhow!("clEnqueueFillBuffer: {e}"))?;
                }
            }
            Op::Dispatch { kernel, groups, args } => self.enqueue_dispatch(kernel, *groups, args)?,
            Op::Download { src, offset, region } => {
                let data = self.staging.slice_mut(*region);
                // SAFETY: as for uploads; the region is read after finish.
                unsafe { self.queue.enqueue_read_buffer(&alias(cl_buffer(src)?), CL_NON_BLOCKING, *offset, data, &[]) }
                    .map_err(|e| anyhow!("clEnqueueReadBuffer: {e}"))?;
            }
        }
        Ok(())
    }

    fn enqueue_dispatch(&mut self, kernel: &Kernel, groups: [u32; 3], args: &[OwnedArg]) -> Result<()> {
        let spec = kernel.spec;
        if groups.contains(&0) {
            return Ok(());
        }
        let object = match self.kernels.get(spec.name) {
            Some(k) => k,
            None => {
                let program =
                    &kernel.raw::<ClKernel>().ok_or_else(|| anyhow!("kernel {} is not OpenCL's", spec.name))?.program;
                let k = ClKernelObject::create(program, spec.name)
                    .map_err(|e| anyhow!("clCreateKernel {}: {e}", spec.name))?;
                self.kernels.entry(spec.name).or_insert(k)
            }
        };
        for (i, arg) in args.iter().enumerate() {
            // SAFETY: sizes match the kernel's parameters (check_args, and
            // the kernel-layout unit test): cl_mem for buffers, 4 bytes else.
            let set = match arg {
                OwnedArg::Buffer(b) => unsafe { object.set_arg(i as u32, &cl_buffer(b)?) },
                OwnedArg::Scalar(bytes) => unsafe { object.set_arg(i as u32, bytes) },
            };
            set.map_err(|e| anyhow!("clSetKernelArg {} #{i}: {e}", spec.name))?;
        }
        let local = spec.workgroup.map(|v| v as usize);
        let global: Vec<usize> = groups.iter().zip(local).map(|(&g, l)| g as usize * l).collect();
        // SAFETY: three work dimensions, matching the arrays' lengths.
        unsafe {
            self.queue.enqueue_nd_range_kernel(object.get(), 3, std::ptr::null(), global.as_ptr(), local.as_ptr(), &[])
        }
        .map_err(|e| anyhow!("clEnqueueNDRangeKernel {}: {e}", spec.name))?;
        Ok(())
    }

    fn drain(&mut self) -> Result<()> {
        let ops = std::mem::take(&mut self.recorded);
        for op in ops {
            let result = self.enqueue(&op);
            self.in_flight.push(op);
            result?;
        }
        Ok(())
    }
}

impl Stream for ClStream {
    fn upload_with(
        &mut self,
        dst: &Buffer,
        offset: usize,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]) -> Result<()>,
    ) -> Result<()> {
        cl_buffer(dst)?;
        check_range(dst, offset, len, "upload")?;
        let region = self.stage(len)?;
        fill(self.staging.slice_mut(region))?;
        self.recorded.push(Op::Upload { dst: dst.clone(), offset, region });
        Ok(())
    }

    fn zero(&mut self, dst: &Buffer) -> Result<()> {
        cl_buffer(dst)?;
        self.recorded.push(Op::Zero { dst: dst.clone() });
        Ok(())
    }

    fn dispatch(&mut self, kernel: &Kernel, groups: [u32; 3], args: &[Arg<'_>]) -> Result<()> {
        check_args(kernel.spec, args)?;
        if kernel.raw::<ClKernel>().is_none() {
            bail!("kernel {} does not belong to the OpenCL backend", kernel.spec.name);
        }
        let args = args
            .iter()
            .map(|a| match a {
                Arg::Buffer(b) => cl_buffer(b).map(|_| OwnedArg::Buffer((*b).clone())),
                other => Ok(OwnedArg::Scalar(other.scalar_bytes().expect("not a buffer"))),
            })
            .collect::<Result<Vec<_>>>()?;
        self.recorded.push(Op::Dispatch { kernel: kernel.clone(), groups, args });
        Ok(())
    }

    fn download(&mut self, src: &Buffer, offset: usize, len: usize) -> Result<()> {
        cl_buffer(src)?;
        check_range(src, offset, len, "download")?;
        let region = self.stage(len)?;
        self.downloads.push(region);
        self.recorded.push(Op::Download { src: src.clone(), offset, region });
        Ok(())
    }

    fn submit(&mut self) -> Result<()> {
        self.drain()?;
        self.queue.flush().map_err(|e| anyhow!("clFlush: {e}"))
    }

    fn wait(&mut self) -> Result<Vec<Vec<u8>>> {
        let drained = self.drain();
        let finished = self.queue.finish().map_err(|e| anyhow!("clFinish: {e}"));
        let downloads = std::mem::take(&mut self.downloads);
        let out = drained.and(finished).map(|()| downloads.iter().map(|r| self.staging.slice(*r).to_vec()).collect());
        self.in_flight.clear();
        self.staging.reset();
        out
    }
}

impl Drop for ClStream {
    fn drop(&mut self) {
        // Nothing may still use the staging or the buffers when they go.
        let _ = self.queue.finish();
        for chunk in self.staging.take_chunks() {
            // SAFETY: the pointer is the one this chunk was mapped at.
            let _ = unsafe { self.queue.enqueue_unmap_mem_object(chunk.mem.get(), chunk.ptr.cast(), &[]) };
        }
        let _ = self.queue.finish();
    }
}
