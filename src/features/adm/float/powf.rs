//! `powf` for float_adm's `adm_p_norm` other than 3, where libvmaf takes
//! `powf(x, p)` of every pixel. glibc's powf (the Arm optimized-routines
//! algorithm, glibc >= 2.28: log2 through a 16-entry table and a degree-5
//! polynomial, exp2 through a 32-entry table and a cubic, all in double)
//! written out here so that the GPU kernels (kernels/float_adm.cl,
//! shaders/float_adm_cm.wgsl) and the CPU reference compute the very same
//! function with nothing but correctly rounded double operations. It is
//! glibc's generic build; on x86-64 with FMA glibc runs a build of the same
//! code with fused multiply-adds, whose double intermediate differs in the
//! last bits, so the two float results can differ by one ulp where the
//! exact result lies within ~2^-50 of a rounding boundary (none in the
//! tests' 10^6 samples; see `the_port_is_glibcs_powf`).
//!
//! Only the inputs float_adm gives it are handled the general way: x >= 0
//! (a magnitude) and 1 <= p <= 20; zero, infinity, NaN and subnormal x as
//! glibc does.

/// `__powf_log2_data`: (1/c, log2(c)) per subinterval, and the polynomial.
const LOG2_TAB: [(f64, f64); 16] = [
    (f64::from_bits(0x3ff661ec79f8f3be), f64::from_bits(0xbfdefec65b963019)),
    (f64::from_bits(0x3ff571ed4aaf883d), f64::from_bits(0xbfdb0b6832d4fca4)),
    (f64::from_bits(0x3ff49539f0f010b0), f64::from_bits(0xbfd7418b0a1fb77b)),
    (f64::from_bits(0x3ff3c995b0b80385), f64::from_bits(0xbfd39de91a6dcf7b)),
    (f64::from_bits(0x3ff30d190c8864a5), f64::from_bits(0xbfd01d9bf3f2b631)),
    (f64::from_bits(0x3ff25e227b0b8ea0), f64::from_bits(0xbfc97c1d1b3b7af0)),
    (f64::from_bits(0x3ff1bb4a4a1a343f), f64::from_bits(0xbfc2f9e393af3c9f)),
    (f64::from_bits(0x3ff12358f08ae5ba), f64::from_bits(0xbfb960cbbf788d5c)),
    (f64::from_bits(0x3ff0953f419900a7), f64::from_bits(0xbfaa6f9db6475fce)),
    (1.0, 0.0),
    (f64::from_bits(0x3fee608cfd9a47ac), f64::from_bits(0x3fb338ca9f24f53d)),
    (f64::from_bits(0x3feca4b31f026aa0), f64::from_bits(0x3fc476a9543891ba)),
    (f64::from_bits(0x3feb2036576afce6), f64::from_bits(0x3fce840b4ac4e4d2)),
    (f64::from_bits(0x3fe9c2d163a1aa2d), f64::from_bits(0x3fd40645f0c6651c)),
    (f64::from_bits(0x3fe886e6037841ed), f64::from_bits(0x3fd88e9c2c1b9ff8)),
    (f64::from_bits(0x3fe767dcf5534862), f64::from_bits(0x3fdce0a44eb17bcc)),
];
const LOG2_POLY: [f64; 5] = [
    f64::from_bits(0x3fd27616c9496e0b),
    f64::from_bits(0xbfd71969a075c67a),
    f64::from_bits(0x3fdec70a6ca7badd),
    f64::from_bits(0xbfe7154748bef6c8),
    f64::from_bits(0x3ff71547652ab82b),
];

/// `__exp2f_data`: 2^(i/32) (as bits, minus i << 47), the rounding shift
/// (1.5 * 2^52 / 32) and the cubic.
const EXP2_TAB: [u64; 32] = [
    0x3ff0000000000000,
    0x3fefd9b0d3158574,
    0x3fefb5586cf9890f,
    0x3fef9301d0125b51,
    0x3fef72b83c7d517b,
    0x3fef54873168b9aa,
    0x3fef387a6e756238,
    0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715,
    0x3feef1a7373aa9cb,
    0x3feedea64c123422,
    0x3feece086061892d,
    0x3feebfdad5362a27,
    0x3feeb42b569d4f82,
    0x3feeab07dd485429,
    0x3feea47eb03a5585,
    0x3feea09e667f3bcd,
    0x3fee9f75e8ec5f74,
    0x3feea11473eb0187,
    0x3feea589994cce13,
    0x3feeace5422aa0db,
    0x3feeb737b0cdc5e5,
    0x3feec49182a3f090,
    0x3feed503b23e255d,
    0x3feee89f995ad3ad,
    0x3feeff76f2fb5e47,
    0x3fef199bdd85529c,
    0x3fef3720dcef9069,
    0x3fef5818dcfba487,
    0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da,
    0x3fefd0765b6e4540,
];
const EXP2_SHIFT: f64 = f64::from_bits(0x42e8000000000000); // 0x1.8p+52 / 32
const EXP2_POLY: [f64; 3] =
    [f64::from_bits(0x3fac6af84b912394), f64::from_bits(0x3fcebfce50fac4f3), f64::from_bits(0x3fe62e42ff0c52d6)];

/// `log2_inline`: log2 of the float with bits `ix` (positive, normal or
/// normalised), in double.
#[inline(always)]
fn log2_inline(ix: u32) -> f64 {
    const OFF: u32 = 0x3f33_0000;
    let tmp = ix.wrapping_sub(OFF);
    let i = ((tmp >> 19) % 16) as usize;
    let top = tmp & 0xff80_0000;
    let iz = ix.wrapping_sub(top);
    let k = (top as i32) >> 23;
    let (invc, logc) = LOG2_TAB[i];
    let z = f64::from(f32::from_bits(iz));
    let r = z * invc - 1.0;
    let y0 = logc + f64::from(k);
    let a = &LOG2_POLY;
    let r2 = r * r;
    let y = a[0] * r + a[1];
    let p = a[2] * r + a[3];
    let r4 = r2 * r2;
    let q = a[4] * r + y0;
    let q = p * r2 + q;
    y * r4 + q
}

/// `exp2_inline` with sign_bias 0: 2^xd rounded to float.
#[inline(always)]
fn exp2_inline(xd: f64) -> f32 {
    let kd = xd + EXP2_SHIFT;
    let ki = kd.to_bits();
    let kd = kd - EXP2_SHIFT;
    let r = xd - kd;
    let t = EXP2_TAB[(ki % 32) as usize].wrapping_add(ki << 47);
    let s = f64::from_bits(t);
    let c = &EXP2_POLY;
    let z = c[0] * r + c[1];
    let r2 = r * r;
    let y = c[2] * r + 1.0;
    let y = z * r2 + y;
    (y * s) as f32
}

/// `powf(x, y)` for x >= 0 (including 0, subnormals, infinity and NaN) and
/// a finite y > 0, as glibc computes it.
pub fn powf(x: f32, y: f32) -> f32 {
    let mut ix = x.to_bits();
    if ix.wrapping_sub(0x0080_0000) >= 0x7f80_0000 - 0x0080_0000 {
        // zero, subnormal, infinity or NaN (x >= 0 here)
        if ix > 0x7f80_0000 {
            return x + y;
        }
        if ix == 0 || ix == 0x7f80_0000 {
            return x * x;
        }
        // Subnormal: normalise, the exponent going negative.
        ix = (x * f32::from_bits(0x4b00_0000)).to_bits() & 0x7fff_ffff;
        ix = ix.wrapping_sub(23 << 23);
    }
    let ylogx = f64::from(y) * log2_inline(ix);
    if (ylogx.to_bits() >> 47 & 0xffff) >= 126f64.to_bits() >> 47 {
        if ylogx > f64::from_bits(0x405fffffffd1d571) {
            return f32::INFINITY;
        }
        if ylogx <= -150.0 {
            return 0.0;
        }
    }
    exp2_inline(ylogx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_is_glibcs_powf() {
        // f32::powf is glibc's powf on Linux (libvmaf's). A deterministic
        // spread of magnitudes and the p values float_adm takes.
        let mut s: u32 = 0x9e37_79b9;
        let mut differ = 0;
        for n in 0..1_000_000u32 {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            // x from 2^-30 to 2^30, y in [1, 20].
            let x = f32::from_bits((97 << 23) + s % (60 << 23));
            let y = [1.0f32, 1.5, 2.0, 2.5, 3.0, 4.0, 7.3, 20.0][(n % 8) as usize];
            if powf(x, y).to_bits() != x.powf(y).to_bits() {
                differ += 1;
            }
        }
        assert_eq!(differ, 0);
        for (x, y) in [(0.0f32, 2.5f32), (f32::INFINITY, 2.5), (1e-40, 2.5), (1e-40, 1.0), (1e30, 20.0), (1e-30, 20.0)]
        {
            assert_eq!(powf(x, y).to_bits(), x.powf(y).to_bits(), "{x:e} ^ {y}");
        }
        assert!(powf(f32::NAN, 2.5).is_nan());
    }
}
