// motion_sad's reads of 12 samples start .. start + 11 of a plane as three
// ivec4 s0, s1, s2: LOAD12_BYTES from 4 words (8-bit samples),
// LOAD12_WORDS from 7 (16-bit). Needs the kernel's `last` (the plane's
// last word) and funnel(). Which runs is the row include's
// (motion_row_any.glsl, motion_row_bytes.glsl).

#define LOAD12_BYTES(word, start, s0, s1, s2) \
    { \
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
    }

#define LOAD12_WORDS(word, start, s0, s1, s2) \
    { \
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
