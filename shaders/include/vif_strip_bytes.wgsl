// vif_strip_any.wgsl for the 8-bit scale 0 (vif_vertical_strip_bytes:
// pc.format 0, pc.mode 8, which the host guarantees): byte samples and
// vif_statistic_8's sums only, the same operations as vif_strip_any.wgsl's
// 8-bit side, without the sides lavapipe would run beside it.

fn sample_ref(i: u32) -> u32 {
    return (ref_plane[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
}

fn sample_dis(i: u32) -> u32 {
    return (dis_plane[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
}

struct Acc {
    lo: Sums8,
    hi: Sums8,
}

fn acc_zero() -> Acc {
    let z = vec4<u32>(0u);
    return Acc(Sums8(z, z, z, z, z), Sums8(z, z, z, z, z));
}

fn acc_add(acc: ptr<function, Acc>, c: vec4<u32>, alo: vec4<u32>, ahi: vec4<u32>, blo: vec4<u32>, bhi: vec4<u32>) {
    (*acc).lo = add8((*acc).lo, c, alo, blo);
    (*acc).hi = add8((*acc).hi, c, ahi, bhi);
}

fn acc_store(o: u32, plane: u32, acc: Acc, r: u32) {
    if (r < 4u) {
        store8(o, plane, acc.lo, r);
    } else {
        store8(o, plane, acc.hi, r - 4u);
    }
}
