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
//! why `widen()` assembles the double from the float's bits). And float
//! products and sums with subnormal operands and results
//! (`selftest_float`), which tells a device that keeps subnormals from one
//! that flushes them to zero (NVIDIA's Vulkan driver does that too).

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

/// `selftest_float` (kernels/selftest.cl, shaders/selftest_float.wgsl):
/// work item `i < n` reads `a[i]` and `b[i]` (f32 bits) and writes
/// `out[2i]` = `a * b` and `out[2i+1]` = `a + b`, f32 bits. Buffers: a, b,
/// out. Scalars: n.
pub static SELFTEST_FLOAT: KernelSpec =
    KernelSpec { name: "selftest_float", family: "selftest", workgroup: [64, 1, 1], buffers: 3, scalars: 1 };

/// Float pairs for [`check_float`]: normal operands whose product or sum
/// is subnormal, subnormal operands (times one, plus zero, plus each
/// other), the edges of the normal range, and pseudo-random pairs whose
/// products fall around the smallest normal float.
pub fn float_inputs() -> Vec<(u32, u32)> {
    let bits = |x: f32| x.to_bits();
    let mut out = vec![
        (bits(1e-20), bits(1e-20)),           // product 1e-40: subnormal
        (bits(1e-20), bits(-3e-19)),          // product -3e-39
        (bits(1.5e-38), bits(-1.4e-38)),      // sum 1e-39 of two normals
        (0x0000_0001, bits(1.0)),             // the smallest subnormal, times one
        (0x007f_ffff, 0x0000_0000),           // the largest subnormal, plus zero
        (0x0040_0000, 0x0040_0000),           // two subnormals, summed to the smallest normal
        (0x8000_0003, bits(3.0)),             // a negative subnormal times three
        (bits(f32::MIN_POSITIVE), bits(0.5)), // halved into the subnormals
        (bits(1.0), bits(2.0)),
        (bits(f32::MAX), bits(0.5)),
    ];
    let mut s: u32 = 0x2545_f491;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s
    };
    // Exponents around -63 (1e-19) each, so products land from well inside
    // the subnormals to well above the smallest normal.
    for _ in 0..246 {
        let (x, y) = (next(), next());
        let a = (x & 0x807f_ffff) | ((60 + (x >> 23) % 8) << 23);
        let b = (y & 0x807f_ffff) | ((60 + (y >> 23) % 8) << 23);
        out.push((a, b));
    }
    out
}

/// `x` with a subnormal flushed to a zero of its sign.
fn flushed(x: f32) -> f32 {
    if x.is_subnormal() { f32::from_bits(x.to_bits() & 0x8000_0000) } else { x }
}

/// How a device's float products and sums compare with Rust's.
#[derive(Debug, Clone, PartialEq)]
pub enum FloatArithmetic {
    /// Every result equal, subnormals included.
    Exact { pairs: usize },
    /// Equal but where the device flushed a subnormal operand or result to
    /// zero, as x86's FTZ and DAZ modes do: `flushed` of `pairs` pairs.
    FlushesSubnormals { flushed: usize, pairs: usize },
}

/// Compares [`SELFTEST_FLOAT`]'s results, `got[2i]` and `got[2i + 1]` for
/// `cases[i]`, with Rust's; an error names the first result that is
/// neither Rust's nor Rust's with subnormals flushed.
pub fn judge_float(device: &str, cases: &[(u32, u32)], got: &[u32]) -> Result<FloatArithmetic> {
    let mut flushes = 0;
    for (i, &(a, b)) in cases.iter().enumerate() {
        let (x, y) = (f32::from_bits(a), f32::from_bits(b));
        let (fx, fy) = (flushed(x), flushed(y));
        let mut flushed_here = false;
        for (k, (exact, under_ftz)) in [(x * y, flushed(fx * fy)), (x + y, flushed(fx + fy))].into_iter().enumerate() {
            let g = f32::from_bits(got[2 * i + k]);
            if g.to_bits() == exact.to_bits() {
                continue;
            }
            // A flushed zero's sign is the driver's business; its value is not.
            ensure!(
                g == under_ftz,
                "selftest_float on {device}: {x:e} ({a:#010x}) {} {y:e} ({b:#010x}) gave {g:e} ({:#010x}); Rust says \
                 {exact:e}, and {under_ftz:e} with subnormals flushed to zero",
                ["*", "+"][k],
                g.to_bits()
            );
            flushed_here = true;
        }
        flushes += usize::from(flushed_here);
    }
    let pairs = cases.len();
    Ok(if flushes == 0 {
        FloatArithmetic::Exact { pairs }
    } else {
        FloatArithmetic::FlushesSubnormals { flushed: flushes, pairs }
    })
}

/// Runs [`SELFTEST_FLOAT`] on `gpu` on [`float_inputs`]: whether its float
/// arithmetic keeps subnormals (the float kernels then give the CPU's
/// bits), flushes them (they differ where a value falls below 1.2e-38), or
/// is wrong (an error).
pub fn check_float(gpu: &dyn Gpu) -> Result<FloatArithmetic> {
    let cases = float_inputs();
    let a: Vec<u32> = cases.iter().map(|c| c.0).collect();
    let b: Vec<u32> = cases.iter().map(|c| c.1).collect();
    let [got] = run(gpu, &SELFTEST_FLOAT, [&a, &b], [8 * cases.len()], &[])?;
    judge_float(&gpu.device().name, &cases, &got)
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

    /// Results as a device would write them: Rust's, or Rust's under
    /// FTZ/DAZ for pairs where `flush` says so.
    fn results(cases: &[(u32, u32)], flush: impl Fn(usize) -> bool) -> Vec<u32> {
        let mut out = Vec::new();
        for (i, &(a, b)) in cases.iter().enumerate() {
            let (x, y) = (f32::from_bits(a), f32::from_bits(b));
            let (x, y) = if flush(i) { (flushed(x), flushed(y)) } else { (x, y) };
            let f = |v: f32| if flush(i) { flushed(v) } else { v };
            out.extend([f(x * y).to_bits(), f(x + y).to_bits()]);
        }
        out
    }

    #[test]
    fn float_results_are_judged_exact_flushed_or_wrong() {
        let cases = float_inputs();
        assert_eq!(
            judge_float("d", &cases, &results(&cases, |_| false)).unwrap(),
            FloatArithmetic::Exact { pairs: cases.len() }
        );
        // Flushing everything changes only the pairs that meet a subnormal,
        // and there are many of them.
        let judged = judge_float("d", &cases, &results(&cases, |_| true)).unwrap();
        let FloatArithmetic::FlushesSubnormals { flushed, pairs } = judged else { panic!("{judged:?}") };
        assert!(flushed > 50 && flushed < pairs, "{flushed} of {pairs}");
        // A normal result one ulp off is an error, not a flush.
        let mut wrong = results(&cases, |_| false);
        wrong[2 * 8] += 1; // 1.0 * 2.0
        let e = judge_float("d", &cases, &wrong).unwrap_err().to_string();
        assert!(e.contains("1e0 (0x3f800000) * 2e0 (0x40000000) gave 2.0000002e0"), "{e}");
    }
}
