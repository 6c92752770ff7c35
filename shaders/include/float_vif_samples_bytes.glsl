// float_vif_samples_any.glsl for byte samples only (pc.format 0, which
// the host guarantees: float_vif_vertical_strip_bytes).

float sample_ref(uint i) {
    return float((ref_words[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu) - 128.0;
}

float sample_dis(uint i) {
    return float((dis_words[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu) - 128.0;
}
