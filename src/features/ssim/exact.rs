//! libvmaf's sequential sum of an SSIM map's f64 terms, made on a GPU in
//! parallel: the exact fallback of `sums.rs` where the parallel sum cannot
//! decide a mean.
//!
//! `_iqa_ssim` adds a map's terms one after the other into one double
//! (`ssim_sum += ...`). Until 2026-11-27 the device redid that loop on one
//! work item when a mean was too close to call: ~2 M dependent double adds
//! at 1080p, 7.8 ms on an H100, and 42% of float_ms_ssim's Vulkan device
//! time although one mean in 240 needs it (docs/features/ssim.md).
//!
//! **Why a parallel walk is exact.** The method of `features::seqsum`
//! (f32 terms, non-negative) carried over to signed f64 terms. While the
//! running sum s stays in one binade [2^E, 2^(E+1)), every value it takes
//! is m u, with u = 2^(E-52) and 2^52 <= m < 2^53, and `s + t` rounds the
//! exact m + t/u to the nearest integer, ties to even: m moves by an
//! integer that depends on t alone, but for a tie (t/u ending in exactly
//! one half), where it depends on m's parity. So a segment of terms moves
//! m by an integer sum of per-term increments, from either parity
//! ([`Summary`]), computed in parallel. Terms of either sign can take the
//! sum down as well as up, so a segment's summary also carries the lowest
//! and highest value its prefix sums reach: the walk takes a segment at
//! once only when all of them keep m in (2^52, 2^53) — above 2^52 by at
//! least one, so that the exact value before each rounding, within half a
//! unit of the rounded one, is in the binade too. Anywhere else (a binade
//! change, a wrong estimate, zero, a negative sum, a non-finite or huge
//! term) the walk adds the segment's terms one by one with the real
//! addition.
//!
//! **How.** Three dispatches after `ssim_total`, each doing nothing for the
//! metrics `ssim_total` decided (its flag 0):
//! 1. [`SSIM_EXACT_SEGMENTS`], phase 0: every segment's total (any order:
//!    an estimate);
//! 2. [`SSIM_EXACT_SEGMENTS`], phase 1: every segment's estimated binade at its
//!    start (the totals before it) and its [`Summary`] in that binade: each
//!    work item 4 contiguous terms, composed by a tree ([`Summary::then`]
//!    is associative, and exact: integers below 2^51);
//! 3. [`SSIM_EXACT_WALK`]: one work group per metric; its first work item
//!    walks the segments with the exact running sum, the work group staging
//!    a slow segment's terms in local memory.
//!
//! The estimates only decide how fast a segment goes, never the sum.
//! [`model`] is the three steps in Rust, held to the plain loop by the
//! tests.

use crate::backend::gpu::KernelSpec;
use anyhow::{Result, bail};

/// Terms per segment (`SSIM_SEGMENT` in kernels/ssim.cl, `SEGMENT` in the
/// WGSL kernels: the staging of a slow segment in local memory).
pub const SEGMENT: usize = 1024;

/// Work items per group of both kernels; each summarises
/// `SEGMENT / WG` terms.
pub const WG: usize = 256;

/// u32 words of a segment's record: its total (f64, words 0-1), estimated
/// binade (i32, word 2), `bad` (word 3), then Δ, lowest and highest prefix
/// from an even and from an odd m (i64: Δ0 4-5, Δ1 6-7, lo0 8-9, lo1
/// 10-11, hi0 12-13, hi1 14-15).
pub const RECORD_WORDS: usize = 16;

/// A binade exponent no sum has: a segment estimated to start at zero, a
/// negative or a non-finite sum.
pub const NO_BINADE: i32 = -100_000;

/// 2^52 and 2^53: m's binade.
const LOW: i64 = 1 << 52;
const HIGH: i64 = 1 << 53;

/// A term whose increment is this large or larger takes the real addition
/// (a segment's Δ then stays below 2^50, exact in any i64 sum).
const LIMIT: u64 = 1 << 40;

/// The work groups of [`SSIM_EXACT_SEGMENTS`] at most: they loop over the
/// rest, so a frame with nothing to add costs a few hundred empty groups,
/// not thousands.
pub const MAX_GROUPS: usize = 512;

/// `ssim_exact_segments`: for every entry e of ssim_total's layout whose
/// flag (`results[5 e + 4]`) is set, work group g takes segments g, g +
/// groups, ... of its terms. Phase 0: the segment's total, in any order,
/// into its record's words 0-1. Phase 1: its estimated binade (that of the
/// sum of the totals before it, in any order; [`NO_BINADE`] where that is
/// not positive, finite and normal) and its [`Summary`] in it, into words
/// 2-15. Launch `[groups, 1, 1]`, phase 0 then 1. Buffers: terms (f64),
/// layout (6 u32 per entry: ssim_total's five, then the entry's first
/// record), results (f64, ssim_total's), records ([`RECORD_WORDS`] u32 per
/// segment). Scalars: entries, groups, phase.
pub static SSIM_EXACT_SEGMENTS: KernelSpec =
    KernelSpec { name: "ssim_exact_segments", family: "ssim", workgroup: [256, 1, 1], buffers: 4, scalars: 3 };

/// `ssim_exact_walk`: work group e, for a flagged entry, walks its
/// segments (records staged 256 at a time in local memory) with the exact
/// running sum from 0 as [`model`] does, and writes it to `results[5 e +
/// 3]`. Launch `[entries, 1, 1]`. Buffers as [`SSIM_EXACT_SEGMENTS`];
/// scalar: entries.
pub static SSIM_EXACT_WALK: KernelSpec =
    KernelSpec { name: "ssim_exact_walk", family: "ssim", workgroup: [256, 1, 1], buffers: 4, scalars: 1 };

/// Where a mean's sequential sum is made when the parallel sum cannot
/// decide it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exact {
    /// In `ssim_total`, one work item adding the map's terms in order: the
    /// CPU drivers' way (on two cores the parallel walk does more work for
    /// nothing, and each kernel a process loads is an LLVM compile).
    Inline,
    /// By this module's kernels: the GPUs' way.
    Parallel,
}

/// Environment variable that forces an [`Exact`] (`inline` or `parallel`;
/// unset: by the driver).
pub const EXACT_VAR: &str = "ULPGATE_SSIM_EXACT";

/// Terms of a frame's largest map from which GPUs take the parallel
/// walk. Below it the inline loop costs less on average: a mean needs it
/// about n / 490 M of the time (one in 240 for a 1080p map), and then costs
/// n dependent adds, so its average cost grows as n², while the three
/// kernels' dispatches cost the same every frame when they have nothing to
/// do (H200, 2026-11-27: 4.5-5.4 µs each on Vulkan, float_ssim's 470x260
/// map; float_ms_ssim's inline loop, 2.04 M terms in its largest map,
/// averaged 180 µs a frame). They break even near 2^19 terms.
pub const PARALLEL_FROM: usize = 1 << 19;

/// Inline on CPU drivers, and on GPUs for frames whose largest map has
/// fewer than [`PARALLEL_FROM`] terms; parallel elsewhere, unless `choice`
/// (the value of [`EXACT_VAR`]) names one.
pub fn exact_for(
    device: &crate::backend::DeviceInfo,
    choice: Option<&std::ffi::OsStr>,
    largest_map: usize,
) -> Result<Exact> {
    let by_driver = crate::features::gpu::shape_for_driver(
        device,
        EXACT_VAR,
        choice,
        ("inline", "one work item adds the map's terms in order", Exact::Inline),
        ("parallel", "segments summarised in parallel, then walked", Exact::Parallel),
    )?;
    let chosen = choice.is_some_and(|c| !c.is_empty());
    Ok(if !chosen && largest_map < PARALLEL_FROM { Exact::Inline } else { by_driver })
}

/// A term's move of m in binade e: m goes to `m + base`, or for a `tie`
/// to whichever of `m + base` and `m + base + 1` is even. `bad`: a
/// non-finite term or one of at least [`LIMIT`] units, which the walk
/// must add for real.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Increment {
    pub base: i64,
    pub tie: bool,
    pub bad: bool,
}

const BAD: Increment = Increment { base: 0, tie: false, bad: true };

/// [`Increment`] of term `t` in binade `e` (u = 2^(e-52)), from t's bits:
/// t = ±man 2^q exactly, so t/u = ±man 2^d with d = q - e + 52, split
/// into a whole part a and a fraction compared with one half.
pub fn increment(t: f64, e: i32) -> Increment {
    use std::cmp::Ordering::*;
    let bits = t.to_bits();
    let biased = ((bits >> 52) & 0x7FF) as i32;
    if biased == 0x7FF {
        return BAD;
    }
    let fraction = bits & ((1 << 52) - 1);
    let (man, q) = if biased == 0 { (fraction, -1074) } else { (fraction | (1 << 52), biased - 1075) };
    if man == 0 {
        return Increment { base: 0, tie: false, bad: false };
    }
    let d = q - e + 52;
    let (a, half) = if d >= 0 {
        // man < 2^53: below 2^64 for d <= 10, and at least LIMIT beyond.
        if d > 10 {
            return BAD;
        }
        (man << d, Less)
    } else {
        let sh = (-d) as u32;
        if sh > 53 {
            (0, Less) // man < 2^53 <= half a unit
        } else {
            (man >> sh, (man & ((1 << sh) - 1)).cmp(&(1 << (sh - 1))))
        }
    };
    if a >= LIMIT {
        return BAD;
    }
    let a = a as i64;
    // m + a + f rounds to m + a (f < 1/2), m + a + 1 (f > 1/2) or the even
    // one; m - a - f to m - a, m - a - 1, or the even one of those two.
    let (base, tie) = match (bits >> 63 != 0, half) {
        (false, Less) => (a, false),
        (false, Greater) => (a + 1, false),
        (false, Equal) => (a, true),
        (true, Less) => (-a, false),
        (true, Greater) => (-a - 1, false),
        (true, Equal) => (-a - 1, true),
    };
    Increment { base, tie, bad: false }
}

/// What a run of terms does to m in one binade, from an even m (index 0)
/// and from an odd one (1): its total move Δ, and the lowest and highest
/// of the moves after each of its terms (the prefix sums, relative to m).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    pub bad: bool,
    pub delta: [i64; 2],
    pub lo: [i64; 2],
    pub hi: [i64; 2],
}

impl Summary {
    /// No terms: the identity of [`Summary::then`] (its bounds lose to any
    /// real prefix: |Δ| < 2^50).
    pub const EMPTY: Summary = Summary { bad: false, delta: [0, 0], lo: [HIGH, HIGH], hi: [-HIGH, -HIGH] };

    /// One term's.
    pub fn of(inc: Increment) -> Summary {
        if inc.bad {
            return Summary { bad: true, ..Summary::EMPTY };
        }
        let step = |p: i64| inc.base + if inc.tie { (p + inc.base) & 1 } else { 0 };
        let delta = [step(0), step(1)];
        Summary { bad: false, delta, lo: delta, hi: delta }
    }

    /// This run, then `next`: from parity p, `next` starts from the parity
    /// of p + Δ(p).
    pub fn then(&self, next: &Summary) -> Summary {
        let mut out = Summary { bad: self.bad || next.bad, ..Summary::EMPTY };
        for p in 0..2 {
            let d = self.delta[p];
            let q = ((p as i64 + d) & 1) as usize;
            out.delta[p] = d + next.delta[q];
            out.lo[p] = self.lo[p].min(d + next.lo[q]);
            out.hi[p] = self.hi[p].max(d + next.hi[q]);
        }
        out
    }

    /// The summary of `terms` in binade `e`, as the kernel composes it:
    /// [`WG`] contiguous chunks, then a tree (strides 1, 2, 4, ...).
    pub fn of_terms(terms: &[f64], e: i32) -> Summary {
        let chunk = SEGMENT / WG;
        let mut lanes: Vec<Summary> = (0..WG)
            .map(|l| {
                let part = terms.get((l * chunk).min(terms.len())..((l + 1) * chunk).min(terms.len())).unwrap_or(&[]);
                part.iter().fold(Summary::EMPTY, |s, &t| s.then(&Summary::of(increment(t, e))))
            })
            .collect();
        let mut stride = 1;
        while stride < WG {
            for a in (0..WG).step_by(2 * stride) {
                lanes[a] = lanes[a].then(&lanes[a + stride]);
            }
            stride *= 2;
        }
        lanes[0]
    }

    /// m after the run, when every prefix keeps m strictly inside the
    /// binade with room for the exact value (module doc); else None.
    pub fn apply(&self, m: i64) -> Option<i64> {
        let p = (m & 1) as usize;
        (!self.bad && m + self.lo[p] > LOW && m + self.hi[p] < HIGH).then(|| m + self.delta[p])
    }
}

/// The binade exponent and integer significand m (2^52 <= m < 2^53) of a
/// positive, finite, normal sum; None for any other.
pub fn decompose(s: f64) -> Option<(i32, i64)> {
    if !(s > 0.0 && s.is_finite()) {
        return None;
    }
    let bits = s.to_bits();
    let biased = ((bits >> 52) & 0x7FF) as i32;
    if biased == 0 {
        return None;
    }
    Some((biased - 1023, ((bits & ((1 << 52) - 1)) | (1 << 52)) as i64))
}

/// m 2^(e-52), exactly (2^52 <= m < 2^53, e a normal exponent).
pub fn compose(e: i32, m: i64) -> f64 {
    f64::from_bits((((e + 1023) as u64) << 52) | (m as u64 & ((1 << 52) - 1)))
}

/// The estimated binade of a segment starting after terms summing to
/// `before`.
pub fn binade_of(before: f64) -> i32 {
    decompose(before).map_or(NO_BINADE, |(e, _)| e)
}

/// The kernels' three steps in Rust: libvmaf's `sum += t` over `terms` from 0,
/// and how many segments took the slow path.
pub fn model_counting(terms: &[f64]) -> (f64, usize) {
    let segments: Vec<&[f64]> = terms.chunks(SEGMENT).collect();
    // 1. Totals (the kernel adds in a tree: only an estimate).
    let totals: Vec<f64> = segments.iter().map(|seg| seg.iter().sum()).collect();
    // 2. Estimated binades and summaries.
    let mut before = 0.0;
    let mut records = Vec::with_capacity(segments.len());
    for (seg, total) in segments.iter().zip(&totals) {
        let e = binade_of(before);
        let summary = if e == NO_BINADE { Summary { bad: true, ..Summary::EMPTY } } else { Summary::of_terms(seg, e) };
        records.push((e, summary));
        before += total;
    }
    // 3. The walk.
    let (mut s, mut slow) = (0.0f64, 0);
    for (seg, (e, summary)) in segments.iter().zip(&records) {
        let fast = decompose(s).filter(|&(se, _)| se == *e).and_then(|(_, m)| summary.apply(m));
        match fast {
            Some(m) => s = compose(*e, m),
            None => {
                slow += 1;
                for &t in *seg {
                    s += t;
                }
            }
        }
    }
    (s, slow)
}

/// [`model_counting`]'s sum.
pub fn model(terms: &[f64]) -> f64 {
    model_counting(terms).0
}

/// Refuses a layout the kernels' 32-bit word indices cannot address.
pub fn check_records(records: usize) -> Result<()> {
    if records.checked_mul(RECORD_WORDS).is_none_or(|w| w >= u32::MAX as usize) {
        bail!("{records} segments of SSIM terms are too many for the exact sum's records");
    }
    Ok(())
}

/// Term sequences that take every path of the walk, for the tests here
/// and the kernels' tests (tests/ssim.rs).
pub mod samples {
    use super::SEGMENT;

    /// xorshift uniforms in [0, 1).
    pub fn uniforms(seed: u64) -> impl FnMut() -> f64 {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// Terms like SSIM's l, c, s and their product: mostly near 1, some
    /// spread down to `1 - spread` (negative for spread > 1).
    pub fn ssim_like(n: usize, seed: u64, spread: f64) -> Vec<f64> {
        let mut u = uniforms(seed);
        (0..n).map(|_| 1.0 - spread * u() * u()).collect()
    }

    /// From 2^20 + 5000, where the unit is 2^-32, terms of an odd number
    /// of half units, of either sign: every add a tie, decided by the
    /// running significand's parity.
    pub fn ties() -> Vec<f64> {
        let half = 2f64.powi(-33);
        let mut u = uniforms(3);
        let mut terms = vec![1.0; (1 << 20) + 5000];
        terms.extend(
            (0..50_000).map(|_| ((u() * 64.0).floor() * 2.0 + 1.0) * half * if u() < 0.3 { -1.0 } else { 1.0 }),
        );
        terms
    }

    /// Down through binades, across zero and below it.
    pub fn falling() -> Vec<f64> {
        let mut terms = vec![1.0; 40_000];
        terms.extend(std::iter::repeat_n(-1.7, 40_000));
        terms.extend(ssim_like(30_000, 5, 3.5));
        terms
    }

    /// Hovering at a binade's lower edge: prefixes dip below 2^15.
    pub fn hovering() -> Vec<f64> {
        let mut terms = vec![1.0; 32_768];
        let mut u = uniforms(9);
        terms.extend((0..40_000).map(|_| (u() - 0.5) * 4.0));
        terms
    }

    /// Ones, a segment of which ends exactly at 2^16, where m would be
    /// 2^53, the next binade's first value.
    pub fn edge_up() -> Vec<f64> {
        let mut terms = vec![1.0; 65_536];
        terms.extend(ssim_like(3000, 1, 0.5));
        terms
    }

    /// Down to 2^15 + u (u = 2^-37) by terms the fast path takes, then -1.5
    /// u and -0.25 u: the exact 2^15 - u/2 is a value of the binade below,
    /// where the unit is u/2, and the next add rounds to 2^15 - u there; in
    /// the binade above they would both round to 2^15.
    pub fn edge_down() -> Vec<f64> {
        let u = 2f64.powi(-37);
        let mut terms = vec![1.0; 40 * SEGMENT];
        terms[40 * SEGMENT - 1] = -959.0; // 40000 = 2^15 + 7232
        terms.extend(std::iter::repeat_n(-7.0625, SEGMENT - 1));
        terms.push(-7.0625 + u);
        terms.push(-1.5 * u);
        terms.push(-0.25 * u);
        terms.extend(std::iter::repeat_n(7.0625, SEGMENT - 2));
        terms
    }

    /// Terms far above and below the sum's unit, subnormals, -0, and
    /// (with `nonfinite`) an infinity and a NaN.
    pub fn odd(nonfinite: Option<f64>) -> Vec<f64> {
        let mut terms = ssim_like(20_000, 11, 0.5);
        terms[3_000] = 1e30;
        terms[6_000] = -1e30;
        terms[9_000] = 1e-300;
        terms[9_001] = f64::from_bits(3);
        terms[9_002] = -0.0;
        if let Some(v) = nonfinite {
            terms[15_000] = v;
        }
        terms
    }

    /// Every sequence above, named.
    pub fn all() -> Vec<(&'static str, Vec<f64>)> {
        vec![
            ("one term", vec![0.75]),
            ("one segment and one", ssim_like(SEGMENT + 1, 2, 0.9)),
            ("ssim-like, two batches of records", ssim_like(300 * SEGMENT + 5, 4, 1.2)),
            ("zeros", vec![0.0; 3000]),
            ("ties", ties()),
            ("falling", falling()),
            ("hovering", hovering()),
            ("edge up", edge_up()),
            ("edge down", edge_down()),
            ("odd terms", odd(None)),
            ("infinity", odd(Some(f64::INFINITY))),
            ("nan", odd(Some(f64::NAN))),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::samples::*;
    use super::*;

    fn plain(terms: &[f64]) -> f64 {
        terms.iter().fold(0.0, |s, &t| s + t)
    }

    fn same(terms: &[f64]) {
        let (got, want) = (model(terms), plain(terms));
        assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "{got:e} vs {want:e}");
    }

    #[test]
    fn the_walk_is_the_sequential_sum() {
        for seed in 0..40 {
            let n = 1 + (seed as usize * 7919) % 60_000;
            same(&ssim_like(n, seed, [0.1, 0.9, 1.8, 3.0][seed as usize % 4]));
        }
        for (_, terms) in all() {
            same(&terms);
        }
    }

    #[test]
    fn most_segments_of_a_map_go_at_once() {
        let terms = ssim_like(1910 * 1070, 7, 0.5);
        let (s, slow) = model_counting(&terms);
        assert_eq!(s.to_bits(), plain(&terms).to_bits());
        // The first segment (from 0) and about one per binade crossed.
        let segments = terms.len().div_ceil(SEGMENT);
        assert!(slow <= 30, "{slow} of {segments} segments slow");
    }

    #[test]
    fn ties_go_to_even_as_the_addition_does() {
        let (s, slow) = model_counting(&ties());
        assert_eq!(s.to_bits(), plain(&ties()).to_bits());
        // Climbing from 0: the first segments (increments of 1.0 too large
        // below 2^13) and one at each binade crossed; then every segment
        // of ties at once.
        assert!(slow < 40, "{slow}");
    }

    #[test]
    fn a_run_that_touches_a_binades_edge_takes_the_real_addition() {
        same(&edge_up());
        same(&edge_down());
        let (_, slow) = model_counting(&edge_down());
        assert!(slow < 25, "{slow}"); // the segment down went at once
    }

    #[test]
    fn the_tree_composes_to_the_run_in_order() {
        let terms = ssim_like(1000, 13, 2.5);
        for e in [9, 10, 11] {
            let tree = Summary::of_terms(&terms, e);
            let run = terms.iter().fold(Summary::EMPTY, |s, &t| s.then(&Summary::of(increment(t, e))));
            assert_eq!(tree, run);
        }
    }

    #[test]
    fn an_increment_is_the_addition_in_the_binade() {
        // s = m u for m of either parity, t of many scales and signs: m +
        // increment is s + t's significand whenever s + t stays in the binade.
        let mut u = uniforms(17);
        let mut checked = 0;
        for k in 0..20_000 {
            let e = 20;
            let m = (1i64 << 52) + 1_000_000 + (u() * 1e15) as i64;
            let s = compose(e, m);
            let scale = 2f64.powi(-40 + (k % 50));
            let t = (u() - 0.5) * scale;
            let t = if k % 3 == 0 { (t / 2f64.powi(-33)).round() * 2f64.powi(-33) } else { t };
            if let Some(got) = Summary::of(increment(t, e)).apply(m).map(|m| compose(e, m)) {
                assert_eq!(got.to_bits(), (s + t).to_bits(), "s {s:e} t {t:e}");
                checked += 1;
            }
        }
        assert!(checked > 10_000, "{checked}");
    }

    #[test]
    fn gpus_walk_large_maps_in_parallel_and_cpu_drivers_inline() {
        use crate::features::gpu::device_of_type;
        use std::ffi::OsStr;
        let (cpu, gpu) = (device_of_type(Some("cpu")), device_of_type(Some("discrete-gpu")));
        let large = 1910 * 1070;
        assert_eq!(exact_for(&gpu, None, large).unwrap(), Exact::Parallel);
        assert_eq!(exact_for(&gpu, None, PARALLEL_FROM - 1).unwrap(), Exact::Inline);
        assert_eq!(exact_for(&gpu, Some(OsStr::new("")), PARALLEL_FROM).unwrap(), Exact::Parallel);
        assert_eq!(exact_for(&cpu, None, large).unwrap(), Exact::Inline);
        // The variable overrides the driver and the size, both ways.
        assert_eq!(exact_for(&cpu, Some(OsStr::new("parallel")), 10).unwrap(), Exact::Parallel);
        assert_eq!(exact_for(&gpu, Some(OsStr::new("inline")), large).unwrap(), Exact::Inline);
        let err = exact_for(&gpu, Some(OsStr::new("serial")), large).unwrap_err().to_string();
        assert!(err.contains(EXACT_VAR) && err.contains("`inline`") && err.contains("`parallel`"), "{err}");
    }

    #[test]
    fn too_many_records_are_refused() {
        assert!(check_records(7).is_ok());
        assert!(check_records(u32::MAX as usize).is_err());
    }
}
