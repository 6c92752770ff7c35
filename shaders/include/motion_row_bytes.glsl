// motion_row_any.glsl's LOAD_ROW for 8-bit samples only
// (pc.bytes_per_sample 1, which the host guarantees: motion_sad_bytes),
// one way for every item: the 12 bytes from column lo = max(c0 - 2, 0) of
// the row, 4 words a frame (LOAD12_BYTES), and each of the 12 columns k0, k1, k2
// picked from them. Every column a summed output reads lies in the 12:
// inside the plane k = c0 - 2 .. c0 + 9 itself (lo = c0 - 2, the pick is
// the identity); at the left edge (c0 = 0) the mirrored columns are 0 .. 9;
// at the right one the columns outputs below w read mirror into c0 - 2 ..
// w - 1. Columns that only feed outputs past the plane may pick any of the
// 12 bytes (a sample: no overflow), and those outputs are never summed.
// The same samples as motion_row_any.glsl's, so the same sums, with no
// sample-by-sample loads, which lavapipe ran for every item.

// Byte idx (0 .. 11; anything else picks some byte) of the 12 in s0, s1, s2.
int pick(ivec4 s0, ivec4 s1, ivec4 s2, int idx) {
    ivec4 v = idx < 4 ? s0 : (idx < 8 ? s1 : s2);
    return v[idx & 3];
}

ivec4 pick4(ivec4 s0, ivec4 s1, ivec4 s2, ivec4 idx) {
    return ivec4(pick(s0, s1, s2, idx.x), pick(s0, s1, s2, idx.y), pick(s0, s1, s2, idx.z), pick(s0, s1, s2, idx.w));
}

#define LOAD_ROW(row, p0, p1, p2, q0, q1, q2) \
    { \
        int lo = max(c0 - 2, 0); \
        uint start = row + uint(lo); \
        ivec4 s0; \
        ivec4 s1; \
        ivec4 s2; \
        LOAD12_BYTES(prev_word, start, s0, s1, s2) \
        p0 = pick4(s0, s1, s2, k0 - lo); \
        p1 = pick4(s0, s1, s2, k1 - lo); \
        p2 = pick4(s0, s1, s2, k2 - lo); \
        LOAD12_BYTES(cur_word, start, s0, s1, s2) \
        q0 = pick4(s0, s1, s2, k0 - lo); \
        q1 = pick4(s0, s1, s2, k1 - lo); \
        q2 = pick4(s0, s1, s2, k2 - lo); \
    }
