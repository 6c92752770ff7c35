// motion_quads_any.glsl's prev_quad and cur_quad for 8-bit samples only
// (pc.bytes_per_sample 1, which the host guarantees: float_motion_rows_bytes):
// samples i .. i + 3 as picture_copy's floats from 2 words; `last` is the
// frame's last word (never unpacked past: a clamped word is not read from).

vec4 prev_quad(uint i, uint last) {
    uint first = i >> 2u;
    uint q = funnel(prev_words[first], prev_words[min(first + 1u, last)], (i & 3u) * 8u);
    return to_pixels(uvec4(q, q >> 8u, q >> 16u, q >> 24u) & 255u);
}

vec4 cur_quad(uint i, uint last) {
    uint first = i >> 2u;
    uint q = funnel(cur_words[first], cur_words[min(first + 1u, last)], (i & 3u) * 8u);
    return to_pixels(uvec4(q, q >> 8u, q >> 16u, q >> 24u) & 255u);
}
