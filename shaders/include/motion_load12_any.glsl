// motion_sad's LOAD_ROW for 8- or 16-bit samples (pc.bytes_per_sample):
// away from the plane's edges (`inner`) the 12 columns are contiguous and
// read as words (LOAD12), near them one sample at a time (prev_four,
// cur_four). motion_sad_bytes swaps this file for motion_load12_bytes.glsl.

// Samples start .. start + 11 of a plane, as three ivec4, read as 4 words
// (8-bit) or 7 words (16-bit).
#define LOAD12(word, start, s0, s1, s2) \
    if (pc.bytes_per_sample == 1u) { \
        uint first = start >> 2u; \
        uint sh = (start & 3u) * 8u; \
        uint w0 = word(first, last); \
        uint w1 = word(first + 1u, last); \
        uint w2 = word(first + 2u, last); \
        uint w3 = word(first + 3u, last); \
        uint x0 = funnel(w0, w1, sh); \
        uint x1 = funnel(w1, w2, sh); \
        uint x2 = funnel(w2, w3, sh); \
        s0 = ivec4(uvec4(x0, x0 >> 8u, x0 >> 16u, x0 >> 24u) & 255u); \
        s1 = ivec4(uvec4(x1, x1 >> 8u, x1 >> 16u, x1 >> 24u) & 255u); \
        s2 = ivec4(uvec4(x2, x2 >> 8u, x2 >> 16u, x2 >> 24u) & 255u); \
    } else { \
        uint first = start >> 1u; \
        uint sh = (start & 1u) * 16u; \
        uint w0 = word(first, last); \
        uint w1 = word(first + 1u, last); \
        uint w2 = word(first + 2u, last); \
        uint w3 = word(first + 3u, last); \
        uint w4 = word(first + 4u, last); \
        uint w5 = word(first + 5u, last); \
        uint w6 = word(first + 6u, last); \
        uint x0 = funnel(w0, w1, sh); \
        uint x1 = funnel(w1, w2, sh); \
        uint x2 = funnel(w2, w3, sh); \
        uint x3 = funnel(w3, w4, sh); \
        uint x4 = funnel(w4, w5, sh); \
        uint x5 = funnel(w5, w6, sh); \
        s0 = ivec4(uvec4(x0, x0 >> 16u, x1, x1 >> 16u) & 65535u); \
        s1 = ivec4(uvec4(x2, x2 >> 16u, x3, x3 >> 16u) & 65535u); \
        s2 = ivec4(uvec4(x4, x4 >> 16u, x5, x5 >> 16u) & 65535u); \
    }

#define LOAD_ROW(row, p0, p1, p2, q0, q1, q2) \
    if (inner) { \
        uint start = row + uint(c0 - 2); \
        LOAD12(prev_word, start, p0, p1, p2) \
        LOAD12(cur_word, start, q0, q1, q2) \
    } else { \
        p0 = prev_four(row, k0, shift, bits); \
        p1 = prev_four(row, k1, shift, bits); \
        p2 = prev_four(row, k2, shift, bits); \
        q0 = cur_four(row, k0, shift, bits); \
        q1 = cur_four(row, k1, shift, bits); \
        q2 = cur_four(row, k2, shift, bits); \
    }
