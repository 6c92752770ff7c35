//! The common GPU abstraction (DESIGN: one host pipeline per feature, three
//! kernel dialects). A feature's GPU orchestration — which kernels, which
//! buffers, which reductions — is written once against [`Gpu`] and
//! [`Stream`]; vulkan, cuda and opencl implement them.
//!
//! Argument convention shared by all dialects: a kernel takes its buffers
//! first, then its scalars, in the order of the [`Arg`] list. Vulkan binds
//! the buffers to `set = 0, binding = 0..` and packs the scalars, 4 bytes
//! each, into the push-constant block; CUDA and OpenCL pass them as kernel
//! parameters in the same order.

use super::DeviceInfo;
use anyhow::{Result, bail};
use std::any::Any;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A compute kernel: its entry point and launch shape. The Vulkan dialect
/// lives in `shaders/<name>.comp` (or `.wgsl`, or is a `#variant` of
/// another); the CUDA/OpenCL dialect is the function
/// [`KernelSpec::c_entry`] in `kernels/<family>.cl`.
#[derive(Debug, PartialEq, Eq)]
pub struct KernelSpec {
    pub name: &'static str,
    pub family: &'static str,
    /// Work-group (CUDA: block) size; every dialect declares the same.
    pub workgroup: [u32; 3],
    pub buffers: usize,
    pub scalars: usize,
}

impl KernelSpec {
    /// The entry point the CUDA/OpenCL dialects (`kernels/<family>.cl`) run
    /// for this kernel: its own, or for a Vulkan `#variant` (a module of
    /// the Vulkan dialect built without a run-time choice that lavapipe
    /// would pay for: shaders/README.md) the kernel it was built from,
    /// whose contract it shares. A GPU branches on a uniform value for
    /// free, so the C dialects need no variants.
    pub fn c_entry(&self) -> &'static str {
        crate::backend::vulkan::shaders::VARIANTS
            .iter()
            .find(|(variant, _)| *variant == self.name)
            .map_or(self.name, |&(_, base)| base)
    }
}

/// A device buffer. Backends store their own handle inside; the buffer is
/// freed when the last clone is dropped.
#[derive(Clone)]
pub struct Buffer {
    raw: Arc<dyn Any + Send + Sync>,
    bytes: usize,
}

impl Buffer {
    pub fn new<T: Any + Send + Sync>(raw: T, bytes: usize) -> Self {
        Buffer { raw: Arc::new(raw), bytes }
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The backend's own handle; `None` when the buffer belongs to another backend.
    pub fn raw<T: Any>(&self) -> Option<&T> {
        self.raw.downcast_ref()
    }
}

/// A loaded (compiled, pipeline-created) kernel.
#[derive(Clone)]
pub struct Kernel {
    raw: Arc<dyn Any + Send + Sync>,
    pub spec: &'static KernelSpec,
}

impl Kernel {
    pub fn new<T: Any + Send + Sync>(raw: T, spec: &'static KernelSpec) -> Self {
        Kernel { raw: Arc::new(raw), spec }
    }

    pub fn raw<T: Any>(&self) -> Option<&T> {
        self.raw.downcast_ref()
    }
}

/// One kernel argument.
#[derive(Clone, Copy)]
pub enum Arg<'a> {
    Buffer(&'a Buffer),
    U32(u32),
    I32(i32),
    F32(f32),
}

impl Arg<'_> {
    /// The 4 bytes a scalar argument passes; `None` for buffers.
    pub fn scalar_bytes(&self) -> Option<[u8; 4]> {
        match self {
            Arg::Buffer(_) => None,
            Arg::U32(v) => Some(v.to_ne_bytes()),
            Arg::I32(v) => Some(v.to_ne_bytes()),
            Arg::F32(v) => Some(v.to_ne_bytes()),
        }
    }
}

/// Checks an argument list against the kernel's declared layout: buffers
/// first, then scalars, with the declared counts. Every backend calls it so
/// a host pipeline that drifts from its kernel fails loudly, never silently.
pub fn check_args(spec: &KernelSpec, args: &[Arg<'_>]) -> Result<()> {
    let buffers = args.iter().take_while(|a| matches!(a, Arg::Buffer(_))).count();
    let scalars = args.len() - buffers;
    if args[buffers..].iter().any(|a| matches!(a, Arg::Buffer(_))) {
        bail!("kernel {}: buffers must come before scalars", spec.name);
    }
    if buffers != spec.buffers || scalars != spec.scalars {
        bail!(
            "kernel {} takes {} buffers and {} scalars, got {buffers} and {scalars}",
            spec.name,
            spec.buffers,
            spec.scalars
        );
    }
    Ok(())
}

/// A GPU context bound to one physical device.
pub trait Gpu: Send + Sync {
    /// The device every buffer, kernel and stream of this context lives on.
    fn device(&self) -> &DeviceInfo;
    fn create_buffer(&self, bytes: usize) -> Result<Buffer>;
    /// Compiles or fetches a kernel; backends cache by name.
    fn load_kernel(&self, spec: &'static KernelSpec) -> Result<Kernel>;
    /// An independent in-order queue of work (CUDA stream, OpenCL queue,
    /// Vulkan command buffer + fence). Several streams overlap.
    fn create_stream(&self) -> Result<Box<dyn Stream>>;
}

/// Ordered work on one device. Each operation sees the results of every
/// earlier operation of the same stream (backends insert the barriers).
/// Nothing runs before [`Stream::submit`] or [`Stream::wait`].
pub trait Stream: Send {
    /// Copies `len` bytes to `dst` at `offset`. `fill` writes them into
    /// host staging memory (pinned where the API has it), so a frame can be
    /// read straight into it; the copy to the device happens at submit.
    fn upload_with(
        &mut self,
        dst: &Buffer,
        offset: usize,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]) -> Result<()>,
    ) -> Result<()>;

    fn upload(&mut self, dst: &Buffer, offset: usize, data: &[u8]) -> Result<()> {
        self.upload_with(dst, offset, data.len(), &mut |staging| {
            staging.copy_from_slice(data);
            Ok(())
        })
    }

    /// Sets the whole buffer to zero bytes.
    fn zero(&mut self, dst: &Buffer) -> Result<()>;

    fn dispatch(&mut self, kernel: &Kernel, groups: [u32; 3], args: &[Arg<'_>]) -> Result<()>;

    /// Copies `len` bytes from `src` back to the host; the bytes come back
    /// from [`Stream::wait`], in the order the downloads were recorded.
    fn download(&mut self, src: &Buffer, offset: usize, len: usize) -> Result<()>;

    /// Starts the recorded work without waiting for it.
    fn submit(&mut self) -> Result<()>;

    /// Submits what is pending, blocks until everything has finished, and
    /// returns the downloads. The stream is then empty and reusable.
    fn wait(&mut self) -> Result<Vec<Vec<u8>>>;
}

/// Wraps a context and counts what goes through it: the kernels that
/// completed — the runner's proof that a GPU side ran on its device (a side
/// with no dispatch is an ERROR, never OK) — and the bytes uploaded (what a
/// benchmark divides bandwidth by).
pub struct CountingGpu {
    inner: Arc<dyn Gpu>,
    dispatches: Arc<AtomicU64>,
    uploaded: Arc<AtomicU64>,
}

impl CountingGpu {
    pub fn new(inner: Arc<dyn Gpu>) -> Arc<Self> {
        Arc::new(CountingGpu { inner, dispatches: Arc::new(AtomicU64::new(0)), uploaded: Arc::new(AtomicU64::new(0)) })
    }

    /// Kernels that completed (their stream was waited for).
    pub fn dispatches(&self) -> u64 {
        self.dispatches.load(Ordering::SeqCst)
    }

    /// Bytes recorded for upload.
    pub fn uploaded(&self) -> u64 {
        self.uploaded.load(Ordering::SeqCst)
    }
}

impl Gpu for CountingGpu {
    fn device(&self) -> &DeviceInfo {
        self.inner.device()
    }

    fn create_buffer(&self, bytes: usize) -> Result<Buffer> {
        self.inner.create_buffer(bytes)
    }

    fn load_kernel(&self, spec: &'static KernelSpec) -> Result<Kernel> {
        self.inner.load_kernel(spec)
    }

    fn create_stream(&self) -> Result<Box<dyn Stream>> {
        Ok(Box::new(CountingStream {
            inner: self.inner.create_stream()?,
            recorded: 0,
            done: self.dispatches.clone(),
            uploaded: self.uploaded.clone(),
        }))
    }
}

struct CountingStream {
    inner: Box<dyn Stream>,
    recorded: u64,
    done: Arc<AtomicU64>,
    uploaded: Arc<AtomicU64>,
}

impl Stream for CountingStream {
    fn upload_with(
        &mut self,
        dst: &Buffer,
        offset: usize,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]) -> Result<()>,
    ) -> Result<()> {
        self.uploaded.fetch_add(len as u64, Ordering::SeqCst);
        self.inner.upload_with(dst, offset, len, fill)
    }

    fn upload(&mut self, dst: &Buffer, offset: usize, data: &[u8]) -> Result<()> {
        // Forwarded as such: a backend may copy large uploads in parallel.
        self.uploaded.fetch_add(data.len() as u64, Ordering::SeqCst);
        self.inner.upload(dst, offset, data)
    }

    fn zero(&mut self, dst: &Buffer) -> Result<()> {
        self.inner.zero(dst)
    }

    fn dispatch(&mut self, kernel: &Kernel, groups: [u32; 3], args: &[Arg<'_>]) -> Result<()> {
        self.inner.dispatch(kernel, groups, args)?;
        self.recorded += 1;
        Ok(())
    }

    fn download(&mut self, src: &Buffer, offset: usize, len: usize) -> Result<()> {
        self.inner.download(src, offset, len)
    }

    fn submit(&mut self) -> Result<()> {
        self.inner.submit()
    }

    fn wait(&mut self) -> Result<Vec<Vec<u8>>> {
        let out = self.inner.wait()?;
        // Only work that completed counts as having run.
        self.done.fetch_add(std::mem::take(&mut self.recorded), Ordering::SeqCst);
        Ok(out)
    }
}

/// How many work groups of `size` cover `n` items.
pub fn groups_for(n: usize, size: u32) -> u32 {
    n.div_ceil(size as usize) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    static SPEC: KernelSpec = KernelSpec { name: "k", family: "f", workgroup: [64, 1, 1], buffers: 2, scalars: 1 };

    #[test]
    fn argument_layout_is_checked() {
        let b = Buffer::new(0u8, 4);
        assert!(check_args(&SPEC, &[Arg::Buffer(&b), Arg::Buffer(&b), Arg::U32(1)]).is_ok());
        let err = check_args(&SPEC, &[Arg::Buffer(&b), Arg::U32(1), Arg::Buffer(&b)]).unwrap_err();
        assert!(err.to_string().contains("before scalars"));
        let err = check_args(&SPEC, &[Arg::Buffer(&b), Arg::U32(1)]).unwrap_err();
        assert!(err.to_string().contains("takes 2 buffers and 1 scalars, got 1 and 1"));
    }

    #[test]
    fn buffers_downcast_to_their_backend_only() {
        let b = Buffer::new(7u32, 4);
        assert_eq!(b.raw::<u32>(), Some(&7));
        assert!(b.raw::<u64>().is_none());
    }

    #[test]
    fn group_counts_round_up() {
        assert_eq!(groups_for(0, 64), 0);
        assert_eq!(groups_for(65, 64), 2);
    }
}
