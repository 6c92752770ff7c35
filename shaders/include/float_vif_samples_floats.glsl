// float_vif_samples_any.glsl for f32 samples only (pc.format 2, which the
// host guarantees: float_vif_vertical_strip_floats, the prescaled picture
// and scales 1-3).

float sample_ref(uint i) {
    return uintBitsToFloat(ref_words[i]);
}

float sample_dis(uint i) {
    return uintBitsToFloat(dis_words[i]);
}
