// float_adm's db2 wavelet taps, shared by its CPU-driver wavelets
// (float_adm_dwt0_strips, float_adm_dwt0_words, float_adm_dwt_strips).
// dwt2_db2_coeffs_lo_s (high false) or _hi_s, as their f32 bits: the sum
// starts at 0 and adds the four products in order, each rounded.
fn filt(high: bool, s: vec4<f32>) -> f32 {
    var t = vec4<f32>(bitcast<f32>(0x3ef746eau), bitcast<f32>(0x3f5625efu), bitcast<f32>(0x3e6585f8u), bitcast<f32>(0xbe0483eeu));
    if (high) {
        t = vec4<f32>(bitcast<f32>(0xbe0483eeu), bitcast<f32>(0xbe6585f8u), bitcast<f32>(0x3f5625efu), bitcast<f32>(0xbef746eau));
    }
    var acc = 0.0f;
    acc = acc + t.x * s.x;
    acc = acc + t.y * s.y;
    acc = acc + t.z * s.z;
    acc = acc + t.w * s.w;
    return acc;
}
