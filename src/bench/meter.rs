//! Host-to-device bandwidth through the [`Gpu`] trait, so it holds for
//! every GPU backend (the bytes a pipeline uploads are counted by
//! [`crate::backend::gpu::CountingGpu`]).

use crate::backend::gpu::Gpu;
use anyhow::Result;
use std::time::{Duration, Instant};

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
