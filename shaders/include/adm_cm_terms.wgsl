// integer ADM's masking arithmetic (integer_adm.c ADM_CM_ACCUM_ROUND and
// I4_ADM_CM_ACCUM_ROUND), shared by adm_cm and adm_cm_rows.
fn iabs(x: i32) -> i32 {
    return select(x, bitcast<i32>(0u - bitcast<u32>(x)), x < 0);
}

// A u32 as the i64 of the same value (C's uint32_t in an int64_t
// product). Through u64: naga lowers i64(u32) to a sign-extending
// OpSConvert (seen on lavapipe: the scale 1-3 CSF factors of 2^31 and
// above, adm_csf_mode=1 for one, came out negative).
fn widen(x: u32) -> i64 {
    return bitcast<i64>(u64(x));
}

fn half(shift: u32) -> i64 {
    return select(0li, 1li << (shift - 1u), shift > 0u);
}

// ADM_CM_ACCUM_ROUND (scale 0).
fn cube0(x: i32, thr: i32, sub: u32, sq_shift: u32, cub_shift: u32) -> i64 {
    var y = bitcast<i32>(bitcast<u32>(iabs(x)) - (bitcast<u32>(thr) << sub));
    y = max(y, 0);
    let sq = i32((i64(y) * i64(y) + (1li << (sq_shift - 1u))) >> sq_shift);
    return (i64(sq) * i64(y) + half(cub_shift)) >> cub_shift;
}

// I4_ADM_CM_ACCUM_ROUND (scales 1-3), the value first weighted to Q16.
fn cube123(v: i32, rf: u32, thr: i32, cub_shift: u32) -> i64 {
    let x = i32((i64(v) * widen(rf) + (1li << 27u)) >> 28u);
    var y = bitcast<i32>(bitcast<u32>(iabs(x)) - bitcast<u32>(thr));
    y = max(y, 0);
    let sq = i32((i64(y) * i64(y) + (1li << 29u)) >> 30u);
    return (i64(sq) * i64(y) + half(cub_shift)) >> cub_shift;
}
