//! libvmaf's sequential sums on a parallel device, bit for bit.
//!
//! `_iqa_ssim` adds each pixel's term to one f64 accumulator in raster
//! order (`ssim_sum += l * c * s`), hundreds of thousands to millions of
//! dependent adds, then returns the f32 `(float)(sum / (w * h))`. A GPU
//! adds in another order (partial sums, then a tree), and f64 addition is not
//! associative, so its sum `T` differs from libvmaf's `S` in the last bits.
//! But only the f32 mean is kept, and `S` cannot be far from `T`:
//!
//! - each of libvmaf's adds rounds by at most 2^-53 of its result, and its
//!   k-th partial sum is at most the sum of the first k magnitudes, so
//!   `|S - P| <= 2^-53 (1 + 1e-7) W`, with `P` the exact sum and
//!   `W = Σ_i (n - i) |p_i|` (term i is in the last n - i partial sums);
//! - the device's sum, of depth at most `width + rows + 16` (a partial's
//!   adds: a 64-pixel row tree on GPUs, at most 32 pixels down a column on
//!   CPU drivers; a work item's partials; an 8-level tree; `gpu.rs`
//!   checks the depth per map), has
//!   `|T - P| <= 2^-53 (width + rows + 16) A (1 + ε)`, `A = Σ |p_i|`;
//! - the device computes `A` and `W` too (positive terms: their relative
//!   errors are below 1e-12), so [`error_bound`] `E = 2^-53 (1.01 W + 1.01
//!   (width + rows + 16) A)` bounds `|S - T|`.
//!
//! `x -> (float)(x / n)` is monotone, so if both ends of `[T - E, T + E]`
//! give the same float, that float is libvmaf's ([`resolve`]). E is about
//! 1.2e-10 of the sum for a 1080p map of means near 1 (W, the partial
//! sums' magnitudes, dominates), a float's step there 6e-8: a mean lands
//! this close to a float rounding boundary about once in 240
//! (docs/features/ssim.md, measured). For those the device has already added the terms
//! one after the other as libvmaf does (its own check uses 2 E, so it
//! always covers the host's), and the host takes that sum.

use anyhow::{Result, bail};

/// 2^-53: the unit roundoff of f64.
const UNIT: f64 = 1.0 / 9_007_199_254_740_992.0;

/// What the device reports for one metric's sum over a `width x rows` map.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeviceSum {
    /// Σ p_i, added by rows and then a tree.
    pub sum: f64,
    /// Σ |p_i|.
    pub magnitudes: f64,
    /// Σ (n - i) |p_i|.
    pub weighted: f64,
    /// Σ p_i added one after the other in raster order, as libvmaf adds
    /// them, where the device found the mean too close to call.
    pub sequential: Option<f64>,
}

/// `E`: how far libvmaf's sequential sum can be from the device's (module
/// documentation).
pub fn error_bound(magnitudes: f64, weighted: f64, width: usize, rows: usize) -> f64 {
    UNIT * (1.01 * weighted + 1.01 * (width + rows + 16) as f64 * magnitudes)
}

/// The f32 mean `(float)(S / (width * rows))` libvmaf computes from its
/// sequential sum `S`, from what the device reports: from the device's sum
/// when every sum within [`error_bound`] of it gives the same float, else
/// from the device's sequential sum (an error if it did not make one).
pub fn resolve(d: &DeviceSum, width: usize, rows: usize) -> Result<f32> {
    let n = (width * rows) as f64;
    let e = error_bound(d.magnitudes, d.weighted, width, rows);
    // Round the ends outwards, so the interval surely holds [T - E, T + E].
    let lo = (d.sum - e).next_down();
    let hi = (d.sum + e).next_up();
    let (a, b) = ((lo / n) as f32, (hi / n) as f32);
    if !a.is_nan() && a.to_bits() == b.to_bits() {
        return Ok(a);
    }
    match d.sequential {
        Some(s) => Ok((s / n) as f32),
        None => bail!(
            "the device found the mean of {width}x{rows} terms decided (sum {}, bound {e:e}), the host did not: \
             its sequential sum is missing",
            d.sum
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A generator of terms like SSIM's: mostly in (0, 1], some negative.
    fn terms(n: usize, seed: u64, spread: f64) -> Vec<f64> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let u = (x >> 11) as f64 / (1u64 << 53) as f64;
                1.0 - spread * u
            })
            .collect()
    }

    /// The device's reports, computed as the kernels do: partial sums
    /// (`ssim_vertical_strips`: 32 pixels down a column, top to bottom;
    /// with `tree`, `ssim_vertical`: each row's 64-pixel blocks by a tree
    /// of strides 32 .. 1), the partials in chunks of 256, then a tree.
    fn device_shaped(p: &[f64], width: usize, sequential: bool, tree: bool) -> DeviceSum {
        let n = p.len();
        let rows = n / width;
        let triple = |i: usize| [p[i], p[i].abs(), (n - i) as f64 * p[i].abs()];
        let mut parts = Vec::new();
        if tree {
            for y in 0..rows {
                for bx in 0..width.div_ceil(64) {
                    let mut lanes: Vec<[f64; 3]> = (0..64)
                        .map(|l| if bx * 64 + l < width { triple(y * width + bx * 64 + l) } else { [0.0; 3] })
                        .collect();
                    let mut stride = 32;
                    while stride > 0 {
                        for l in 0..stride {
                            let above = lanes[l + stride];
                            for (v, a) in lanes[l].iter_mut().zip(above) {
                                *v += a;
                            }
                        }
                        stride /= 2;
                    }
                    parts.push(lanes[0]);
                }
            }
        } else {
            for i in 0..rows.div_ceil(32) {
                for x in 0..width {
                    let mut sum = [0.0f64; 3];
                    for y in 32 * i..(32 * i + 32).min(rows) {
                        for (v, t) in sum.iter_mut().zip(triple(y * width + x)) {
                            *v += t;
                        }
                    }
                    parts.push(sum);
                }
            }
        }
        let mut red = vec![[0.0f64; 3]; 256];
        for (r, part) in parts.iter().enumerate() {
            for (v, p) in red[r % 256].iter_mut().zip(part) {
                *v += p;
            }
        }
        let mut stride = 128;
        while stride > 0 {
            for i in 0..stride {
                let above = red[i + stride];
                for (v, a) in red[i].iter_mut().zip(above) {
                    *v += a;
                }
            }
            stride /= 2;
        }
        let seq = sequential.then(|| p.iter().fold(0.0, |s, &v| s + v));
        DeviceSum { sum: red[0][0], magnitudes: red[0][1], weighted: red[0][2], sequential: seq }
    }

    fn device(p: &[f64], width: usize, sequential: bool) -> DeviceSum {
        device_shaped(p, width, sequential, false)
    }

    #[test]
    fn the_tree_sum_gives_libvmafs_float_or_says_it_cannot() {
        let (mut decided, mut total) = (0, 0);
        for seed in 0..400 {
            let (width, rows) = (97 + seed as usize % 50, 61 + seed as usize % 40);
            let p = terms(width * rows, seed, if seed % 3 == 0 { 1.5 } else { 0.2 });
            let want = (p.iter().fold(0.0, |s, &v| s + v) / (width * rows) as f64) as f32;
            for tree in [false, true] {
                let d = device_shaped(&p, width, false, tree);
                total += 1;
                match resolve(&d, width, rows) {
                    Ok(got) => {
                        decided += 1;
                        assert_eq!(got.to_bits(), want.to_bits(), "seed {seed}");
                    }
                    Err(e) => assert!(e.to_string().contains("sequential sum is missing"), "{e}"),
                }
            }
            // With the sequential sum at hand the answer is always libvmaf's.
            let d = device(&p, width, true);
            assert_eq!(resolve(&d, width, rows).unwrap().to_bits(), want.to_bits());
        }
        // Almost every mean is decided by the tree sum alone.
        assert!(decided >= total - 4, "{decided} of {total}");
    }

    #[test]
    fn a_mean_on_a_rounding_boundary_needs_the_sequential_sum() {
        // Terms whose mean is exactly halfway between two floats.
        let mid = (f64::from(0.75f32) + f64::from(0.75f32.next_up())) / 2.0;
        let p = vec![mid; 64 * 64];
        let d = device(&p, 64, false);
        assert!(resolve(&d, 64, 64).is_err());
        let d = device(&p, 64, true);
        let want = (p.iter().fold(0.0, |s, &v| s + v) / 4096.0) as f32;
        assert_eq!(resolve(&d, 64, 64).unwrap().to_bits(), want.to_bits());
    }

    #[test]
    fn nan_terms_take_the_sequential_sum() {
        let mut p = terms(30 * 20, 1, 0.5);
        p[77] = f64::NAN;
        assert!(resolve(&device(&p, 30, false), 30, 20).is_err());
        assert!(resolve(&device(&p, 30, true), 30, 20).unwrap().is_nan());
    }

    #[test]
    fn the_bound_covers_the_worst_sequential_error() {
        // Terms that make every sequential add round: 1 + 2^-53 repeatedly
        // lands on ties; the bound must cover the drift from the exact sum.
        let p: Vec<f64> = (0..10_000).map(|i| if i == 0 { 1.0 } else { UNIT * 1.5 }).collect();
        let seq = p.iter().fold(0.0, |s, &v| s + v);
        let exact = 1.0 + 9_999.0 * UNIT * 1.5;
        let d = device(&p, 100, false);
        assert!((seq - exact).abs() <= error_bound(d.magnitudes, d.weighted, 100, 100));
        assert!((d.sum - seq).abs() <= error_bound(d.magnitudes, d.weighted, 100, 100));
    }
}
