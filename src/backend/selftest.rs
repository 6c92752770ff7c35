//! A dialect self-test: the 64-bit integer operations that the integer
//! kernels (VIF, ADM) are built from, run on a device and held to Rust's
//! own u64/i64 arithmetic. The Vulkan dialect of 64-bit kernels is WGSL
//! (shaders/README.md says why), CUDA and OpenCL share one C body; this
//! proves each one multiplies, shifts and counts leading zeros the way the
//! CPU reference does before any feature depends on it. And floats widened
//! to doubles and multiplied (`selftest_widen`): WGSL's `widen()`
//! (shaders/include/widen.wgsl) and the C dialect's casts, subnormals
//! included, which a driver that flushes them in a conversion gets wrong
//! (NVIDIA's Vulkan driver does: `f64(v)` of 1e-45 is 0 there, which is
//! why `widen()` assembles the double from the float's bits).

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
    let a: Vec<u32> = cases.iter().map(|c| c.0).collect();
    let b: Vec<u32> = cases.iter().map(|c| c.1 as u32).collect();
    let [got, zeros] = run(gpu, &SELFTEST_INT64, [&a, &b], [16 * n, 4 * n], &[shift])?;
    for (i, &(x, y)) in cases.iter().enumerate() {
        let (square, rounded, lz) = expected(x, y, shift);
        let g_square = u64_at(&got, 4 * i);
        let g_rounded = u64_at(&got, 4 * i + 2) as i64;
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

/// `selftest_widen` (kernels/selftest.cl, shaders/selftest_widen.wgsl):
/// work item `i < n` reads `a[i]` and `b[i]` (f32 bits) and writes
/// `out[4i..4i+2]` = `a` widened to f64 (bits, lo then hi) and
/// `out[4i+2..4i+4]` = that times `b` widened (a product of two floats is
/// exact in double). Buffers: a, b, out. Scalars: n.
pub static SELFTEST_WIDEN: KernelSpec =
    KernelSpec { name: "selftest_widen", family: "selftest", workgroup: [64, 1, 1], buffers: 3, scalars: 1 };

/// Float pairs for [`check_widen`]: subnormals (the smallest, the largest,
/// both signs, times each other and times normals), zeros, the extremes of
/// the normal range, infinities times finite values, and pseudo-random
/// floats over the whole exponent range.
pub fn widen_inputs() -> Vec<(u32, u32)> {
    let mut out = vec![
        (0x0000_0001, 0x3f80_0000),
        (0x007f_ffff, 0x4b00_0000),
        (0x8000_0001, 0x0000_0001),
        (0x8040_0000, 0xc2f6_e979),
        (0x0000_0000, 0x8000_0000),
        (0x0080_0000, 0x7f7f_ffff),
        (0x7f7f_ffff, 0x7f7f_ffff),
        (0x7f80_0000, 0x3f00_0000),
        (0xff80_0000, 0x0000_0003),
    ];
    let mut s: u32 = 0x9e37_79b9;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s
    };
    // Every third pair's a a subnormal (exponent field 0), the others any
    // finite float.
    let finite = |x: u32| if x & 0x7f80_0000 == 0x7f80_0000 { x & 0xbfff_ffff } else { x };
    for k in 0..503 {
        let a = next();
        let b = next();
        let a = if k % 3 == 0 { a & 0x807f_ffff } else { finite(a) };
        out.push((a, finite(b)));
    }
    out
}

/// What the kernel must compute: the exact double of `a` and the exact
/// product of the doubles of `a` and `b`, as bits.
pub fn widened(a: u32, b: u32) -> (u64, u64) {
    let x = f64::from(f32::from_bits(a));
    (x.to_bits(), (x * f64::from(f32::from_bits(b))).to_bits())
}

/// Runs [`SELFTEST_WIDEN`] on `gpu` on [`widen_inputs`] and compares every
/// result with [`widened`]; the error names the first pair that differs
/// and how many did.
pub fn check_widen(gpu: &dyn Gpu) -> Result<()> {
    let cases = widen_inputs();
    let n = cases.len();
    let a: Vec<u32> = cases.iter().map(|c| c.0).collect();
    let b: Vec<u32> = cases.iter().map(|c| c.1).collect();
    let [got] = run(gpu, &SELFTEST_WIDEN, [&a, &b], [16 * n], &[])?;
    let pair = |i: usize, k: usize| u64_at(&got, 4 * i + k);
    let wrong: Vec<usize> = (0..n).filter(|&i| (pair(i, 0), pair(i, 2)) != widened(cases[i].0, cases[i].1)).collect();
    if let Some(&i) = wrong.first() {
        let (a, b) = cases[i];
        let (x, p) = widened(a, b);
        anyhow::bail!(
            "selftest_widen on {}: {} of {n} pairs differ; the first, a = {:e} ({a:#010x}), b = {:e} ({b:#010x}): \
             got a = {:e}, a * b = {:e}, Rust says {:e}, {:e}",
            gpu.device().name,
            wrong.len(),
            f32::from_bits(a),
            f32::from_bits(b),
            f64::from_bits(pair(i, 0)),
            f64::from_bits(pair(i, 2)),
            f64::from_bits(x),
            f64::from_bits(p)
        );
    }
    Ok(())
}

/// One dispatch of a self-test kernel over `a.len()` work items: buffers
/// `a`, `b` (uploaded), then `N` outputs of the given sizes in bytes; then
/// the scalars n and `scalars`. Returns each output's words.
fn run<const N: usize>(
    gpu: &dyn Gpu,
    spec: &'static KernelSpec,
    [a, b]: [&[u32]; 2],
    outputs: [usize; N],
    scalars: &[u32],
) -> Result<[Vec<u32>; N]> {
    let n = a.len();
    let kernel = gpu.load_kernel(spec)?;
    let bytes = |v: &[u32]| v.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>();
    let (ab, bb) = (gpu.create_buffer(4 * n)?, gpu.create_buffer(4 * b.len())?);
    let out = outputs.iter().map(|&size| gpu.create_buffer(size)).collect::<Result<Vec<_>>>()?;
    let mut stream = gpu.create_stream()?;
    stream.upload(&ab, 0, &bytes(a))?;
    stream.upload(&bb, 0, &bytes(b))?;
    let mut args = vec![Arg::Buffer(&ab), Arg::Buffer(&bb)];
    args.extend(out.iter().map(Arg::Buffer));
    args.push(Arg::U32(n as u32));
    args.extend(scalars.iter().map(|&s| Arg::U32(s)));
    stream.dispatch(&kernel, [groups_for(n, 64), 1, 1], &args)?;
    for (buffer, &size) in out.iter().zip(&outputs) {
        stream.download(buffer, 0, size)?;
    }
    let downloads = stream.wait()?;
    Ok(std::array::from_fn(|k| words(&downloads[k]).collect()))
}

/// The u64 of words `k` (low) and `k + 1` (high).
fn u64_at(words: &[u32], k: usize) -> u64 {
    u64::from(words[k]) | (u64::from(words[k + 1]) << 32)
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

    #[test]
    fn the_widen_inputs_reach_subnormals_and_the_products_are_exact() {
        let inputs = widen_inputs();
        let subnormal = |x: u32| x & 0x7f80_0000 == 0 && x & 0x007f_ffff != 0;
        assert!(inputs.iter().filter(|(a, _)| subnormal(*a)).count() > 150);
        assert!(inputs.iter().all(|&(a, b)| f32::from_bits(a).is_finite() || f32::from_bits(b) != 0.0));
        // The smallest subnormal is 2^-149, and squared still exact.
        assert_eq!(widened(1, 1), (2f64.powi(-149).to_bits(), 2f64.powi(-298).to_bits()));
        // A float product narrowed to float would round: (1 + 2^-23)^2.
        let (_, p) = widened(0x3f80_0001, 0x3f80_0001);
        assert_eq!(f64::from_bits(p), 1.0 + 2f64.powi(-22) + 2f64.powi(-46));
    }
}
