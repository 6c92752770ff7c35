//! A dialect self-test: the 64-bit integer operations that the integer
//! kernels (VIF, ADM) are built from, run on a device and held to Rust's
//! own u64/i64 arithmetic. The Vulkan dialect of 64-bit kernels is WGSL
//! (shaders/README.md says why), CUDA and OpenCL share one C body; this
//! proves each one multiplies, shifts and counts leading zeros the way the
//! CPU reference does before any feature depends on it.

use super::gpu::{Arg, Gpu, KernelSpec, groups_for};
use crate::features::gpu::words;
use anyhow::{Result, ensure};

/// `selftest_int64` (kernels/selftest.cl, shaders/selftest_int64.wgsl):
/// work item `i < n` reads `a[i]` (u32) and `b[i]` (i32) and writes
/// `out[4i..4i+2]` = `a * a` as a u64 (lo, hi), `out[4i+2..4i+4]` =
/// `(b * a + 2^(shift-1)) >> shift` as an i64, arithmetic shift (lo, hi),
/// and `clz[i]` = the leading zeros of `a * a` as a u64. Buffers: a, b,
/// out, clz. Scalars: n, shift (1..=32).
pub static SELFTEST_INT64: KernelSpec =
    KernelSpec { name: "selftest_int64", family: "selftest", workgroup: [64, 1, 1], buffers: 4, scalars: 2 };

/// What the kernel must compute, in Rust.
pub fn expected(a: u32, b: i32, shift: u32) -> (u64, i64, u32) {
    let square = u64::from(a) * u64::from(a);
    let rounded = (i64::from(b) * i64::from(a) + (1i64 << (shift - 1))) >> shift;
    (square, rounded, square.leading_zeros())
}

/// Inputs that reach every corner: zero, one, the top bit, u32::MAX
/// (a square of 64 bits), negative products, and values between.
pub fn inputs() -> Vec<(u32, i32)> {
    let mut out = vec![(0, 0), (1, -1), (0xffff_ffff, i32::MIN), (0x8000_0000, i32::MAX), (65535, -65536)];
    let mut s: u32 = 0x1234_5678;
    for _ in 0..123 {
        // xorshift32: deterministic, no crate needed.
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        out.push((s >> (s & 31), (s.rotate_left(7) as i32) >> (s % 23)));
    }
    out
}

/// Runs the kernel on `gpu` and compares every result with [`expected`];
/// the error names the first input that differs.
pub fn check_int64(gpu: &dyn Gpu, shift: u32) -> Result<()> {
    let cases = inputs();
    let n = cases.len();
    let kernel = gpu.load_kernel(&SELFTEST_INT64)?;
    let a: Vec<u8> = cases.iter().flat_map(|c| c.0.to_le_bytes()).collect();
    let b: Vec<u8> = cases.iter().flat_map(|c| c.1.to_le_bytes()).collect();
    let (ab, bb, out, clz) =
        (gpu.create_buffer(4 * n)?, gpu.create_buffer(4 * n)?, gpu.create_buffer(16 * n)?, gpu.create_buffer(4 * n)?);
    let mut stream = gpu.create_stream()?;
    stream.upload(&ab, 0, &a)?;
    stream.upload(&bb, 0, &b)?;
    let args =
        [Arg::Buffer(&ab), Arg::Buffer(&bb), Arg::Buffer(&out), Arg::Buffer(&clz), Arg::U32(n as u32), Arg::U32(shift)];
    stream.dispatch(&kernel, [groups_for(n, 64), 1, 1], &args)?;
    stream.download(&out, 0, 16 * n)?;
    stream.download(&clz, 0, 4 * n)?;
    let downloads = stream.wait()?;
    let got: Vec<u32> = words(&downloads[0]).collect();
    let zeros: Vec<u32> = words(&downloads[1]).collect();
    for (i, &(x, y)) in cases.iter().enumerate() {
        let (square, rounded, lz) = expected(x, y, shift);
        let g_square = u64::from(got[4 * i]) | (u64::from(got[4 * i + 1]) << 32);
        let g_rounded = (u64::from(got[4 * i + 2]) | (u64::from(got[4 * i + 3]) << 32)) as i64;
        ensure!(
            (g_square, g_rounded, zeros[i]) == (square, rounded, lz),
            "selftest_int64 on {}: a = {x}, b = {y}, shift {shift}: got ({g_square}, {g_rounded}, clz {}), \
             Rust says ({square}, {rounded}, clz {lz})",
            gpu.device().name,
            zeros[i]
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_is_what_the_c_code_means() {
        assert_eq!(expected(0xffff_ffff, -1, 1), (0xffff_fffe_0000_0001, -2147483647, 0));
        // -5 >> 1 after adding 1: floor(-4 / 2), an arithmetic shift.
        assert_eq!(expected(5, -1, 1).1, -2);
        assert_eq!(expected(0, 0, 16), (0, 0, 64));
    }
}
