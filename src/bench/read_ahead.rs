//! The CPU reference's upload-included engine in `bench --clip`: libvmaf's
//! threading model. `vmaf --threads N` runs N extraction workers in a
//! thread pool while its main thread reads the next pictures into a pool
//! of 2N + 2 (libvmaf.c `check_picture_pool`, `threaded_read_pictures_batch`),
//! so reading overlaps extraction even at `--threads 1`. Here too: one
//! thread reads pairs in frame order into a pool of as many pairs, their
//! storage reused, and `threads` workers, each with its own extractor,
//! score whichever pair comes next. Where one reader cannot keep up (a
//! cheap feature on several workers), a worker that finds no pair ready
//! reads the next one itself, as every worker did before: the reader only
//! adds. Only for features whose frames are independent: a temporal
//! (windowed) extractor reads the earlier frames it needs itself
//! ([`crate::features::gpu::score_parallel`]).

use crate::features::Extractor;
use crate::features::gpu::{Part, merge_parts};
use crate::fixture::{FixtureError, Frame, PairSource};
use crate::scores::Scores;
use anyhow::{Result, anyhow, bail};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, channel, sync_channel};

/// A frame pair read and its index, or the reading error that ends the pass.
type Read = Result<(usize, Frame, Frame), FixtureError>;

/// A pair of the pool waiting to be read into: the frames whose storage
/// the next read reuses (none at first).
type Free = (Option<Frame>, Option<Frame>);

/// Scores every pair of `source` with `threads` workers and one reading
/// thread (the module's comment); the scores are those of one extractor
/// over every frame in order, since each frame is scored independently.
pub fn score_read_ahead(
    extractor: &(dyn Fn() -> Result<Box<dyn Extractor>> + Sync),
    source: &dyn PairSource,
    threads: usize,
) -> Result<Scores> {
    let frames = source.frames();
    let threads = threads.clamp(1, frames.max(1));
    let pool = 2 * threads + 2;
    // The next frame not yet taken, by the reader or a worker.
    let next = AtomicUsize::new(0);
    let claim = || Some(next.fetch_add(1, Ordering::Relaxed)).filter(|&i| i < frames);
    let (read_tx, read_rx) = sync_channel::<Read>(pool);
    let (free_tx, free_rx) = channel::<Free>();
    for _ in 0..pool {
        free_tx.send((None, None)).map_err(|_| anyhow!("the pool of pairs closed"))?;
    }
    let read_rx = Mutex::new(read_rx);
    let parts: Vec<Result<Part>> = std::thread::scope(|scope| {
        let claim = &claim;
        scope.spawn(move || read_pairs(source, claim, &free_rx, &read_tx));
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let (free_tx, read_rx) = (free_tx.clone(), &read_rx);
                scope.spawn(move || -> Result<Part> {
                    let mut ext = extractor()?;
                    if ext.window().is_some() || ext.gpu_driver().is_some() {
                        bail!("the read-ahead engine scores independent frames on the CPU only");
                    }
                    let (mut mine, mut scores) = (Vec::new(), Scores::default());
                    // The worker's own pair, for the frames it reads itself.
                    let mut own_pair = (None, None);
                    while let Some((index, reference, distorted, own)) =
                        next_for_worker(read_rx, claim, source, &mut own_pair)?
                    {
                        ext.extract(index, &reference, &distorted, &mut scores)?;
                        mine.push(index);
                        if own {
                            own_pair = (Some(reference), Some(distorted));
                        } else {
                            // The reader may have stopped (an error elsewhere):
                            // then the pair is simply dropped.
                            let _ = free_tx.send((Some(reference), Some(distorted)));
                        }
                    }
                    ext.flush(&mut scores)?;
                    Ok((mine, scores, ext))
                })
            })
            .collect();
        // Only the workers hold the pool's senders now: when they are all
        // gone, the reader's wait for a free pair ends. (That is why this
        // engine spawns its own workers rather than run on
        // `features::gpu::run_workers`, whose shared closure would keep a
        // sender alive: with every worker failed, the reader would wait on.)
        drop(free_tx);
        workers.into_iter().map(|w| w.join().unwrap_or_else(|_| Err(anyhow!("a worker panicked")))).collect()
    });
    let scored: usize = parts.iter().map(|p| p.as_ref().map_or(0, |(mine, _, _)| mine.len())).sum();
    if parts.iter().all(Result::is_ok) && scored != frames {
        bail!("{scored} of {frames} frame pairs scored");
    }
    merge_parts(parts, frames)
}

/// The reading thread: takes a free pair of the pool, then the next frame
/// no one has taken, and reads it; until every frame is taken, a reading
/// error (sent on, for a worker to return) or no worker is left.
fn read_pairs(
    source: &dyn PairSource,
    claim: &dyn Fn() -> Option<usize>,
    free: &Receiver<Free>,
    read: &SyncSender<Read>,
) {
    while let Ok((mut r, mut d)) = free.recv() {
        let Some(index) = claim() else { return };
        let pair = read_pair(source, index, &mut r, &mut d);
        let failed = pair.is_err();
        // The channel holds the whole pool: a send never waits.
        if read.send(pair).is_err() || failed {
            return;
        }
    }
}

/// Pair `index` of `source`, into the storage of `r` and `d` where it can.
fn read_pair(source: &dyn PairSource, index: usize, r: &mut Option<Frame>, d: &mut Option<Frame>) -> Read {
    source.frame_into(index, false, r)?;
    source.frame_into(index, true, d)?;
    match (r.take(), d.take()) {
        (Some(r), Some(d)) => Ok((index, r, d)),
        _ => Err(FixtureError::Invalid(format!("frame pair {index} was not read"))),
    }
}

/// A worker's next pair and whether it read it itself: one the reader has
/// ready; else the next frame no one has taken, read into the worker's
/// `own` pair; else (every frame taken) what the reader is still reading,
/// waiting for it. `None` once nothing is left.
fn next_for_worker(
    read: &Mutex<Receiver<Read>>,
    claim: &dyn Fn() -> Option<usize>,
    source: &dyn PairSource,
    own: &mut Free,
) -> Result<Option<(usize, Frame, Frame, bool)>> {
    let queue = || read.lock().map_err(|_| anyhow!("the queue of read pairs is poisoned"));
    let ready = queue()?.try_recv();
    if let Ok(pair) = ready {
        let (index, reference, distorted) = pair?;
        return Ok(Some((index, reference, distorted, false)));
    }
    if let Some(index) = claim() {
        let (_, reference, distorted) = read_pair(source, index, &mut own.0, &mut own.1)?;
        return Ok(Some((index, reference, distorted, true)));
    }
    let waited = queue()?.recv();
    match waited {
        Ok(pair) => {
            let (index, reference, distorted) = pair?;
            Ok(Some((index, reference, distorted, false)))
        }
        Err(_) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{Chroma, Geometry, LoadedFixture};
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn clip(frames: usize) -> LoadedFixture {
        let geometry = Geometry { width: 4, height: 2, bit_depth: 8, chroma: Chroma::Yuv420 };
        let frame =
            |v: u8| Frame::new(geometry, crate::fixture::Samples::U8(vec![v; geometry.frame_samples()])).unwrap();
        LoadedFixture {
            geometry,
            reference: (0..frames).map(|i| frame(i as u8)).collect(),
            distorted: (0..frames).map(|i| frame(2 * i as u8)).collect(),
        }
    }

    /// Scores each pair by its first samples, so a pair read for the wrong
    /// index, or scored twice or never, shows.
    struct FirstSamples(std::sync::Arc<AtomicUsize>);

    impl Extractor for FirstSamples {
        fn extract(&mut self, index: usize, r: &Frame, d: &Frame, out: &mut Scores) -> Result<()> {
            let first = |f: &Frame| f.samples.as_bytes()[0] as f64;
            out.record("sum", index, 1000.0 * index as f64 + first(r) + first(d) / 1000.0);
            self.0.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
    }

    #[test]
    fn every_pair_is_scored_once_by_whichever_worker_takes_it() {
        let fixture = clip(23);
        for threads in [1, 2, 5] {
            let (made, scored) = (AtomicUsize::new(0), std::sync::Arc::new(AtomicUsize::new(0)));
            let make = || -> Result<Box<dyn Extractor>> {
                made.fetch_add(1, Ordering::Relaxed);
                Ok(Box::new(FirstSamples(scored.clone())))
            };
            let scores = score_read_ahead(&make, &fixture, threads).unwrap();
            let want: Vec<f64> = (0..23).map(|i| 1000.0 * i as f64 + i as f64 + (2 * i) as f64 / 1000.0).collect();
            assert_eq!(scores.get("sum").unwrap(), &want[..], "{threads} workers");
            assert_eq!(made.load(Ordering::Relaxed), threads, "an extractor per worker");
            assert_eq!(scored.load(Ordering::Relaxed), 23, "each pair once");
        }
    }

    /// The threads that did something, one entry each time.
    type Threads = std::sync::Arc<Mutex<Vec<std::thread::ThreadId>>>;

    /// A clip in memory whose frame `unreadable` cannot be read, and which
    /// notes the thread that read each frame.
    struct Watched {
        clip: LoadedFixture,
        unreadable: Option<usize>,
        read_by: Threads,
    }

    impl Watched {
        fn new(clip: LoadedFixture, unreadable: Option<usize>) -> Self {
            Watched { clip, unreadable, read_by: Threads::default() }
        }
    }

    impl PairSource for Watched {
        fn geometry(&self) -> Geometry {
            self.clip.geometry
        }
        fn frames(&self) -> usize {
            self.clip.frames()
        }
        fn read_bytes(&self, index: usize, distorted: bool, dst: &mut [u8]) -> Result<(), FixtureError> {
            self.clip.read_bytes(index, distorted, dst)
        }
        fn frame(&self, index: usize, distorted: bool) -> Result<Frame, FixtureError> {
            if self.unreadable == Some(index) {
                return Err(FixtureError::Truncated { path: "d.yuv".into(), frame: index });
            }
            self.read_by.lock().unwrap().push(std::thread::current().id());
            self.clip.frame(index, distorted)
        }
    }

    #[test]
    fn a_reading_error_or_a_failing_worker_ends_the_pass_with_its_error() {
        let scored = std::sync::Arc::new(AtomicUsize::new(0));
        let make = || -> Result<Box<dyn Extractor>> { Ok(Box::new(FirstSamples(scored.clone()))) };
        let err = score_read_ahead(&make, &Watched::new(clip(40), Some(5)), 2).unwrap_err();
        assert!(format!("{err:#}").contains("d.yuv"), "{err:#}");

        struct Fails;
        impl Extractor for Fails {
            fn extract(&mut self, index: usize, _: &Frame, _: &Frame, _: &mut Scores) -> Result<()> {
                bail!("frame {index} failed")
            }
        }
        // Every worker fails on its first pair; the reader, waiting for a
        // free pair, stops when they are gone: no hang.
        let err = score_read_ahead(&|| Ok(Box::new(Fails)), &clip(40), 3).unwrap_err();
        assert!(format!("{err:#}").contains("failed"), "{err:#}");
    }

    #[test]
    fn the_reading_thread_reads_ahead_while_the_worker_scores() {
        // The one worker, on its first pair, waits until threads other than
        // its own have read three pairs: the most the reader can have read
        // ahead of it (a pool of 2N + 2 = 4, one in the worker's hands), so
        // a live reader always gets there and a reader that reads nothing
        // never does. No timing: the deadline only ends a failing run.
        struct Waits {
            read_by: Threads,
            scored_by: Threads,
        }
        impl Extractor for Waits {
            fn extract(&mut self, index: usize, _: &Frame, _: &Frame, out: &mut Scores) -> Result<()> {
                let me = std::thread::current().id();
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
                let first = self.scored_by.lock().unwrap().is_empty();
                while first
                    && self.read_by.lock().unwrap().iter().filter(|&&t| t != me).count() < 6
                    && std::time::Instant::now() < deadline
                {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                self.scored_by.lock().unwrap().push(me);
                out.record("i", index, index as f64);
                Ok(())
            }
        }
        let (source, scored_by) = (Watched::new(clip(12), None), Threads::default());
        let make = || -> Result<Box<dyn Extractor>> {
            Ok(Box::new(Waits { read_by: source.read_by.clone(), scored_by: scored_by.clone() }))
        };
        let scores = score_read_ahead(&make, &source, 1).unwrap();
        assert_eq!(scores.get("i").unwrap(), &(0..12).map(f64::from).collect::<Vec<_>>()[..]);
        let worker = scored_by.lock().unwrap()[0];
        let reads = source.read_by.lock().unwrap();
        assert_eq!(reads.len(), 24, "both frames of each pair, once");
        let by_reader = reads.iter().filter(|&&t| t != worker).count();
        assert!(by_reader >= 6, "the reader read {by_reader} of 24 frames");
    }
}
