//! A sequential floating-point sum, reproduced exactly on a GPU.
//!
//! libvmaf adds a feature's per-pixel or per-block terms one after another
//! into a single accumulator — psnr_hvs.c into a float (`ret += ...`),
//! ciede.c into a double (`de00_sum += de00`) — and every addition rounds.
//! The rounding depends on the order, and over millions of terms it moves
//! the score well beyond a print digit (psnr_hvs: ~1e-3 dB), so a parallel
//! reduction cannot reproduce libvmaf. This module reproduces the
//! sequential sum itself, bit for bit, in parallel.
//!
//! **Why it can.** While the running sum s stays in one binade [2^E,
//! 2^(E+1)), every value it takes is an integer multiple m of the binade's
//! unit u = 2^(E-P+1) (P: the accumulator's precision, 24 or 53 bits), and
//! adding a term t >= 0 rounds s + t to the nearest multiple of u: m grows
//! by t/u rounded to the nearest integer — ties to even, the only place
//! where the step depends on m itself, through its parity. So within a
//! binade the sum is an integer sum of per-term increments that can be
//! computed in parallel; only a change of binade (some 30 in a frame: the
//! sum only grows) needs the real, sequential addition.
//!
//! **How.** The terms are cut into segments of [`SEGMENT`] terms, and four
//! dispatches do, steps 1 and 3 with one work group per segment of every
//! sequence ([`SEQSUM_SEGMENTS`]), steps 2 and 4 with one per sequence
//! ([`SEQSUM`]):
//! 1. every segment's total, in double (any order: only an estimate);
//! 2. from those, each segment's *estimated* binade at its start (a
//!    parallel scan of the totals, in tree order);
//! 3. every segment's increments in its estimated binade, twice: for an m
//!    that starts even and one that starts odd (Δ0, Δ1), saturating; the
//!    work items take contiguous chunks and a tree composes them in order
//!    ([`summary_tree`]: exact, as saturating sums of non-negative
//!    increments and parities compose associatively);
//! 4. a scan composes, the same way, the increments of each run of
//!    segments with one estimated binade; then one work item walks the
//!    segments with the exact running sum: where the sum is in a
//!    segment's estimated binade and m + Δ stays below 2^P, the rest of
//!    the run but its last segment at once (one add), then that segment
//!    (another); otherwise (a binade change, a wrong estimate, a zero or
//!    non-finite sum) the work group stages the segment's terms and the
//!    walker adds them one by one with the real floating-point addition.
//!
//! The estimates only decide how fast a segment goes, never its result: the
//! fast path is taken only where it is exact. [`model`] is the same
//! algorithm in Rust, held to the plain sequential sum by the tests.

use crate::backend::gpu::{Arg, Buffer, Gpu, Kernel, KernelSpec, Stream};
use anyhow::{Result, bail, ensure};

/// The accumulator's format: libvmaf's `float` (psnr_hvs) or `double`
/// (ciede). Terms are always f32.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accumulator {
    F32,
    F64,
}

impl Accumulator {
    /// Significand bits, P.
    pub fn precision(self) -> u32 {
        match self {
            Accumulator::F32 => 24,
            Accumulator::F64 => 53,
        }
    }

    /// The smallest normal value's exponent: below it the fast path is not
    /// taken.
    fn min_exponent(self) -> i32 {
        match self {
            Accumulator::F32 => -126,
            Accumulator::F64 => -1022,
        }
    }

    /// `s + t` as the accumulator computes it (s holds a value of the
    /// accumulator's format).
    pub fn add(self, s: f64, t: f32) -> f64 {
        match self {
            Accumulator::F32 => f64::from(s as f32 + t),
            Accumulator::F64 => s + f64::from(t),
        }
    }
}

/// Terms per segment. [`SEQSUM`] stages a slow segment's terms in
/// workgroup memory sized for this many (`SEQSUM_SEGMENT` in
/// kernels/seqsum.cl, `SEGMENT` in shaders/seqsum.wgsl).
pub const SEGMENT: usize = 1024;

/// Work items per group of the seqsum kernels.
pub const SEQSUM_WG: u32 = 256;

/// An increment that certainly leaves any binade (and marks a segment that
/// must take the slow path): far above 2^53, far below u64's end, so that
/// saturating sums of it stay put.
pub const SATURATED: u64 = 1 << 62;

/// A binade exponent no sum has: a segment whose sum is estimated zero.
pub const NO_BINADE: i32 = -100_000;

/// The binade exponent of a positive finite f64 (normal or not).
fn exponent(v: f64) -> i32 {
    ((v.to_bits() >> 52) & 0x7FF) as i32 - 1023
}

/// A term's increment of m in binade `e` of an accumulator of precision
/// `p`: `(a, half)`, t/u = a + f with 0 <= f < 1 and `half` comparing f
/// with 1/2 (Less, Equal: a tie, Greater). [`SATURATED`] for a negative or
/// non-finite term.
pub fn increment(t: f32, e: i32, p: u32) -> (u64, std::cmp::Ordering) {
    use std::cmp::Ordering::*;
    let bits = t.to_bits();
    let biased = ((bits >> 23) & 0xFF) as i32;
    if bits >> 31 != 0 || biased == 0xFF {
        return (if bits == 0x8000_0000 { 0 } else { SATURATED }, Less);
    }
    // t = man * 2^q exactly.
    let (man, q) = if biased == 0 { (bits & 0x7F_FFFF, -149) } else { ((bits & 0x7F_FFFF) | 0x80_0000, biased - 150) };
    let d = q - e + p as i32 - 1; // t / u = man * 2^d
    if man == 0 {
        return (0, Less);
    }
    if d >= 0 {
        return if d > 38 { (SATURATED, Less) } else { ((u64::from(man) << d).min(SATURATED), Less) };
    }
    let sh = (-d) as u32;
    if sh > 25 {
        return (0, Less); // man < 2^24 <= half a unit
    }
    let a = u64::from(man >> sh);
    let rem = man & ((1 << sh) - 1);
    (a, rem.cmp(&(1 << (sh - 1))))
}

/// A segment's increments of m in binade `e`, starting from an even and
/// from an odd m: (Δ0, Δ1), saturating at [`SATURATED`].
pub fn summary(terms: &[f32], e: i32, p: u32) -> (u64, u64) {
    use std::cmp::Ordering::*;
    let (mut d, mut parity) = ([0u64; 2], [0u64, 1]);
    for &t in terms {
        let (a, half) = increment(t, e, p);
        for k in 0..2 {
            let inc = match half {
                Less => a,
                Greater => a + 1,
                // m + a + 1/2: to even.
                Equal => a + ((parity[k] + a) & 1),
            };
            d[k] = (d[k] + inc).min(SATURATED);
            parity[k] = (parity[k] + inc) & 1;
        }
    }
    (d[0], d[1])
}

/// [`summary`] as [`SEQSUM_SEGMENTS`] computes it: `lanes` contiguous
/// chunks of `ceil(len / lanes)` terms (the last ones short or empty), each
/// summarised for an m of either parity at its start — (Δ, parity after)
/// twice — then composed pairwise in a tree (strides 1, 2, 4, ...): chunk A
/// then chunk B from parity p is Δ = sat(ΔA(p) + ΔB(qA(p))), parity
/// qB(qA(p)). Equal to [`summary`] for every input (the tests hold it).
pub fn summary_tree(terms: &[f32], e: i32, p: u32, lanes: usize) -> (u64, u64) {
    use std::cmp::Ordering::*;
    let chunk = terms.len().div_ceil(lanes).max(1);
    // Lanes past the terms have empty chunks: identities of the
    // composition, left out (the same result, cheaper for short segments).
    let lanes = lanes.min(terms.len().div_ceil(chunk)).max(1);
    // Per lane, per start parity: (Δ, parity after).
    let mut f: Vec<[(u64, u64); 2]> = (0..lanes)
        .map(|l| {
            let part = terms.get((l * chunk).min(terms.len())..((l + 1) * chunk).min(terms.len())).unwrap_or(&[]);
            let mut out = [(0u64, 0u64), (0u64, 1u64)];
            for (d, parity) in out.iter_mut() {
                for &t in part {
                    let (a, half) = increment(t, e, p);
                    let inc = match half {
                        Less => a,
                        Greater => a + 1,
                        Equal => a + ((*parity + a) & 1),
                    };
                    *d = (*d + inc).min(SATURATED);
                    *parity = (*parity + inc) & 1;
                }
            }
            out
        })
        .collect();
    let mut stride = 1;
    while stride < lanes {
        for a in (0..lanes).step_by(2 * stride) {
            if a + stride < lanes {
                let (fa, fb) = (f[a], f[a + stride]);
                f[a] = [0, 1].map(|p| {
                    let (da, qa) = fa[p];
                    let (db, qb) = fb[qa as usize];
                    ((da + db).min(SATURATED), qb)
                });
            }
        }
        stride *= 2;
    }
    (f[0][0].0, f[0][1].0)
}

/// The exact running sum `s`, when the fast path may take it: its binade
/// exponent and integer significand m (2^(P-1) <= m < 2^P).
fn decompose(s: f64, acc: Accumulator) -> Option<(i32, u64)> {
    // Zero, negative, NaN and infinities take the real addition.
    if s.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) || !s.is_finite() {
        return None;
    }
    let e = exponent(s);
    if e < acc.min_exponent() {
        return None;
    }
    let p = acc.precision();
    let m = ((s.to_bits() & ((1 << 52) - 1)) >> (53 - p)) | (1 << (p - 1));
    Some((e, m))
}

/// m * 2^(e - P + 1), exactly (2^(P-1) <= m < 2^P).
fn compose(e: i32, m: u64, acc: Accumulator) -> f64 {
    let p = acc.precision();
    f64::from_bits((((e + 1023) as u64) << 52) | ((m - (1 << (p - 1))) << (53 - p)))
}

/// The four steps of the kernels ([the module's doc](self)) in Rust: the
/// sequential sum of `terms` into an accumulator `acc`, starting at zero.
pub fn model(terms: &[f32], acc: Accumulator, segment: usize) -> f64 {
    model_counting(terms, acc, segment).0
}

/// [`model`], and how many segments took the slow path.
pub fn model_counting(terms: &[f32], acc: Accumulator, segment: usize) -> (f64, usize) {
    let p = acc.precision();
    let segments: Vec<&[f32]> = terms.chunks(segment).collect();
    // 1 and 2: estimated binades. (The kernels add the totals in tree
    // order: only an estimate, which decides how fast a segment goes, never
    // the sum.)
    let mut estimate = 0.0f64;
    let binades: Vec<i32> = segments
        .iter()
        .map(|seg| {
            let e = if estimate > 0.0 { exponent(estimate) } else { NO_BINADE };
            estimate += seg.iter().fold(0.0f64, |a, &t| a + f64::from(t));
            e
        })
        .collect();
    // 3.
    let summaries: Vec<(u64, u64)> =
        segments.iter().zip(&binades).map(|(seg, &e)| summary_tree(seg, e, p, SEQSUM_WG as usize)).collect();
    // 4. The walk, in batches of SEQSUM_WG segments as the kernel reads
    // them: where the sum is in a segment's estimated binade, the segments
    // up to its run's last (the run: the batch's segments around it with
    // that binade) at once, if the composed increments keep m below 2^P,
    // then that segment alone, if its own do; else its terms one by one.
    let (mut s, mut slow) = (0.0f64, 0);
    for batch in (0..segments.len()).step_by(SEQSUM_WG as usize) {
        let end = (batch + SEQSUM_WG as usize).min(segments.len());
        let mut j = batch;
        while j < end {
            if let Some((e, mut m)) = decompose(s, acc)
                && e == binades[j]
            {
                let last = (j..end).take_while(|&k| binades[k] == e).last().unwrap_or(j);
                if last > j {
                    // The kernels compose the segments' summaries in a
                    // scan; `summary` of their terms is the same (the
                    // composition is exact).
                    let (d0, d1) = summary(&terms[j * segment..last * segment], e, p);
                    let mj = m + if m & 1 == 0 { d0 } else { d1 };
                    if mj < 1 << p {
                        m = mj;
                        s = compose(e, m, acc);
                        j = last;
                    }
                }
                let (d0, d1) = summaries[j];
                let m2 = m + if m & 1 == 0 { d0 } else { d1 };
                if m2 < 1 << p {
                    s = compose(e, m2, acc);
                    j += 1;
                    continue;
                }
            }
            s = segments[j].iter().fold(s, |s, &t| acc.add(s, t));
            slow += 1;
            j += 1;
        }
    }
    (s, slow)
}

/// `seqsum` (kernels/seqsum.cl, shaders/seqsum.wgsl): with
/// [`SEQSUM_SEGMENTS`], the sequential sum of each of a few sequences of
/// f32 terms ([module doc](self); [`model`] is the same algorithm): its
/// steps 2 and 4, one work group of [`SEQSUM_WG`] per sequence, over its
/// segments' records in batches of [`SEQSUM_WG`] copied to workgroup
/// memory. Buffers: terms (f32, the sequences back to back), sums (per
/// sequence two u32: first term, term count), segs (per segment of every
/// sequence, in order, a record of [`RECORD_WORDS`] u32: its total's f64
/// bits (lo, hi), its estimated binade (i32), a spare word, Δ0 and Δ1 (u64
/// as lo, hi each)), out (per sequence the sum's f64 bits as (lo, hi)
/// u32). Scalars: segment length, the accumulator's precision (24: f32, 53:
/// f64), phase, number of sequences. Phase 0 (after [`SEQSUM_SEGMENTS`]'
/// phase 0 wrote the totals): step 2, the records' binades. Phase 1 (after
/// its phase 1 wrote Δ0, Δ1): step 4, the walk, and `out`.
pub static SEQSUM: KernelSpec =
    KernelSpec { name: "seqsum", family: "seqsum", workgroup: [SEQSUM_WG, 1, 1], buffers: 4, scalars: 4 };

/// `seqsum_segments` (kernels/seqsum.cl, shaders/seqsum_segments.wgsl):
/// steps 1 and 3 of [`SEQSUM`]'s sum, one work group of [`SEQSUM_WG`] per
/// segment of every sequence (group k: record k). Buffers: terms, sums,
/// segs as [`SEQSUM`]'s; scalars the same. Phase 0: step 1, each record's
/// total (any order). Phase 1: step 3, each record's Δ0 and Δ1 in its
/// binade, as [`summary_tree`] computes them.
pub static SEQSUM_SEGMENTS: KernelSpec =
    KernelSpec { name: "seqsum_segments", family: "seqsum", workgroup: [SEQSUM_WG, 1, 1], buffers: 3, scalars: 4 };

/// u32 words per segment record of [`SEQSUM`]'s `segs` buffer.
pub const RECORD_WORDS: usize = 8;

/// The most segments [`SEQSUM_SEGMENTS`] takes in one dispatch: one work
/// group each, and Vulkan guarantees 65535 groups per dimension.
pub const MAX_SEGMENTS: usize = 65_535;

/// `seqsum_serial` (kernels/seqsum.cl, shaders/seqsum_serial.comp): the
/// sums of [`SEQSUM`] (same buffers, same results, bit for bit) by one
/// work item per sequence adding its terms one after another in the
/// accumulator's precision — libvmaf's loop itself. Launch one group of
/// one per sequence; a launch adds terms `[start, start + span)` of each
/// sequence to the running sum in `out` (starting from zero when `start`
/// is 0), so a long sum takes several launches of at most
/// [`SERIAL_SPAN`] terms: lavapipe ends an invocation's loops after 65535
/// iterations in all. Scalars: start, span, the accumulator's precision.
/// [`kernel_for`] runs it on CPU implementations (lavapipe, PoCL), where a
/// core walking the terms costs a fraction of a millisecond and
/// [`SEQSUM`]'s phases and barriers much more.
pub static SEQSUM_SERIAL: KernelSpec =
    KernelSpec { name: "seqsum_serial", family: "seqsum", workgroup: [1, 1, 1], buffers: 3, scalars: 3 };

/// Terms per [`SEQSUM_SERIAL`] launch: the Vulkan kernel adds eight terms
/// an iteration, so 60,000 iterations and at most 7 more, below lavapipe's
/// 65535 loop iterations per invocation.
pub const SERIAL_SPAN: usize = 8 * 60_000;

/// The environment variable that overrides which sum kernel runs: `serial`
/// ([`SEQSUM_SERIAL`]) or `parallel` ([`SEQSUM`]). A testing and diagnostic
/// switch (both give the same bits); unset or empty, [`kernel_for`] chooses
/// by device type.
pub const KERNEL_VAR: &str = "ULPGATE_SEQSUM_KERNEL";

/// The sum kernel for `device`: [`SEQSUM_SERIAL`] on CPU implementations
/// (`device_type` `cpu`), [`SEQSUM`] on everything else. `choice` is
/// [`KERNEL_VAR`]'s value, which overrides the device type; anything but
/// `serial`, `parallel` or empty is an error.
pub fn kernel_for(
    device: &crate::backend::DeviceInfo,
    choice: Option<&std::ffi::OsStr>,
) -> Result<&'static KernelSpec> {
    let (serial, parallel): (&'static KernelSpec, &'static KernelSpec) = (&SEQSUM_SERIAL, &SEQSUM);
    super::gpu::shape_for_driver(
        device,
        KERNEL_VAR,
        choice,
        ("serial", serial.name, serial),
        ("parallel", parallel.name, parallel),
    )
}

/// One or more sequential sums on a GPU: the kernel, and the sequences'
/// places in the terms buffer.
pub struct SeqSum {
    kernel: Kernel,
    /// [`SEQSUM_SEGMENTS`], where `kernel` is [`SEQSUM`].
    segments: Option<Kernel>,
    acc: Accumulator,
    /// Per sequence: first term, term count.
    sequences: Vec<(usize, usize)>,
}

/// The device buffers of one frame in flight.
pub struct SeqSumBuffers {
    sums: Buffer,
    /// [`SEQSUM`]'s segment records.
    segs: Option<Buffer>,
    out: Buffer,
}

impl SeqSum {
    /// Sums of `counts[g]` consecutive terms each, the sequences back to
    /// back in the terms buffer, by the kernel [`kernel_for`] picks.
    pub fn new(gpu: &dyn Gpu, acc: Accumulator, counts: &[usize]) -> Result<Self> {
        let spec = kernel_for(gpu.device(), std::env::var_os(KERNEL_VAR).as_deref())?;
        Self::with_kernel(gpu, acc, counts, spec)
    }

    /// [`Self::new`] with a given kernel, [`SEQSUM`] or [`SEQSUM_SERIAL`].
    pub fn with_kernel(gpu: &dyn Gpu, acc: Accumulator, counts: &[usize], spec: &'static KernelSpec) -> Result<Self> {
        ensure!(*spec == SEQSUM || *spec == SEQSUM_SERIAL, "{} is not a sum kernel", spec.name);
        ensure!(!counts.is_empty(), "no sequence to sum");
        let mut sequences = Vec::new();
        let mut at = 0;
        for &n in counts {
            sequences.push((at, n));
            at += n;
        }
        ensure!(at <= u32::MAX as usize, "{at} terms: more than a 32-bit index reaches");
        let segments = if *spec == SEQSUM {
            let n: usize = counts.iter().map(|c| c.div_ceil(SEGMENT)).sum();
            ensure!(
                n <= MAX_SEGMENTS,
                "{at} terms: {n} segments of {SEGMENT}, more than {} work groups {MAX_SEGMENTS} of a dispatch",
                SEQSUM_SEGMENTS.name
            );
            Some(gpu.load_kernel(&SEQSUM_SEGMENTS)?)
        } else {
            None
        };
        Ok(SeqSum { kernel: gpu.load_kernel(spec)?, segments, acc, sequences })
    }

    /// Terms in all sequences.
    pub fn terms(&self) -> usize {
        self.sequences.iter().map(|s| s.1).sum()
    }

    /// Segments in all sequences: [`SEQSUM`]'s records.
    fn segment_count(&self) -> usize {
        self.sequences.iter().map(|s| s.1.div_ceil(SEGMENT)).sum()
    }

    pub fn buffers(&self, gpu: &dyn Gpu) -> Result<SeqSumBuffers> {
        let words: Vec<u32> = self.sequences.iter().flat_map(|&(first, count)| [first as u32, count as u32]).collect();
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let segs = match self.segments {
            Some(_) => Some(gpu.create_buffer(self.segment_count().max(1) * RECORD_WORDS * 4)?),
            None => None,
        };
        let b = SeqSumBuffers {
            sums: gpu.create_buffer(bytes.len())?,
            segs,
            out: gpu.create_buffer(self.sequences.len() * 8)?,
        };
        let mut stream = gpu.create_stream()?;
        stream.upload(&b.sums, 0, &bytes)?;
        stream.wait()?;
        Ok(b)
    }

    /// Records the sums of `terms` and the download of the results.
    pub fn record(&self, terms: &Buffer, b: &SeqSumBuffers, stream: &mut dyn Stream) -> Result<()> {
        let groups = [self.sequences.len() as u32, 1, 1];
        let p = Arg::U32(self.acc.precision());
        if *self.kernel.spec == SEQSUM_SERIAL {
            let longest = self.sequences.iter().map(|s| s.1).max().unwrap_or(0);
            for start in (0..longest.max(1)).step_by(SERIAL_SPAN) {
                let (start, span) = (Arg::U32(start as u32), Arg::U32(SERIAL_SPAN as u32));
                let args = [Arg::Buffer(terms), Arg::Buffer(&b.sums), Arg::Buffer(&b.out), start, span, p];
                stream.dispatch(&self.kernel, groups, &args)?;
            }
        } else {
            let (Some(segments), Some(segs)) = (&self.segments, &b.segs) else {
                bail!("{}: no segment kernel or records", self.kernel.spec.name);
            };
            let records = self.segment_count() as u32;
            let n = Arg::U32(self.sequences.len() as u32);
            for phase in [0, 1] {
                let phase = Arg::U32(phase);
                if records > 0 {
                    let args = [
                        Arg::Buffer(terms),
                        Arg::Buffer(&b.sums),
                        Arg::Buffer(segs),
                        Arg::U32(SEGMENT as u32),
                        p,
                        phase,
                        n,
                    ];
                    stream.dispatch(segments, [records, 1, 1], &args)?;
                }
                let args = [
                    Arg::Buffer(terms),
                    Arg::Buffer(&b.sums),
                    Arg::Buffer(segs),
                    Arg::Buffer(&b.out),
                    Arg::U32(SEGMENT as u32),
                    p,
                    phase,
                    n,
                ];
                stream.dispatch(&self.kernel, groups, &args)?;
            }
        }
        stream.download(&b.out, 0, self.sequences.len() * 8)
    }

    /// The sums from their download.
    pub fn results(&self, download: &[u8]) -> Result<Vec<f64>> {
        ensure!(download.len() == self.sequences.len() * 8, "expected {} sums", self.sequences.len());
        Ok(download.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(terms: &[f32], acc: Accumulator) -> f64 {
        terms.iter().fold(0.0, |s, &t| acc.add(s, t))
    }

    /// A deterministic stream of terms shaped like the features': many
    /// zeros, small values with long fractions, rare large ones.
    fn terms(seed: u64, n: usize) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let r = (s >> 33) as u32;
                match r % 8 {
                    0 | 1 => 0.0,
                    2 => (r >> 8) as f32 * 1e-3,
                    3 => ((r >> 8) % 5000) as f32 * 37.25,
                    4 => f32::from_bits(0x3000_0000 + (r >> 6)), // tiny to mid values
                    5 => ((r >> 10) % 256) as f32,               // integers: exact sums, ties later
                    6 => ((r >> 12) % 64) as f32 * 0.5,          // halves: ties in coarse binades
                    _ => ((r >> 8) as f32).sqrt(),
                }
            })
            .collect()
    }

    #[test]
    fn the_model_is_the_sequential_sum() {
        for acc in [Accumulator::F32, Accumulator::F64] {
            for (seed, n) in [(1, 0), (2, 1), (3, 1000), (4, 50_000), (5, 300_000)] {
                let t = terms(seed, n);
                for segment in [1, 7, 64, 1024] {
                    let (want, got) = (naive(&t, acc), model(&t, acc, segment));
                    assert_eq!(want.to_bits(), got.to_bits(), "{acc:?} seed {seed} n {n} segment {segment}");
                }
            }
        }
    }

    #[test]
    fn most_segments_take_the_fast_path() {
        // 2.7M terms (a 1080p luma plane of psnr_hvs): a few dozen binade
        // changes, the rest in whole segments.
        for acc in [Accumulator::F32, Accumulator::F64] {
            let t = terms(11, 2_700_000);
            let (sum, slow) = model_counting(&t, acc, SEGMENT);
            assert_eq!(sum.to_bits(), naive(&t, acc).to_bits());
            let segments = t.len().div_ceil(SEGMENT);
            assert!(slow * 20 < segments, "{acc:?}: {slow} of {segments} segments slow");
        }
    }

    #[test]
    fn ties_go_to_even_as_the_addition_does() {
        // A start with an odd m, then terms of half a unit and one and a
        // half units of its binade: every addition is a tie, decided by m's
        // parity. f32: 2^23 + 1 (unit 1); f64: 2^30 + 2^-22 (unit 2^-22).
        for (acc, start, half) in [
            (Accumulator::F32, vec![8_388_609.0f32], 0.5f32),
            (Accumulator::F64, vec![1_073_741_824.0, 2.0f32.powi(-22)], 2.0f32.powi(-23)),
        ] {
            let mut seq = start;
            for k in 0..4000 {
                seq.push(if k % 3 == 0 { 3.0 * half } else { half });
            }
            assert_eq!(naive(&seq, acc).to_bits(), model(&seq, acc, 64).to_bits(), "{acc:?}");
            assert_ne!(naive(&seq, acc), naive(&seq[..seq.len() - 1], acc), "{acc:?}: the terms must count");
        }
        // Increments by hand: u = 1 (e = 23, P = 24).
        use std::cmp::Ordering::*;
        assert_eq!(increment(0.5, 23, 24), (0, Equal));
        assert_eq!(increment(1.5, 23, 24), (1, Equal));
        assert_eq!(increment(2.75, 23, 24), (2, Greater));
        assert_eq!(increment(0.25, 23, 24), (0, Less));
        assert_eq!(increment(0.0, 23, 24), (0, Less));
        assert_eq!(increment(-1.0, 23, 24).0, SATURATED);
        assert_eq!(increment(f32::NAN, 23, 24).0, SATURATED);
        assert_eq!(increment(1e30, 23, 24).0, SATURATED);
        // Odd m + tie -> up; even -> stays.
        assert_eq!(summary(&[0.5], 23, 24), (0, 1));
    }

    #[test]
    fn the_tree_of_chunks_is_the_sequential_summary() {
        // Random segments in binades around their sums, all-tie segments
        // (every parity flips the next step), saturating ones; lanes that
        // leave chunks empty, and odd lane counts.
        let mut segs: Vec<Vec<f32>> =
            (0..40).map(|k| terms(100 + k, [1, 7, 255, 256, 1000, 1024][k as usize % 6])).collect();
        segs.push((0..1024).map(|k| if k % 3 == 0 { 1.5 } else { 0.5 }).collect());
        segs.push(vec![0.5; 777]);
        segs.push([vec![1e30], vec![0.5; 300]].concat());
        segs.push(vec![]);
        for seg in &segs {
            for (e, p) in [(23, 24), (10, 24), (30, 24), (0, 24), (NO_BINADE, 24), (23, 53), (-3, 53), (50, 53)] {
                for lanes in [1, 3, 256] {
                    assert_eq!(
                        summary_tree(seg, e, p, lanes),
                        summary(seg, e, p),
                        "{} terms, e {e}, p {p}, {lanes} lanes",
                        seg.len()
                    );
                }
            }
        }
    }

    #[test]
    fn non_finite_and_negative_terms_take_the_real_addition() {
        for acc in [Accumulator::F32, Accumulator::F64] {
            let mut t = terms(9, 5000);
            t[3000] = -2.5;
            assert_eq!(naive(&t, acc).to_bits(), model(&t, acc, 64).to_bits());
            t[4000] = f32::INFINITY;
            assert_eq!(naive(&t, acc), model(&t, acc, 64));
            t[4500] = f32::NAN;
            assert!(model(&t, acc, 64).is_nan());
        }
    }
}
