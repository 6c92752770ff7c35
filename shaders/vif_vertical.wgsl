// vif_vertical: the vertical passes of one integer VIF scale (contract:
// VIF_VERTICAL in src/features/vif/gpu_integer.rs; the C dialect is
// kernels/vif.cl). WGSL for its 64-bit sums (shaders/README.md).
#include "vif_vertical_params.wgsl"
@group(0) @binding(3) var<storage, read_write> vsum: array<u32>;
@group(0) @binding(4) var<storage, read_write> vsub: array<u32>;

#include "vif_mirror.wgsl"

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

@compute @workgroup_size(64, 4, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let x = gid.x;
    let y = gid.y;
    let w = pc.w;
    let h = pc.h;
    if (x >= w || y >= h) {
        return;
    }
    let plane = w * h;
    let half = i32(pc.width / 2u);
    let o = y * w + x;
    var mu1 = 0u;
    var mu2 = 0u;
    if (pc.mode == 8u) {
        var xx = 0u;
        var yy = 0u;
        var xy = 0u;
        for (var k = 0u; k < pc.width; k++) {
            let i = mirror(i32(y) - half + i32(k), i32(h)) * w + x;
            let c = taps[pc.tap0 + k];
            let a = sample_ref(i);
            let b = sample_dis(i);
            let ca = c * a;
            let cb = c * b;
            mu1 += ca;
            mu2 += cb;
            xx += ca * a;
            yy += cb * b;
            xy += ca * b;
        }
        vsum[o] = (mu1 + 128u) >> 8u;
        vsum[plane + o] = (mu2 + 128u) >> 8u;
        vsum[2u * plane + o] = xx;
        vsum[3u * plane + o] = yy;
        vsum[4u * plane + o] = xy;
    } else {
        var xx = 0lu;
        var yy = 0lu;
        var xy = 0lu;
        for (var k = 0u; k < pc.width; k++) {
            let i = mirror(i32(y) - half + i32(k), i32(h)) * w + x;
            let c = taps[pc.tap0 + k];
            let a = sample_ref(i);
            let b = sample_dis(i);
            let ca = c * a;
            let cb = c * b;
            mu1 += ca;
            mu2 += cb;
            xx += u64(ca) * u64(a);
            yy += u64(cb) * u64(b);
            xy += u64(ca) * u64(b);
        }
        vsum[o] = ((mu1 + pc.mu_add) >> pc.mu_shift) & 0xffffu;
        vsum[plane + o] = ((mu2 + pc.mu_add) >> pc.mu_shift) & 0xffffu;
        vsum[2u * plane + o] = u32((xx + u64(pc.sq_add)) >> pc.sq_shift);
        vsum[3u * plane + o] = u32((yy + u64(pc.sq_add)) >> pc.sq_shift);
        vsum[4u * plane + o] = u32((xy + u64(pc.sq_add)) >> pc.sq_shift);
    }
    if (pc.sub_width > 0u && (y & 1u) == 0u && y / 2u < h / 2u) {
        let sub_half = i32(pc.sub_width / 2u);
        var sr = 0u;
        var sd = 0u;
        for (var k = 0u; k < pc.sub_width; k++) {
            let i = mirror(i32(y) - sub_half + i32(k), i32(h)) * w + x;
            let c = taps[pc.sub_tap0 + k];
            sr += c * sample_ref(i);
            sd += c * sample_dis(i);
        }
        let sub_plane = w * (h / 2u);
        vsub[(y / 2u) * w + x] = ((sr + pc.sub_add) >> pc.sub_shift) & 0xffffu;
        vsub[sub_plane + (y / 2u) * w + x] = ((sd + pc.sub_add) >> pc.sub_shift) & 0xffffu;
    }
}
