// widen(v): the double f64(v), built from v's bits instead of converted.
//
// Why: Mesa 25.0.7's lavapipe (llvmpipe, LLVM 15) computes the product of
// two widened floats, f64(a) * f64(b), as a float product: rounded to 24
// bits, where the double product of two floats is exact. Mesa 22.3.6 and
// NVIDIA compute the double. Found by ciede and float_ssim/float_ms_ssim
// failing their bit-exactness tests on 25.0.7 only; a probe held f64 adds,
// multiplies and conversions of doubles exact there, and
// f64(a) * f64(b) wrong in 510 of 512 cases. A kernel multiplying two
// widened floats widens them with this function, which the compiler cannot
// see as a conversion. Exact for every float: zero, subnormals (an
// integer times 2^-149), infinities and NaNs (payload kept).
fn widen(v: f32) -> f64 {
    let b = bitcast<u32>(v);
    let e = (b >> 23u) & 255u;
    let m = b & 0x7FFFFFu;
    let sign = u64(b >> 31u) << 63u;
    if e == 0u {
        let magnitude = f64(m) * 1.401298464324817e-45lf;
        if sign != 0lu {
            return -magnitude;
        }
        return magnitude;
    }
    var exponent = u64(e + 896u);
    if e == 255u {
        exponent = 2047lu;
    }
    return bitcast<f64>(sign | (exponent << 52u) | (u64(m) << 29u));
}
