// vif_vertical_strip's samples and sums for any input (the kernel's own
// include; its variants swap it, shaders/vif_vertical_strip.wgsl): the
// sample format (pc.format) and the statistic (pc.mode) chosen at run
// time. lavapipe runs both sides of each choice, so the 8-bit scale 0 and
// the 16-bit scales 1-3 run the variants that have only their own
// (vif_strip_bytes.wgsl, vif_strip_words.wgsl); this serves the rest
// (scale 0 above 8 bits) and the GPUs' forced strip shape.

// Sample i: 1 byte (format 0), a u16 (format 1) or a u32 (format 2).
fn sample_ref(i: u32) -> u32 {
    if (pc.format == 0u) {
        return (ref_plane[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
    }
    if (pc.format == 1u) {
        return (ref_plane[i >> 1u] >> ((i & 1u) * 16u)) & 0xffffu;
    }
    return ref_plane[i];
}

fn sample_dis(i: u32) -> u32 {
    if (pc.format == 0u) {
        return (dis_plane[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
    }
    if (pc.format == 1u) {
        return (dis_plane[i >> 1u] >> ((i & 1u) * 16u)) & 0xffffu;
    }
    return dis_plane[i];
}

// Both statistics' sums of the item's rows 0..3 (lo) and 4..7 (hi).
struct Acc {
    s8lo: Sums8,
    s8hi: Sums8,
    s16lo: Sums16,
    s16hi: Sums16,
}

fn acc_zero() -> Acc {
    let z = vec4<u32>(0u);
    return Acc(Sums8(z, z, z, z, z), Sums8(z, z, z, z, z), Sums16(z, z, z, z, z, z, z, z), Sums16(z, z, z, z, z, z, z, z));
}

// Tap c's share of the windows (a, b: rows 0..3 lo, 4..7 hi).
fn acc_add(acc: ptr<function, Acc>, c: vec4<u32>, alo: vec4<u32>, ahi: vec4<u32>, blo: vec4<u32>, bhi: vec4<u32>) {
    if (pc.mode == 8u) {
        (*acc).s8lo = add8((*acc).s8lo, c, alo, blo);
        (*acc).s8hi = add8((*acc).s8hi, c, ahi, bhi);
    } else {
        (*acc).s16lo = add16((*acc).s16lo, c, alo, blo);
        (*acc).s16hi = add16((*acc).s16hi, c, ahi, bhi);
    }
}

// Row r (0..7) of the item's sums to vsum at o.
fn acc_store(o: u32, plane: u32, acc: Acc, r: u32) {
    if (pc.mode == 8u) {
        if (r < 4u) {
            store8(o, plane, acc.s8lo, r);
        } else {
            store8(o, plane, acc.s8hi, r - 4u);
        }
    } else {
        if (r < 4u) {
            store16(o, plane, acc.s16lo, r);
        } else {
            store16(o, plane, acc.s16hi, r - 4u);
        }
    }
}
