//! Exact integer sums over sample planes (squared differences, sums and
//! sums of squares), for the CPU reference's integer paths.
//!
//! Integer sums are exact in any order, so these add in narrow lanes
//! (the widest term times the lane's count stays below the lane's range)
//! and widen once per block: what keeps the compiler's vector code in
//! 32-bit lanes, 8 at a time with AVX2, instead of 64-bit ones. Each
//! public function picks the AVX2 build of its body at run time where the
//! CPU has it (the same integer results either way).

use crate::fixture::PlaneRef;

/// Samples per block whose 8-bit squares (at most 255² = 65,025) add up
/// in a `u32`: 65,536 x 65,025 < 2^32.
const U8_BLOCK: usize = 1 << 16;

/// Runs `$body` (an `#[inline(always)]` function) through a copy compiled
/// for AVX2 when the CPU has it, else as built for the baseline target.
macro_rules! dispatch_avx2 {
    ($body:ident, $avx2:ident, ($($arg:ident: $ty:ty),*) -> $ret:ty) => {{
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        fn $avx2($($arg: $ty),*) -> $ret {
            $body($($arg),*)
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { $avx2($($arg),*) };
        }
        $body($($arg),*)
    }};
}

/// Σ (a - b)² over two planes of one geometry, exactly (libvmaf's
/// integer_psnr.c sums the same integers in `uint64_t`).
pub fn squared_error(a: PlaneRef<'_>, b: PlaneRef<'_>) -> u64 {
    match (a, b) {
        (PlaneRef::U8 { data: a, .. }, PlaneRef::U8 { data: b, .. }) => squared_error_u8(a, b),
        (PlaneRef::U16 { data: a, .. }, PlaneRef::U16 { data: b, .. }) => squared_error_u16(a, b),
        _ => unreachable!("a fixture's reference and distorted share one geometry"),
    }
}

/// Σ (a - b)² of 8-bit samples.
pub fn squared_error_u8(a: &[u8], b: &[u8]) -> u64 {
    dispatch_avx2!(sse_u8, sse_u8_avx2, (a: &[u8], b: &[u8]) -> u64)
}

/// Σ (a - b)² of 16-bit samples (any depth up to 16: a square fits a
/// `u32`, as in integer_psnr.c's `uint32_t e * e`).
pub fn squared_error_u16(a: &[u16], b: &[u16]) -> u64 {
    dispatch_avx2!(sse_u16, sse_u16_avx2, (a: &[u16], b: &[u16]) -> u64)
}

/// (Σ v, Σ v², bits) of a plane, exactly; `bits` is every sample OR-ed
/// together (255 for 8-bit samples), the bound [`float_sums_are_exact`]
/// takes (see [`squared_error_and_bits`]).
pub fn sum_and_squares(plane: PlaneRef<'_>) -> (u64, u64, u32) {
    match plane {
        PlaneRef::U8 { data, .. } => {
            let (sum, squares) = sums_of_u8(data);
            (sum, squares, 255)
        }
        PlaneRef::U16 { data, .. } => {
            let (sum, squares, bits) = sums_of_u16(data);
            (sum, squares, u32::from(bits))
        }
    }
}

fn sums_of_u8(data: &[u8]) -> (u64, u64) {
    dispatch_avx2!(sums_u8, sums_u8_avx2, (data: &[u8]) -> (u64, u64))
}

fn sums_of_u16(data: &[u16]) -> (u64, u64, u16) {
    dispatch_avx2!(sums_u16, sums_u16_avx2, (data: &[u16]) -> (u64, u64, u16))
}

/// Σ (a - b)² over two planes of one geometry, exactly, and every sample
/// of both OR-ed together (255 for 8-bit samples): a bound of the largest
/// sample with its bit length (`bits < 2^k` exactly when every sample is),
/// taken in the same pass. A 10- or 12-bit file may hold words above its
/// bit depth's maximum, which libvmaf reads as they are (and squares in
/// float, rounding), so the bit depth alone does not bound them.
pub fn squared_error_and_bits(a: PlaneRef<'_>, b: PlaneRef<'_>) -> (u64, u32) {
    match (a, b) {
        (PlaneRef::U8 { data: a, .. }, PlaneRef::U8 { data: b, .. }) => (squared_error_u8(a, b), 255),
        (PlaneRef::U16 { data: a, .. }, PlaneRef::U16 { data: b, .. }) => {
            let (sse, bits) = squared_error_and_bits_u16(a, b);
            (sse, u32::from(bits))
        }
        _ => unreachable!("a fixture's reference and distorted share one geometry"),
    }
}

fn squared_error_and_bits_u16(a: &[u16], b: &[u16]) -> (u64, u16) {
    dispatch_avx2!(sse_bits_u16, sse_bits_u16_avx2, (a: &[u16], b: &[u16]) -> (u64, u16))
}

/// Whether libvmaf's float arithmetic over this plane is exact, so that
/// the integer sums give its very bits: every sample, and every difference
/// of two, below 2^12 (its float square, (v / s)² = v² / s² for libvmaf's
/// power-of-two scaler s, is then exact in f32), and `samples` squares of
/// those adding up below 2^53 (every partial sum of them, a multiple of
/// 1 / s², is then exact in f64, whatever the order). True at 8, 10 and 12
/// bits for any frame up to 2^29 samples; never at 16 bits.
pub fn float_sums_are_exact(samples: usize, max_value: u32) -> bool {
    max_value < 1 << 12 && (samples as u128) * u128::from(max_value).pow(2) < 1 << 53
}

#[inline(always)]
fn sse_u8(a: &[u8], b: &[u8]) -> u64 {
    assert_eq!(a.len(), b.len(), "planes of one geometry");
    let mut total = 0u64;
    for (a, b) in a.chunks(U8_BLOCK).zip(b.chunks(U8_BLOCK)) {
        let block: u32 = a
            .iter()
            .zip(b)
            .map(|(&x, &y)| {
                let d = u32::from(x.abs_diff(y));
                d * d
            })
            .sum();
        total += u64::from(block);
    }
    total
}

#[inline(always)]
fn sse_bits_u16(a: &[u16], b: &[u16]) -> (u64, u16) {
    assert_eq!(a.len(), b.len(), "planes of one geometry");
    let (sse, bits) = a.iter().zip(b).fold((0u64, 0u32), |(sse, bits), (&x, &y)| {
        let d = u32::from(x.abs_diff(y));
        (sse + u64::from(d * d), bits | u32::from(x | y))
    });
    (sse, bits as u16)
}

#[inline(always)]
fn sse_u16(a: &[u16], b: &[u16]) -> u64 {
    assert_eq!(a.len(), b.len(), "planes of one geometry");
    a.iter()
        .zip(b)
        .map(|(&x, &y)| {
            let d = u32::from(x.abs_diff(y));
            u64::from(d * d)
        })
        .sum()
}

#[inline(always)]
fn sums_u8(data: &[u8]) -> (u64, u64) {
    let (mut sum, mut squares) = (0u64, 0u64);
    for block in data.chunks(U8_BLOCK) {
        let (s, q) = block.iter().fold((0u32, 0u32), |(s, q), &v| {
            let v = u32::from(v);
            (s + v, q + v * v)
        });
        sum += u64::from(s);
        squares += u64::from(q);
    }
    (sum, squares)
}

#[inline(always)]
fn sums_u16(data: &[u16]) -> (u64, u64, u16) {
    // The OR in the sums' 64-bit lanes: one lane width keeps the loop in
    // vectors (a 16-bit OR beside them took a fifth off its speed).
    let (s, q, bits) = data.iter().fold((0u64, 0u64, 0u64), |(s, q, bits), &v| {
        let w = u64::from(v);
        (s + w, q + w * w, bits | w)
    });
    (s, q, bits as u16)
}

/// A frame of uniformly random samples over the whole range of its bit
/// depth, the extremes included (sample 0 is the maximum, sample 1 zero),
/// for tests of the integer paths against libvmaf's float loops.
#[cfg(test)]
pub(crate) fn random_frame(geometry: crate::fixture::Geometry, seed: u64) -> crate::fixture::Frame {
    use crate::fixture::{Frame, Samples};
    let max = u64::from(geometry.max_value());
    let mut v = tests::samples(geometry.frame_samples(), seed, max);
    v[0] = max;
    v[1] = 0;
    let samples = if geometry.bit_depth == 8 {
        Samples::U8(v.iter().map(|&x| x as u8).collect())
    } else {
        Samples::U16(v.iter().map(|&x| x as u16).collect())
    };
    Frame::new(geometry, samples).expect("a frame of its geometry's size")
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn samples(n: usize, seed: u64, max: u64) -> Vec<u64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (x >> 33) % (max + 1)
            })
            .collect()
    }

    #[test]
    fn sums_equal_the_plain_loops() {
        // Over two blocks, with the extremes in.
        for (n, max) in [(0, 255), (1, 255), (U8_BLOCK * 2 + 17, 255), (5000, 1023), (5000, 65535)] {
            let (a, b) = (samples(n, 1, max), samples(n, 2, max));
            let sse: u64 = a.iter().zip(&b).map(|(&x, &y)| x.abs_diff(y).pow(2)).sum();
            let sum: u64 = a.iter().sum();
            let sq: u64 = a.iter().map(|v| v * v).sum();
            if max == 255 {
                let (a8, b8): (Vec<u8>, Vec<u8>) =
                    (a.iter().map(|&v| v as u8).collect(), b.iter().map(|&v| v as u8).collect());
                assert_eq!(squared_error_u8(&a8, &b8), sse);
                assert_eq!(sse_u8(&a8, &b8), sse, "baseline build");
                assert_eq!(sum_and_squares(PlaneRef::U8 { width: n, height: 1, data: &a8 }), (sum, sq, 255));
                assert_eq!(sums_u8(&a8), (sum, sq), "baseline build");
            }
            let (a16, b16): (Vec<u16>, Vec<u16>) =
                (a.iter().map(|&v| v as u16).collect(), b.iter().map(|&v| v as u16).collect());
            assert_eq!(squared_error_u16(&a16, &b16), sse);
            // The OR of the samples: below 2^k exactly when each one is.
            let or = |v: &[u64]| v.iter().fold(0, |o, &x| o | x) as u32;
            let bits = or(&a);
            assert_eq!(sum_and_squares(PlaneRef::U16 { width: n, height: 1, data: &a16 }), (sum, sq, bits));
            assert_eq!(sums_u16(&a16), (sum, sq, bits as u16), "baseline build");
            let both = (sse, or(&a) | or(&b));
            let (pa, pb) =
                (PlaneRef::U16 { width: n, height: 1, data: &a16 }, PlaneRef::U16 { width: n, height: 1, data: &b16 });
            assert_eq!(squared_error_and_bits(pa, pb), both);
            assert_eq!(sse_bits_u16(&a16, &b16), (both.0, both.1 as u16), "baseline build");
            let max = a.iter().chain(&b).max().copied().unwrap_or(0);
            assert_eq!(both.1.leading_zeros(), (max as u32).leading_zeros(), "the same bit length as the largest");
        }
    }

    #[test]
    fn exactness_holds_up_to_12_bits() {
        assert!(float_sums_are_exact(1920 * 1080, 255));
        assert!(float_sums_are_exact(7680 * 4320, 4095));
        assert!(!float_sums_are_exact(16, 65_535));
        assert!(!float_sums_are_exact(1 << 30, 4095));
    }

    #[test]
    fn the_widest_terms_do_not_overflow_a_block() {
        let (zeros, full) = (vec![0u8; U8_BLOCK * 3], vec![255u8; U8_BLOCK * 3]);
        assert_eq!(squared_error_u8(&zeros, &full), 3 * U8_BLOCK as u64 * 65_025);
        assert_eq!(sums_u8(&full), (3 * U8_BLOCK as u64 * 255, 3 * U8_BLOCK as u64 * 65_025));
        let (z16, f16) = (vec![0u16; 1000], vec![65_535u16; 1000]);
        assert_eq!(squared_error_u16(&z16, &f16), 1000 * 65_535u64 * 65_535);
        assert_eq!(sums_u16(&f16).1, 1000 * 65_535u64 * 65_535);
    }
}
