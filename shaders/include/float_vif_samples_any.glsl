// float_vif_vertical_strip's samples in any format (pc.format): 1 byte
// (0) or a u16 (1) as `v * inv - 128` (8-bit: `v - 128`), or an f32 (2).
// The kernel's variants swap this file for float_vif_samples_bytes.glsl or
// float_vif_samples_floats.glsl, which read one format each.

float sample_ref(uint i) {
    if (pc.format == 0u) {
        return float((ref_words[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu) - 128.0;
    }
    if (pc.format == 1u) {
        return float((ref_words[i >> 1u] >> ((i & 1u) * 16u)) & 0xffffu) * pc.inv - 128.0;
    }
    return uintBitsToFloat(ref_words[i]);
}

float sample_dis(uint i) {
    if (pc.format == 0u) {
        return float((dis_words[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu) - 128.0;
    }
    if (pc.format == 1u) {
        return float((dis_words[i >> 1u] >> ((i & 1u) * 16u)) & 0xffffu) * pc.inv - 128.0;
    }
    return uintBitsToFloat(dis_words[i]);
}
