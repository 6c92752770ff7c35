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

/// Host-to-device bandwidth in bytes per second with `threads` host threads
/// uploading at once, each through its own stream (as the scoring engine's
/// workers do): `runs` uploads of `bytes` each per thread, after one untimed
/// upload, total bytes over the wall time. Each upload includes filling the
/// staging memory from host memory and the device copy, as a pipeline's
/// uploads pay them.
pub fn upload_bandwidth(gpu: &dyn Gpu, bytes: usize, runs: usize, threads: usize) -> Result<f64> {
    let threads = threads.max(1);
    let source: Vec<u8> = (0..bytes).map(|i| (i % 251) as u8).collect();
    let mut lanes = Vec::with_capacity(threads);
    for _ in 0..threads {
        let buffer = gpu.create_buffer(bytes)?;
        let mut stream = gpu.create_stream()?;
        stream.upload(&buffer, 0, &source)?;
        stream.wait()?;
        lanes.push((buffer, stream));
    }
    let start = std::sync::Barrier::new(threads + 1);
    let (source, start) = (&source, &start);
    let elapsed = std::thread::scope(|scope| -> Result<Duration> {
        let workers: Vec<_> = lanes
            .into_iter()
            .map(|(buffer, mut stream)| {
                scope.spawn(move || -> Result<()> {
                    start.wait();
                    for _ in 0..runs.max(1) {
                        stream.upload(&buffer, 0, source)?;
                        stream.wait()?;
                    }
                    Ok(())
                })
            })
            .collect();
        start.wait();
        let t0 = Instant::now();
        for w in workers {
            w.join().map_err(|_| anyhow::anyhow!("a bandwidth worker panicked"))??;
        }
        Ok(t0.elapsed())
    })?;
    let total = (bytes * runs.max(1) * threads) as f64;
    Ok(total / elapsed.as_secs_f64().max(f64::MIN_POSITIVE))
}
