//! Measurements through the [`Gpu`] trait, so they hold for every GPU
//! backend: bytes a pipeline uploads, and host-to-device bandwidth.

use crate::backend::DeviceInfo;
use crate::backend::gpu::{Arg, Buffer, Gpu, Kernel, KernelSpec, Stream};
use anyhow::Result;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Wraps a context and counts the bytes uploaded through its streams.
pub struct MeteredGpu {
    inner: Arc<dyn Gpu>,
    uploaded: Arc<AtomicU64>,
}

impl MeteredGpu {
    pub fn new(inner: Arc<dyn Gpu>) -> Arc<MeteredGpu> {
        Arc::new(MeteredGpu { inner, uploaded: Arc::new(AtomicU64::new(0)) })
    }

    pub fn uploaded(&self) -> u64 {
        self.uploaded.load(Ordering::Relaxed)
    }
}

impl Gpu for MeteredGpu {
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
        Ok(Box::new(MeteredStream { inner: self.inner.create_stream()?, uploaded: self.uploaded.clone() }))
    }
}

struct MeteredStream {
    inner: Box<dyn Stream>,
    uploaded: Arc<AtomicU64>,
}

impl Stream for MeteredStream {
    fn upload_with(
        &mut self,
        dst: &Buffer,
        offset: usize,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]) -> Result<()>,
    ) -> Result<()> {
        self.uploaded.fetch_add(len as u64, Ordering::Relaxed);
        self.inner.upload_with(dst, offset, len, fill)
    }

    fn zero(&mut self, dst: &Buffer) -> Result<()> {
        self.inner.zero(dst)
    }

    fn dispatch(&mut self, kernel: &Kernel, groups: [u32; 3], args: &[Arg<'_>]) -> Result<()> {
        self.inner.dispatch(kernel, groups, args)
    }

    fn download(&mut self, src: &Buffer, offset: usize, len: usize) -> Result<()> {
        self.inner.download(src, offset, len)
    }

    fn submit(&mut self) -> Result<()> {
        self.inner.submit()
    }

    fn wait(&mut self) -> Result<Vec<Vec<u8>>> {
        self.inner.wait()
    }
}

/// Host-to-device bandwidth in bytes per second: the median of `runs`
/// uploads of `bytes` from host memory (staging fill and device copy, as a
/// pipeline's uploads pay them), after one untimed upload.
pub fn upload_bandwidth(gpu: &dyn Gpu, bytes: usize, runs: usize) -> Result<f64> {
    let buffer = gpu.create_buffer(bytes)?;
    let source: Vec<u8> = (0..bytes).map(|i| (i % 251) as u8).collect();
    let mut stream = gpu.create_stream()?;
    stream.upload(&buffer, 0, &source)?;
    stream.wait()?;
    let mut times: Vec<Duration> = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        let t0 = Instant::now();
        stream.upload(&buffer, 0, &source)?;
        stream.wait()?;
        times.push(t0.elapsed());
    }
    let median = super::Stats::of(&times).map_or(0.0, |s| s.median);
    Ok(if median > 0.0 { bytes as f64 / median } else { 0.0 })
}
