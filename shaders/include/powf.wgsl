// powf(x, y) as glibc computes it for libvmaf's float_adm (sysdeps/ieee754/
// flt-32/e_powf.c: log2 of x in double from a 16-entry table, times y, then
// exp2 from a 32-entry table), for x > 0 finite or the special cases it
// returns early. Included by float_adm_cm and float_adm_cm_rows (build.rs
// splices `#include` lines).
fn powf(x: f32, y: f32) -> f32 {
    var invc = array<u64, 16>(
        0x3ff661ec79f8f3belu, 0x3ff571ed4aaf883dlu, 0x3ff49539f0f010b0lu, 0x3ff3c995b0b80385lu,
        0x3ff30d190c8864a5lu, 0x3ff25e227b0b8ea0lu, 0x3ff1bb4a4a1a343flu, 0x3ff12358f08ae5balu,
        0x3ff0953f419900a7lu, 0x3ff0000000000000lu, 0x3fee608cfd9a47aclu, 0x3feca4b31f026aa0lu,
        0x3feb2036576afce6lu, 0x3fe9c2d163a1aa2dlu, 0x3fe886e6037841edlu, 0x3fe767dcf5534862lu,
    );
    var logc = array<u64, 16>(
        0xbfdefec65b963019lu, 0xbfdb0b6832d4fca4lu, 0xbfd7418b0a1fb77blu, 0xbfd39de91a6dcf7blu,
        0xbfd01d9bf3f2b631lu, 0xbfc97c1d1b3b7af0lu, 0xbfc2f9e393af3c9flu, 0xbfb960cbbf788d5clu,
        0xbfaa6f9db6475fcelu, 0x0000000000000000lu, 0x3fb338ca9f24f53dlu, 0x3fc476a9543891balu,
        0x3fce840b4ac4e4d2lu, 0x3fd40645f0c6651clu, 0x3fd88e9c2c1b9ff8lu, 0x3fdce0a44eb17bcclu,
    );
    var poly = array<u64, 5>(
        0x3fd27616c9496e0blu, 0xbfd71969a075c67alu, 0x3fdec70a6ca7baddlu, 0xbfe7154748bef6c8lu,
        0x3ff71547652ab82blu,
    );
    var e2 = array<u64, 32>(
        0x3ff0000000000000lu, 0x3fefd9b0d3158574lu, 0x3fefb5586cf9890flu, 0x3fef9301d0125b51lu,
        0x3fef72b83c7d517blu, 0x3fef54873168b9aalu, 0x3fef387a6e756238lu, 0x3fef1e9df51fdee1lu,
        0x3fef06fe0a31b715lu, 0x3feef1a7373aa9cblu, 0x3feedea64c123422lu, 0x3feece086061892dlu,
        0x3feebfdad5362a27lu, 0x3feeb42b569d4f82lu, 0x3feeab07dd485429lu, 0x3feea47eb03a5585lu,
        0x3feea09e667f3bcdlu, 0x3fee9f75e8ec5f74lu, 0x3feea11473eb0187lu, 0x3feea589994cce13lu,
        0x3feeace5422aa0dblu, 0x3feeb737b0cdc5e5lu, 0x3feec49182a3f090lu, 0x3feed503b23e255dlu,
        0x3feee89f995ad3adlu, 0x3feeff76f2fb5e47lu, 0x3fef199bdd85529clu, 0x3fef3720dcef9069lu,
        0x3fef5818dcfba487lu, 0x3fef7c97337b9b5flu, 0x3fefa4afa2a490dalu, 0x3fefd0765b6e4540lu,
    );
    var e2poly = array<u64, 3>(
        0x3fac6af84b912394lu, 0x3fcebfce50fac4f3lu, 0x3fe62e42ff0c52d6lu,
    );
    var ix = bitcast<u32>(x);
    if (ix - 0x00800000u >= 0x7f800000u - 0x00800000u) {
        if (ix > 0x7f800000u) {
            return x + y;
        }
        if (ix == 0u || ix == 0x7f800000u) {
            return x * x;
        }
        ix = (bitcast<u32>(x * 8388608.0f) & 0x7fffffffu) - (23u << 23u);
    }
    // log2_inline
    let tmp = ix - 0x3f330000u;
    let i = (tmp >> 19u) % 16u;
    let top = tmp & 0xff800000u;
    let iz = ix - top;
    let k = bitcast<i32>(top) >> 23u;
    let z = f64(bitcast<f32>(iz));
    let r = z * bitcast<f64>(invc[i]) - 1.0lf;
    let y0 = bitcast<f64>(logc[i]) + f64(k);
    let r2 = r * r;
    let ya = bitcast<f64>(poly[0]) * r + bitcast<f64>(poly[1]);
    let p = bitcast<f64>(poly[2]) * r + bitcast<f64>(poly[3]);
    let r4 = r2 * r2;
    var q = bitcast<f64>(poly[4]) * r + y0;
    q = p * r2 + q;
    let ylogx = f64(y) * (ya * r4 + q);
    if (((bitcast<u64>(ylogx) >> 47u) & 0xfffflu) >= (bitcast<u64>(126.0lf) >> 47u)) {
        if (ylogx > bitcast<f64>(0x405fffffffd1d571lu)) {
            return bitcast<f32>(0x7f800000u);
        }
        if (ylogx <= -150.0lf) {
            return 0.0f;
        }
    }
    // exp2_inline
    let shift = bitcast<f64>(0x42e8000000000000lu);
    let kd0 = ylogx + shift;
    let ki = bitcast<u64>(kd0);
    let kd = kd0 - shift;
    let rr = ylogx - kd;
    let s = bitcast<f64>(e2[ki % 32lu] + (ki << 47u));
    let zz = bitcast<f64>(e2poly[0]) * rr + bitcast<f64>(e2poly[1]);
    let rr2 = rr * rr;
    var yy = bitcast<f64>(e2poly[2]) * rr + 1.0lf;
    yy = zz * rr2 + yy;
    return f32(yy * s);
}
