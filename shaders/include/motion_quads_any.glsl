// float_motion_rows' prev_quad and cur_quad for 8- or 16-bit samples
// (pc.bytes_per_sample); float_motion_rows_bytes swaps this file for
// motion_quads_bytes.glsl.

// Samples i .. i + 3 of a frame as picture_copy's floats, from 2 (8-bit)
// or 3 (16-bit) words; `last` is the frame's last word (never unpacked
// past: a clamped word is not read from).
vec4 prev_quad(uint i, uint last) {
    if (pc.bytes_per_sample == 1u) {
        uint first = i >> 2u;
        uint q = funnel(prev_words[first], prev_words[min(first + 1u, last)], (i & 3u) * 8u);
        return to_pixels(uvec4(q, q >> 8u, q >> 16u, q >> 24u) & 255u);
    }
    uint first = i >> 1u;
    uint sh = (i & 1u) * 16u;
    uint w1 = prev_words[first + 1u];
    uint q0 = funnel(prev_words[first], w1, sh);
    uint q1 = funnel(w1, prev_words[min(first + 2u, last)], sh);
    return to_pixels(uvec4(q0, q0 >> 16u, q1, q1 >> 16u) & 65535u);
}

vec4 cur_quad(uint i, uint last) {
    if (pc.bytes_per_sample == 1u) {
        uint first = i >> 2u;
        uint q = funnel(cur_words[first], cur_words[min(first + 1u, last)], (i & 3u) * 8u);
        return to_pixels(uvec4(q, q >> 8u, q >> 16u, q >> 24u) & 255u);
    }
    uint first = i >> 1u;
    uint sh = (i & 1u) * 16u;
    uint w1 = cur_words[first + 1u];
    uint q0 = funnel(cur_words[first], w1, sh);
    uint q1 = funnel(w1, cur_words[min(first + 2u, last)], sh);
    return to_pixels(uvec4(q0, q0 >> 16u, q1, q1 >> 16u) & 65535u);
}
