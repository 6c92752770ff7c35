// vif_strip_any.wgsl for scales 1-3 (vif_vertical_strip_words:
// pc.format 2, pc.mode 16, which the host guarantees): the previous
// scale's u32 samples and vif_statistic_16's sums only, the same
// operations as vif_strip_any.wgsl's 16-bit side, without the sides
// lavapipe would run beside it.

fn sample_ref(i: u32) -> u32 {
    return ref_plane[i];
}

fn sample_dis(i: u32) -> u32 {
    return dis_plane[i];
}

struct Acc {
    lo: Sums16,
    hi: Sums16,
}

fn acc_zero() -> Acc {
    let z = vec4<u32>(0u);
    return Acc(Sums16(z, z, z, z, z, z, z, z), Sums16(z, z, z, z, z, z, z, z));
}

fn acc_add(acc: ptr<function, Acc>, c: vec4<u32>, alo: vec4<u32>, ahi: vec4<u32>, blo: vec4<u32>, bhi: vec4<u32>) {
    (*acc).lo = add16((*acc).lo, c, alo, blo);
    (*acc).hi = add16((*acc).hi, c, ahi, bhi);
}

fn acc_store(o: u32, plane: u32, acc: Acc, r: u32) {
    if (r < 4u) {
        store16(o, plane, acc.lo, r);
    } else {
        store16(o, plane, acc.hi, r - 4u);
    }
}
