//! cambi.c `spatial_pooling`: the mean of the `k` largest c-values of a
//! scale. libvmaf moves them to the front with `quick_select` and adds them
//! in double in the order it left them.
//!
//! That order only matters when the sum rounds. Every c-value is 0 or a
//! float in [0.5, 16384) (see [`fixed`]), so a multiple of 2^-24; while the
//! total of the k largest stays below 2^29, every partial sum is a multiple
//! of 2^-24 below 2^29, which a double holds exactly, so libvmaf's sum *is*
//! the exact sum, whatever the order. [`spatial_pooling`] therefore adds the
//! k largest exactly in 64-bit fixed point (the GPU pipeline does the same)
//! and runs libvmaf's own quick_select and sequential sum only when the
//! total reaches 2^29, where the order decides the rounding.

/// Fixed-point units per 1.0: 2^24.
pub const FIXED_ONE: f64 = 16_777_216.0;
/// The exact sum below which libvmaf's double sum cannot round, in units.
pub const EXACT_LIMIT: u64 = 1 << 53;

/// A c-value in units of 2^-24, or `None` outside [0.5, 16384) ∪ {0}.
///
/// c_value_pixel's value is `float(w·p0·p) · lut[p0 + p]` with weight
/// w in 1..=9, the centre's own count p0 >= 1 and p >= 1 (else it is 0):
/// w·p0·p / (p0 + p) >= 1/2, equal only for w = p0 = p = 1 (exactly 0.5),
/// otherwise >= 2/3 before two roundings of 2^-24 each; and at most
/// 9·(p0 + p)/4 <= 9·4225/4 < 9507 (windows hold at most 65² pixels).
/// Such a float is a multiple of 2^-24 below 2^38 units.
#[inline(always)]
pub fn fixed(v: f32) -> Option<u64> {
    if v == 0.0 {
        Some(0)
    } else if (0.5..16384.0).contains(&v) {
        Some((f64::from(v) * FIXED_ONE) as u64)
    } else {
        None
    }
}

/// cambi.c `quick_select`: partitions `arr` so that its first `k` elements
/// are the `k` largest, exactly as libvmaf's Hoare loop leaves them.
pub fn quick_select(arr: &mut [f32], k: usize) {
    let n = arr.len();
    if n == k {
        return;
    }
    let (mut left, mut right) = (0isize, n as isize - 1);
    let at = |i: isize| i as usize;
    while left < right {
        let pivot = arr[k];
        let (mut i, mut j) = (left, right);
        loop {
            while arr[at(i)] > pivot {
                i += 1;
            }
            while arr[at(j)] < pivot {
                j -= 1;
            }
            if i <= j {
                arr.swap(at(i), at(j));
                i += 1;
                j -= 1;
            }
            if i > j {
                break;
            }
        }
        if j < k as isize {
            left = i;
        }
        if (k as isize) < i {
            right = j;
        }
    }
}

/// The exact sum of the `k` largest values, in units of 2^-24, if every
/// value has a fixed-point form. `scratch` is kept from frame to frame.
pub fn topk_fixed_sum(values: &[f32], k: usize, scratch: &mut Vec<f32>) -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { topk_fixed_sum_avx2(values, k, scratch) };
    }
    topk_fixed_sum_impl(values, k, scratch)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn topk_fixed_sum_avx2(values: &[f32], k: usize, scratch: &mut Vec<f32>) -> Option<u64> {
    topk_fixed_sum_impl(values, k, scratch)
}

/// Sums below this are exact in double whatever the order: every value is
/// a multiple of 2^-24, so a double holds every partial sum below 2^29
/// exactly, and a computed total below 2^28 had no partial sum at or above
/// 2^29 to round (the values are not negative).
const EXACT_DOUBLE_SUM: f64 = (1u64 << 28) as f64;

#[inline(always)]
fn topk_fixed_sum_impl(values: &[f32], k: usize, scratch: &mut Vec<f32>) -> Option<u64> {
    // One pass, 4 doubles and counters wide: the sum, how many are not 0,
    // and whether every value is 0 or in [0.5, 16384) (by its bits).
    const LO: u32 = 0x3F00_0000; // 0.5
    const HI: u32 = 0x4680_0000; // 16384
    let (mut sum, mut nonzero, mut outside) = ([0.0f64; 4], [0usize; 4], [0u32; 4]);
    let chunks = values.chunks_exact(4);
    let tail = chunks.remainder();
    for c in chunks {
        for lane in 0..4 {
            let bits = c[lane].to_bits();
            sum[lane] += f64::from(c[lane]);
            nonzero[lane] += usize::from(bits != 0);
            outside[lane] |= u32::from(bits != 0 && !(LO..HI).contains(&bits));
        }
    }
    for &v in tail {
        let bits = v.to_bits();
        sum[0] += f64::from(v);
        nonzero[0] += usize::from(bits != 0);
        outside[0] |= u32::from(bits != 0 && !(LO..HI).contains(&bits));
    }
    if outside.iter().any(|&o| o != 0) {
        return None;
    }
    let (total, nonzero) = (sum.iter().sum::<f64>(), nonzero.iter().sum::<usize>());
    if nonzero <= k {
        // The k largest are every non-zero value and zeros.
        return if total < EXACT_DOUBLE_SUM {
            Some((total * FIXED_ONE) as u64)
        } else {
            Some(values.iter().map(|&v| fixed(v).unwrap_or_default()).sum())
        };
    }
    scratch.clear();
    scratch.extend(values.iter().copied().filter(|&v| v != 0.0));
    // Non-negative floats order as their bit patterns.
    scratch.select_nth_unstable_by_key(k - 1, |v| std::cmp::Reverse(v.to_bits()));
    Some(scratch[..k].iter().map(|&v| fixed(v).unwrap_or_default()).sum())
}

/// cambi.c `spatial_pooling` for `k` (from `clip((int)(topk * n), 1, n)`):
/// the mean of the `k` largest c-values, the very double libvmaf computes.
/// `values` may be reordered.
pub fn spatial_pooling(values: &mut [f32], k: usize, scratch: &mut Vec<f32>) -> f64 {
    if let Some(total) = topk_fixed_sum(values, k, scratch)
        && total < EXACT_LIMIT
    {
        return total as f64 / FIXED_ONE / k as f64;
    }
    quick_select(values, k);
    let sum = values[..k].iter().fold(0.0f64, |acc, &v| acc + f64::from(v));
    sum / k as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn libvmaf(values: &[f32], k: usize) -> f64 {
        let mut v = values.to_vec();
        quick_select(&mut v, k);
        v[..k].iter().fold(0.0f64, |acc, &x| acc + f64::from(x)) / k as f64
    }

    #[test]
    fn quick_select_puts_the_k_largest_first() {
        let values: Vec<f32> = (0..1000).map(|i| ((i * 7919) % 101) as f32 * 0.75).collect();
        for k in [1, 2, 10, 500, 999, 1000] {
            let mut v = values.clone();
            quick_select(&mut v, k);
            let mut sorted = values.clone();
            sorted.sort_by(|a, b| b.total_cmp(a));
            let mut front = v[..k].to_vec();
            front.sort_by(|a, b| b.total_cmp(a));
            assert_eq!(front, sorted[..k], "k = {k}");
        }
    }

    #[test]
    fn the_exact_sum_is_libvmafs_sum() {
        // c-value-like numbers: weight * p0 * p * (1 / (p0 + p)).
        let lut = super::super::tables::reciprocal_lut();
        let mut values = Vec::new();
        for i in 0..20_000usize {
            let (p0, p, w) = (1 + i % 1000, i * 7 % 900, 1 + i % 9);
            values.push(if i % 3 == 0 || p == 0 { 0.0 } else { (w * p0 * p) as f32 * lut[p0 + p] });
        }
        for k in [1, 7, 6_000, 13_334, 19_999, 20_000] {
            let mut v = values.clone();
            let ours = spatial_pooling(&mut v, k, &mut Vec::new());
            assert_eq!(ours.to_bits(), libvmaf(&values, k).to_bits(), "k = {k}");
        }
    }

    #[test]
    fn large_sums_fall_back_to_libvmafs_order() {
        // 2^29 / 9000 ≈ 60k values of ~9000 reach the limit.
        let values: Vec<f32> = (0..70_000).map(|i| 9000.0 + (i % 1000) as f32 * 0.001_953_125).collect();
        let k = 65_000;
        assert!(topk_fixed_sum(&values, k, &mut Vec::new()).unwrap() >= EXACT_LIMIT);
        let mut v = values.clone();
        assert_eq!(spatial_pooling(&mut v, k, &mut Vec::new()).to_bits(), libvmaf(&values, k).to_bits());
    }

    #[test]
    fn fixed_point_covers_every_c_value() {
        assert_eq!(fixed(0.0), Some(0));
        assert_eq!(fixed(0.5), Some(1 << 23));
        assert_eq!(fixed(1.0f32 + f32::EPSILON), Some((1 << 24) + 2));
        assert_eq!(fixed(0.25), None);
        assert_eq!(fixed(20000.0), None);
        // Every (weight, p0, p) a 65x65 window allows at its extremes.
        let lut = super::super::tables::reciprocal_lut();
        for w in 1..=9usize {
            for (p0, p) in [(1, 1), (1, 2), (2, 1), (1, 4224), (4224, 1), (2112, 2113), (2113, 2112)] {
                let v = (w * p0 * p) as f32 * lut[p0 + p];
                assert!(fixed(v).is_some(), "{w} {p0} {p}: {v}");
            }
        }
    }
}
