// motion_sad's LOAD_ROW, a row's samples at the 12 columns k0, k1, k2 of
// both frames, for 8- or 16-bit samples (pc.bytes_per_sample): away from
// the plane's edges (`inner`) the 12 columns are contiguous and read as
// words (motion_load12.glsl), near them one sample at a time (prev_four,
// cur_four). motion_sad_bytes swaps this file for motion_row_bytes.glsl.

#define LOAD12(word, start, s0, s1, s2) \
    if (pc.bytes_per_sample == 1u) \
        LOAD12_BYTES(word, start, s0, s1, s2) \
    else \
        LOAD12_WORDS(word, start, s0, s1, s2)

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
