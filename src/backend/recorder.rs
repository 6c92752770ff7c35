//! The [`Stream`] semantics shared by the CUDA and OpenCL backends: work
//! is recorded (uploads filled into pinned staging at once), enqueued in
//! order on the API's own queue at submit, and waited for; downloads come
//! back in recording order. Buffers and kernels that queued work uses are
//! held until it has finished. Each API supplies only a [`Queue`].

use super::gpu::{Arg, Buffer, Kernel, Stream, check_args};
use super::staging::{HostChunk, Region, Staging};
use super::watchdog::Wait;
use anyhow::{Result, bail, ensure};
use rayon::prelude::*;

/// Uploads at least this large are copied into staging by several threads
/// ([`copy_pool`]): one core's memcpy (10-20 GB/s) would otherwise cap
/// 1080p frame pairs near the PCIe rate.
const PARALLEL_COPY: usize = 1 << 20;
const COPY_PIECE: usize = 256 << 10;

/// The threads that copy large uploads: a pool of their own, never rayon's
/// global one. A GPU side's host workers are threads that a gate cell,
/// running on a worker of the global pool, blocks joining; a copy they
/// queued on the global pool waited for a worker that waited for them, and
/// on a 2-core machine (two workers) the run hung (ciede's 1 MB table, a
/// frame of 1 MB or more). These threads only copy, so a copy always runs.
/// `None` when the pool cannot be built: the copy is then one thread's.
fn copy_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(8);
        rayon::ThreadPoolBuilder::new().num_threads(threads).thread_name(|i| format!("ulpgate-copy-{i}")).build().ok()
    })
    .as_ref()
}

/// A kernel argument as recorded (buffers kept alive).
pub enum OwnedArg {
    Buffer(Buffer),
    Scalar([u8; 4]),
}

/// One recorded operation.
pub enum Op {
    Upload {
        dst: Buffer,
        offset: usize,
        region: Region,
    },
    Zero {
        dst: Buffer,
    },
    /// `groups` has no zero entry (empty dispatches are not recorded).
    Dispatch {
        kernel: Kernel,
        groups: [u32; 3],
        args: Vec<OwnedArg>,
    },
    Download {
        src: Buffer,
        offset: usize,
        region: Region,
    },
}

/// One API's in-order queue.
pub trait Queue: Send {
    type Chunk: HostChunk;
    /// The API's name for messages ("CUDA", "OpenCL").
    const API: &'static str;

    fn owns_buffer(buffer: &Buffer) -> bool;
    fn owns_kernel(kernel: &Kernel) -> bool;
    /// Pinned host memory of at least `size` bytes.
    fn new_chunk(&mut self, size: usize) -> Result<Self::Chunk>;
    /// Enqueues one operation without waiting; staging regions it names
    /// stay untouched until [`Queue::finish`] returns.
    fn enqueue(&mut self, op: &Op, staging: &mut Staging<Self::Chunk>) -> Result<()>;
    /// Starts enqueued work.
    fn flush(&mut self) -> Result<()>;
    /// Blocks until all enqueued work has finished.
    fn finish(&mut self) -> Result<()>;
    /// Gives back staging chunks once the queue is idle (OpenCL unmaps).
    fn release(&mut self, chunks: Vec<Self::Chunk>) {
        drop(chunks);
    }
}

pub struct Recorder<Q: Queue> {
    queue: Q,
    staging: Staging<Q::Chunk>,
    recorded: Vec<Op>,
    /// Enqueued operations, held (with their buffers) until finished.
    in_flight: Vec<Op>,
    downloads: Vec<Region>,
}

impl<Q: Queue> Recorder<Q> {
    pub fn new(queue: Q) -> Self {
        Recorder {
            queue,
            staging: Staging::default(),
            recorded: Vec::new(),
            in_flight: Vec::new(),
            downloads: Vec::new(),
        }
    }

    fn check_buffer(buffer: &Buffer, offset: usize, len: usize, what: &str) -> Result<()> {
        if !Q::owns_buffer(buffer) {
            bail!("{what}: the buffer does not belong to the {} backend", Q::API);
        }
        ensure!(
            offset.checked_add(len).is_some_and(|end| end <= buffer.bytes()),
            "{what} of {len} bytes at offset {offset} overruns a buffer of {} bytes",
            buffer.bytes()
        );
        Ok(())
    }

    fn stage(&mut self, len: usize) -> Result<Region> {
        let queue = &mut self.queue;
        self.staging.alloc(len, |size| queue.new_chunk(size))
    }

    fn drain(&mut self) -> Result<()> {
        for op in std::mem::take(&mut self.recorded) {
            let result = self.queue.enqueue(&op, &mut self.staging);
            self.in_flight.push(op);
            result?;
        }
        Ok(())
    }
}

impl<Q: Queue> Stream for Recorder<Q> {
    fn upload_with(
        &mut self,
        dst: &Buffer,
        offset: usize,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]) -> Result<()>,
    ) -> Result<()> {
        Self::check_buffer(dst, offset, len, "upload")?;
        let region = self.stage(len)?;
        fill(self.staging.slice_mut(region))?;
        self.recorded.push(Op::Upload { dst: dst.clone(), offset, region });
        Ok(())
    }

    fn upload(&mut self, dst: &Buffer, offset: usize, data: &[u8]) -> Result<()> {
        if data.len() < PARALLEL_COPY {
            return self.upload_with(dst, offset, data.len(), &mut |staging| {
                staging.copy_from_slice(data);
                Ok(())
            });
        }
        Self::check_buffer(dst, offset, data.len(), "upload")?;
        let region = self.stage(data.len())?;
        let staging = self.staging.slice_mut(region);
        match copy_pool() {
            Some(pool) => pool.install(|| {
                staging
                    .par_chunks_mut(COPY_PIECE)
                    .zip(data.par_chunks(COPY_PIECE))
                    .for_each(|(to, from)| to.copy_from_slice(from))
            }),
            None => staging.copy_from_slice(data),
        }
        self.recorded.push(Op::Upload { dst: dst.clone(), offset, region });
        Ok(())
    }

    fn zero(&mut self, dst: &Buffer) -> Result<()> {
        Self::check_buffer(dst, 0, dst.bytes(), "zero")?;
        self.recorded.push(Op::Zero { dst: dst.clone() });
        Ok(())
    }

    fn dispatch(&mut self, kernel: &Kernel, groups: [u32; 3], args: &[Arg<'_>]) -> Result<()> {
        check_args(kernel.spec, args)?;
        if !Q::owns_kernel(kernel) {
            bail!("kernel {} does not belong to the {} backend", kernel.spec.name, Q::API);
        }
        let mut owned = Vec::with_capacity(args.len());
        for a in args {
            owned.push(match a {
                Arg::Buffer(b) => {
                    Self::check_buffer(b, 0, 0, kernel.spec.name)?;
                    OwnedArg::Buffer((*b).clone())
                }
                other => OwnedArg::Scalar(other.scalar_bytes().expect("scalars have bytes")),
            });
        }
        if !groups.contains(&0) {
            self.recorded.push(Op::Dispatch { kernel: kernel.clone(), groups, args: owned });
        }
        Ok(())
    }

    fn download(&mut self, src: &Buffer, offset: usize, len: usize) -> Result<()> {
        Self::check_buffer(src, offset, len, "download")?;
        let region = self.stage(len)?;
        self.downloads.push(region);
        self.recorded.push(Op::Download { src: src.clone(), offset, region });
        Ok(())
    }

    fn submit(&mut self) -> Result<()> {
        self.drain()?;
        self.queue.flush()
    }

    fn wait(&mut self) -> Result<Vec<Vec<u8>>> {
        let drained = self.drain();
        let finished = {
            let _limit = super::watchdog::arm(Wait { api: Q::API, what: "a batch" });
            self.queue.finish()
        };
        let downloads = std::mem::take(&mut self.downloads);
        let out = drained.and(finished).map(|()| downloads.iter().map(|r| self.staging.slice(*r).to_vec()).collect());
        self.in_flight.clear();
        self.staging.reset();
        out
    }
}

impl<Q: Queue> Drop for Recorder<Q> {
    fn drop(&mut self) {
        // Nothing may still use the staging or the buffers when they go.
        let limit = super::watchdog::arm(Wait { api: Q::API, what: "its last work" });
        let _ = self.queue.finish();
        drop(limit);
        let chunks = self.staging.take_chunks();
        self.queue.release(chunks);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::gpu::KernelSpec;
    use crate::backend::staging::VecChunk;

    /// A queue that runs each operation on host memory at enqueue.
    struct HostQueue {
        log: Vec<String>,
    }
    struct HostBuffer(std::sync::Mutex<Vec<u8>>);
    impl Queue for HostQueue {
        type Chunk = VecChunk;
        const API: &'static str = "host";
        fn owns_buffer(b: &Buffer) -> bool {
            b.raw::<HostBuffer>().is_some()
        }
        fn owns_kernel(k: &Kernel) -> bool {
            k.raw::<()>().is_some()
        }
        fn new_chunk(&mut self, size: usize) -> Result<VecChunk> {
            Ok(VecChunk(vec![0; size]))
        }
        fn enqueue(&mut self, op: &Op, staging: &mut Staging<VecChunk>) -> Result<()> {
            let mem = |b: &Buffer| b.raw::<HostBuffer>().unwrap().0.lock().unwrap().clone();
            match op {
                Op::Upload { dst, offset, region } => {
                    let data = staging.slice(*region).to_vec();
                    dst.raw::<HostBuffer>().unwrap().0.lock().unwrap()[*offset..*offset + data.len()]
                        .copy_from_slice(&data);
                    self.log.push(format!("upload {}", data.len()));
                }
                Op::Zero { dst } => {
                    dst.raw::<HostBuffer>().unwrap().0.lock().unwrap().fill(0);
                    self.log.push("zero".into());
                }
                Op::Dispatch { kernel, .. } => self.log.push(format!("dispatch {}", kernel.spec.name)),
                Op::Download { src, offset, region } => {
                    let data = mem(src)[*offset..*offset + region.len].to_vec();
                    staging.slice_mut(*region).copy_from_slice(&data);
                    self.log.push(format!("download {}", region.len));
                }
            }
            Ok(())
        }
        fn flush(&mut self) -> Result<()> {
            self.log.push("flush".into());
            Ok(())
        }
        fn finish(&mut self) -> Result<()> {
            Ok(())
        }
    }

    static SPEC: KernelSpec = KernelSpec { name: "k", family: "f", workgroup: [1, 1, 1], buffers: 1, scalars: 1 };

    fn buffer(bytes: usize) -> Buffer {
        Buffer::new(HostBuffer(std::sync::Mutex::new(vec![7; bytes])), bytes)
    }

    #[test]
    fn operations_run_in_order_at_submit_and_downloads_return_in_order() {
        let mut s = Recorder::new(HostQueue { log: Vec::new() });
        let b = buffer(8);
        let k = Kernel::new((), &SPEC);
        s.upload(&b, 2, &[1, 2, 3]).unwrap();
        s.download(&b, 0, 4).unwrap();
        s.dispatch(&k, [1, 1, 1], &[Arg::Buffer(&b), Arg::U32(3)]).unwrap();
        s.dispatch(&k, [0, 1, 1], &[Arg::Buffer(&b), Arg::U32(3)]).unwrap();
        s.zero(&b).unwrap();
        s.download(&b, 4, 4).unwrap();
        assert!(s.queue.log.is_empty(), "nothing runs before submit");
        s.submit().unwrap();
        let out = s.wait().unwrap();
        assert_eq!(out, vec![vec![7, 7, 1, 2], vec![0, 0, 0, 0]]);
        assert_eq!(s.queue.log, ["upload 3", "download 4", "dispatch k", "zero", "download 4", "flush"]);
        assert!(s.in_flight.is_empty() && s.wait().unwrap().is_empty(), "the stream is empty and reusable");
    }

    #[test]
    fn large_uploads_are_copied_whole() {
        let mut s = Recorder::new(HostQueue { log: Vec::new() });
        let n = 3 * PARALLEL_COPY + 17;
        let b = buffer(n + 1);
        let data: Vec<u8> = (0..n).map(|i| (i * 7 % 251) as u8).collect();
        s.upload(&b, 1, &data).unwrap();
        s.download(&b, 1, n).unwrap();
        assert_eq!(s.wait().unwrap(), vec![data]);
        assert!(s.upload(&b, 2, &vec![0; n]).is_err(), "bounds are checked on this path too");
    }

    /// The hang a large upload caused: every worker of rayon's global pool
    /// blocks joining a thread of its own that uploads (as a gate cell joins
    /// its GPU side's host workers). The upload must finish anyway; a
    /// watchdog turns a hang into a failure.
    #[test]
    fn large_uploads_finish_while_every_global_worker_waits_for_them() {
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let n = rayon::current_num_threads();
            let uploaded: Vec<bool> = (0..n)
                .into_par_iter()
                .map(|_| {
                    let upload_and_check = || {
                        let mut s = Recorder::new(HostQueue { log: Vec::new() });
                        let b = buffer(2 * PARALLEL_COPY);
                        s.upload(&b, 0, &vec![3; 2 * PARALLEL_COPY]).unwrap();
                        s.download(&b, 0, 8).unwrap();
                        s.wait().unwrap() == [vec![3; 8]]
                    };
                    std::thread::scope(|t| t.spawn(upload_and_check).join().unwrap())
                })
                .collect();
            let _ = done.send(uploaded);
        });
        let uploaded = finished.recv_timeout(std::time::Duration::from_secs(60)).expect("the uploads hung");
        assert!(uploaded.iter().all(|&ok| ok), "{uploaded:?}");
    }

    #[test]
    fn out_of_range_and_foreign_buffers_are_refused() {
        let mut s = Recorder::new(HostQueue { log: Vec::new() });
        let b = buffer(8);
        assert!(s.upload(&b, 6, &[0; 3]).unwrap_err().to_string().contains("overruns a buffer of 8 bytes"));
        assert!(s.download(&b, usize::MAX, 2).is_err());
        let foreign = Buffer::new(0u32, 8);
        assert!(s.zero(&foreign).unwrap_err().to_string().contains("does not belong to the host backend"));
        let k = Kernel::new((), &SPEC);
        assert!(s.dispatch(&k, [1, 1, 1], &[Arg::Buffer(&foreign), Arg::U32(1)]).is_err());
        assert!(s.dispatch(&Kernel::new(1u8, &SPEC), [1, 1, 1], &[Arg::Buffer(&b), Arg::U32(1)]).is_err());
    }
}
