// widen(v): the double f64(v), assembled from v's bits instead of
// converted, with 32-bit integer operations, one double subtraction and
// selects (no branch).
//
// Why not f64(v):
// - Mesa 25.0.7's lavapipe (llvmpipe, LLVM 15) computes the product of two
//   widened floats, f64(a) * f64(b), as a float product: rounded to 24
//   bits, where the double product of two floats is exact. Mesa 22.3.6 and
//   NVIDIA compute the double. Found by ciede and float_ssim/float_ms_ssim
//   failing their bit-exactness tests on 25.0.7 only; a probe held f64
//   adds, multiplies and conversions of doubles exact there, and
//   f64(a) * f64(b) wrong in 510 of 512 cases. A compiler that sees no
//   conversion cannot narrow the product.
// - NVIDIA's Vulkan driver flushes a subnormal float to zero in a
//   conversion (`ulpgate devices --check`'s selftest_widen found
//   f64(1e-45) = 0 on an H200, driver 580.159.04), and offers no
//   shaderDenormPreserveFloat32 to ask otherwise.
//
// A normal float's double has the float's sign, its exponent rebased by
// 1023 - 127 = 896 (0x38000000 in the high word) and its 23 significand
// bits on top of the double's 52. Infinities and NaNs (exponent 255) take
// the double's all-ones exponent, payload kept. A zero or subnormal is its
// significand m times 2^-149, computed as 2^-97 (1 + m 2^-52) - 2^-97:
// exact (Sterbenz), and then signed. Exact for every float.
//
// The version before (2026-11-27) built the double with 64-bit shifts and
// branched on the exponent; this one took ciede_terms_storage from 560 to
// 456 µs a dispatch on an NVIDIA H200, as fast as a conversion of the
// normal floats with the others selected from their bits (458 µs).
fn widen(v: f32) -> f64 {
    let b = bitcast<u32>(v);
    let sign = b & 0x80000000u;
    let exponent = b & 0x7F800000u;
    var hi = sign | (((b & 0x7FFFFFFFu) >> 3u) + 0x38000000u);
    hi = select(hi, hi | 0x7FF00000u, exponent == 0x7F800000u);
    let normal = bitcast<f64>((u64(hi) << 32u) | u64(b << 29u));
    let magnitude = bitcast<f64>((0x39E00000lu << 32u) | u64(b & 0x7FFFFFu)) - 0x1.0p-97lf;
    let tiny = bitcast<f64>(bitcast<u64>(magnitude) | (u64(sign) << 32u));
    return select(tiny, normal, exponent != 0u);
}
