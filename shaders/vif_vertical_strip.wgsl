// vif_vertical_strip: VIF_VERTICAL's arithmetic in the shape for CPU
// drivers (contract: VIF_VERTICAL_STRIP in src/features/vif/gpu_integer.rs;
// the C dialect is kernels/vif.cl). Item (x, g) makes rows y0 .. y0 + 7
// (y0 = 8 g) of column x: each sample of the column is loaded once into a
// window of eight that slides a row per tap, where an item per pixel loads
// it `width` times (lavapipe loads storage buffers lane by lane, or
// gathers: the loads are its cost). The next scale's filter reads the same
// rows (its taps are the middle sub_width of this scale's), so it adds
// from the same window with no loads of its own. The sums are integers, so
// any order gives the same bits.
#include "vif_vertical_params.wgsl"
@group(0) @binding(3) var<storage, read_write> vsum: array<u32>;
@group(0) @binding(4) var<storage, read_write> vsub: array<u32>;

#include "vif_mirror.wgsl"

// The sums (include/vif_strip_sums.wgsl) and, by the input, the samples
// and which sums run (include/vif_strip_any.wgsl; the variants for the
// 8-bit scale 0 and the 16-bit scales 1-3 take only their own: lavapipe
// runs both sides of a run-time choice).
#variant vif_vertical_strip_bytes "vif_strip_any.wgsl" "vif_strip_bytes.wgsl"
#variant vif_vertical_strip_words "vif_strip_any.wgsl" "vif_strip_words.wgsl"
#include "vif_strip_sums.wgsl"
#include "vif_strip_any.wgsl"

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let x = gid.x;
    let y0 = gid.y * 8u;
    let w = pc.w;
    let h = pc.h;
    if (x >= w || y0 >= h) {
        return;
    }
    let plane = w * h;
    let hi = i32(h);
    let p0 = i32(y0) - i32(pc.width / 2u);
    // Windows of r and d: rows p0 + k + 0..3 (lo) and + 4..7 (hi) at tap k.
    var alo = vec4<u32>(0u);
    var ahi = vec4<u32>(0u);
    var blo = vec4<u32>(0u);
    var bhi = vec4<u32>(0u);
    for (var r = 0; r < 7; r++) {
        let i = mirror(p0 + r, hi) * w + x;
        alo = vec4<u32>(alo.yzw, ahi.x);
        ahi = vec4<u32>(ahi.yzw, sample_ref(i));
        blo = vec4<u32>(blo.yzw, bhi.x);
        bhi = vec4<u32>(bhi.yzw, sample_dis(i));
    }
    // Rows p0 .. p0 + 6 now sit in slots 1 .. 7; move them to 0 .. 6.
    alo = vec4<u32>(alo.yzw, ahi.x);
    ahi = vec4<u32>(ahi.yzw, 0u);
    blo = vec4<u32>(blo.yzw, bhi.x);
    bhi = vec4<u32>(bhi.yzw, 0u);
    // The next scale's sums at rows y0, y0 + 2, y0 + 4, y0 + 6: its tap
    // k - d reads the row this scale's tap k reads.
    var sr = vec4<u32>(0u);
    var sd = vec4<u32>(0u);
    let d = pc.width / 2u - pc.sub_width / 2u;
    var acc = acc_zero();
    for (var k = 0u; k < pc.width; k++) {
        let i = mirror(p0 + i32(k) + 7, hi) * w + x;
        ahi.w = sample_ref(i);
        bhi.w = sample_dis(i);
        let c = vec4<u32>(taps[pc.tap0 + k]);
        acc_add(&acc, c, alo, ahi, blo, bhi);
        if (k - d < pc.sub_width) {
            let cs = vec4<u32>(taps[pc.sub_tap0 + k - d]);
            sr += cs * vec4<u32>(alo.xz, ahi.xz);
            sd += cs * vec4<u32>(blo.xz, bhi.xz);
        }
        alo = vec4<u32>(alo.yzw, ahi.x);
        ahi = vec4<u32>(ahi.yzw, 0u);
        blo = vec4<u32>(blo.yzw, bhi.x);
        bhi = vec4<u32>(bhi.yzw, 0u);
    }
    for (var r = 0u; r < 8u && y0 + r < h; r++) {
        let o = (y0 + r) * w + x;
        acc_store(o, plane, acc, r);
    }
    if (pc.sub_width > 0u) {
        let sub_plane = w * (h / 2u);
        let n0 = y0 / 2u;
        for (var m = 0u; m < 4u && n0 + m < h / 2u; m++) {
            vsub[(n0 + m) * w + x] = ((sr[m] + pc.sub_add) >> pc.sub_shift) & 0xffffu;
            vsub[sub_plane + (n0 + m) * w + x] = ((sd[m] + pc.sub_add) >> pc.sub_shift) & 0xffffu;
        }
    }
}
