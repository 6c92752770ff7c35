// motion_load12_any.glsl's LOAD12 for 8-bit samples only (motion_sad_bytes).

// Samples start .. start + 11 of a plane, as three ivec4, read as 4 words
// (8-bit samples only: pc.bytes_per_sample 1, which the host guarantees).
#define LOAD12(word, start, s0, s1, s2) \
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
