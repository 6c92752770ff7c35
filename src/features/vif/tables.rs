//! The constants both VIF extractors are built from: integer VIF's filter
//! taps and log2 table (integer_vif.h, integer_vif.c `log_generate`) and
//! float VIF's Gaussian filters (vif_tools.c `vif_get_filter`). Computed
//! once on the host; the GPU pipelines upload these very values, so every
//! dialect filters with the CPU reference's bits.

/// integer_vif.h `vif_filter1d_table`: the 16-bit taps of each scale
/// (17, 9, 5 and 3 taps; each sums to 65536).
pub const INT_FILTERS: [&[u16]; 4] = [
    &[489, 935, 1640, 2640, 3896, 5274, 6547, 7455, 7784, 7455, 6547, 5274, 3896, 2640, 1640, 935, 489],
    &[1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244],
    &[3571, 16004, 26386, 16004, 3571],
    &[10904, 43728, 10904],
];

/// integer_vif.c's `sigma_nsq` (`65536 << 1`): the neural noise variance in
/// the fixed-point scale of the filtered variances.
pub const SIGMA_NSQ: i32 = 65536 << 1;

/// integer_vif.c `log_generate`: `round(log2f(i) * 2048)` for i in
/// 32767..65536, zero elsewhere (65537 entries, as libvmaf's table). Only
/// 32768..65535 are ever read: [`log2_32`] and [`log2_64`] normalise their
/// argument to 16 significant bits. `f32::log2` is glibc's `log2f`, which
/// libvmaf calls; `f64::round` rounds half away from zero, as C's `round`.
pub fn log2_table() -> Vec<u16> {
    let mut table = vec![0u16; 65537];
    for (i, entry) in table.iter_mut().enumerate().take(65536).skip(32767) {
        *entry = f64::from((i as f32).log2() * 2048.0).round() as u16;
    }
    table
}

/// The part of [`log2_table`] the lookups read, 32768..65535, as the GPU
/// kernels take it: entry 32768 + j in the low 16 bits of word j / 2 when
/// j is even, in its high 16 bits when odd (16384 words, 64 KiB: on
/// lavapipe the strip kernel reads it as a uniform block, which llvmpipe
/// gathers where it loads a storage buffer lane by lane).
pub fn log2_table_packed() -> Vec<u32> {
    let table = log2_table();
    table[32768..65536].chunks_exact(2).map(|pair| u32::from(pair[0]) | (u32::from(pair[1]) << 16)).collect()
}

/// integer_vif.h `log2_32`: 2048 log2(x) from the table, x >= 2^16
/// (normalised to its 16 leading bits).
#[inline]
pub fn log2_32(table: &[u16], x: u32) -> i32 {
    let k = 16 - x.leading_zeros() as i32;
    i32::from(table[(x >> k) as usize]) + 2048 * k
}

/// integer_vif.h `log2_64`: 2048 log2(x) from the table, x >= 2^17.
#[inline]
pub fn log2_64(table: &[u16], x: u64) -> i32 {
    let k = 48 - x.leading_zeros() as i32;
    i32::from(table[(x >> k) as usize]) + 2048 * k
}

/// vif_tools.h `valid_kernelscales`: the only `vif_kernelscale` values
/// float VIF computes with (`compute_vif` fails on any other).
pub const VALID_KERNELSCALES: [f32; 21] = [
    1.0,
    1.0 / 2.0,
    3.0 / 2.0,
    2.0,
    2.0 / 3.0,
    24.0 / 10.0,
    360.0 / 97.0,
    4.0 / 3.0,
    3.5 / 3.0,
    3.75 / 3.0,
    4.25 / 3.0,
    5.0 / 3.0,
    3.0,
    1.0 / 2.25,
    1.4746,
    1.54,
    1.6,
    1.06667,
    0.711111,
    0.740740,
    1.111111,
];

/// vif_tools.c `vif_validate_kernelscale`: within 1e-3 of a valid value,
/// compared in f32 as libvmaf does.
pub fn valid_kernelscale(kernelscale: f64) -> bool {
    let k = kernelscale as f32;
    VALID_KERNELSCALES.iter().any(|&v| f64::from((k - v).abs()) < 1e-3)
}

/// vif_tools.c `vif_get_filter_size`: `(2^(4 - scale) + 1) * kernelscale`
/// rounded up to an odd number, at least 3.
pub fn float_filter_size(scale: usize, kernelscale: f64) -> usize {
    let n = ((1 << (4 - scale)) + 1) as f32;
    let ceiling = f64::from(n * kernelscale as f32).ceil() as i32;
    let odd = if ceiling % 2 == 0 { ceiling + 1 } else { ceiling };
    odd.max(3) as usize
}

/// vif_tools.c `vif_get_filter`: a normalised Gaussian of
/// [`float_filter_size`] taps with standard deviation `size / 5`, computed
/// exactly as `get_1d_gaussian_kernel` / `get_gaussian_pdf` do (the
/// exponent in double, each tap rounded to f32, their f32 sum, each tap
/// divided by it).
pub fn float_filter(scale: usize, kernelscale: f64) -> Vec<f32> {
    let size = float_filter_size(scale, kernelscale);
    let stdev = size as f32 / 5.0f32;
    let k = (size as i32 - 1) / 2;
    let mut taps: Vec<f32> = (0..size as i32).map(|i| gaussian_pdf((i - k) as f32, 0.0, stdev)).collect();
    let sum = taps.iter().fold(0.0f32, |s, &t| s + t);
    for t in &mut taps {
        *t /= sum;
    }
    taps
}

/// vif_tools.c `get_gaussian_pdf`, its mixed float/double arithmetic kept.
fn gaussian_pdf(x: f32, mean: f32, stdev: f32) -> f32 {
    let d = f64::from(x - mean);
    let s = f64::from(stdev);
    let num = (-0.5 * d / s * d / s).exp() as f32;
    let den = (1.0 / (s * (2.0 * std::f64::consts::PI).sqrt())) as f32;
    num / den
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_filters_sum_to_one_in_16_bits() {
        for taps in INT_FILTERS {
            assert_eq!(taps.iter().map(|&t| u32::from(t)).sum::<u32>(), 65536);
        }
    }

    #[test]
    fn log2_lookup_is_2048_log2() {
        let t = log2_table();
        assert_eq!(t[32768], 15 * 2048);
        assert_eq!(t[65535], 32768); // 2048 * 15.99998 rounds to 2048 * 16
        assert_eq!(log2_32(&t, 1 << 17), 17 * 2048);
        assert_eq!(log2_64(&t, 1 << 40), 40 * 2048);
        // 3 * 2^20: 2048 log2 = 44206.003
        assert_eq!(log2_64(&t, 3 << 20), 44206);
        assert_eq!(log2_32(&t, 3 << 20), 44206);
    }

    #[test]
    fn the_packed_table_holds_every_entry_the_lookups_read() {
        let (t, packed) = (log2_table(), log2_table_packed());
        assert_eq!(packed.len() * 4, 65536);
        for (j, &entry) in t[32768..65536].iter().enumerate() {
            assert_eq!((packed[j >> 1] >> ((j & 1) * 16)) & 0xffff, u32::from(entry), "entry {}", 32768 + j);
        }
    }

    #[test]
    fn float_filter_sizes_follow_the_scale_and_kernelscale() {
        assert_eq!((0..4).map(|s| float_filter_size(s, 1.0)).collect::<Vec<_>>(), [17, 9, 5, 3]);
        assert_eq!((0..4).map(|s| float_filter_size(s, 0.5)).collect::<Vec<_>>(), [9, 5, 3, 3]);
        assert_eq!((0..4).map(|s| float_filter_size(s, 4.0)).collect::<Vec<_>>(), [69, 37, 21, 13]);
        let f = float_filter(3, 1.0);
        assert_eq!(f.len(), 3);
        assert!((f.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert_eq!(f[0], f[2]);
    }

    #[test]
    fn kernelscales_are_checked_as_libvmaf_does() {
        assert!(valid_kernelscale(1.0) && valid_kernelscale(1.0 / 3.0 * 4.0) && valid_kernelscale(1.0667));
        assert!(!valid_kernelscale(1.01) && !valid_kernelscale(4.0) && !valid_kernelscale(0.1));
    }
}
