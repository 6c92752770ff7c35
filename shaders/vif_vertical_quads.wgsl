// vif_vertical_quads: VIF_VERTICAL's outputs for 8-bit samples at scale 0
// (format 0, mode 8) in the CPU drivers' shape, four columns a work item
// (contract: VIF_VERTICAL_QUADS in src/features/vif/gpu_integer.rs; the C
// dialect is kernels/vif.cl). Item (q, g) makes rows y0 .. y0 + 7 (y0 =
// 8 g) of columns 4q .. 4q + 3 (rows of a multiple of 4 samples, which the
// host guarantees): a row's four samples are one word, and each row of
// each sum goes out as one vec4. vif_vertical_strip_bytes makes the same
// sums a column an item, with a load a sample and a store a sum: lavapipe
// loads and stores a storage buffer lane by lane, so those were its cost.
// The sums are integers (u32, wrapping as C's): any order, the same bits.
#include "vif_vertical_params.wgsl"
@group(0) @binding(3) var<storage, read_write> vsum: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> vsub: array<vec4<u32>>;

#include "vif_mirror.wgsl"

// The four byte samples of a word, first in x.
fn bytes4(word: u32) -> vec4<u32> {
    return (vec4<u32>(word) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(0xffu);
}

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let x0 = gid.x * 4u;
    let y0 = gid.y * 8u;
    let w = pc.w;
    let h = pc.h;
    if (x0 >= w || y0 >= h) {
        return;
    }
    let quads = w / 4u;
    let plane = quads * h;
    let hi = i32(h);
    let p0 = i32(y0) - i32(pc.width / 2u);
    let q = x0 / 4u;
    // Row windows of r and d: a[j] holds row p0 + k + j (its four columns)
    // at tap k; slot 7 is read at each tap.
    var a: array<vec4<u32>, 8>;
    var b: array<vec4<u32>, 8>;
    for (var r = 0; r < 7; r++) {
        let i = mirror(p0 + r, hi) * quads + q;
        a[r] = bytes4(ref_plane[i]);
        b[r] = bytes4(dis_plane[i]);
    }
    var mu1: array<vec4<u32>, 8>;
    var mu2: array<vec4<u32>, 8>;
    var xx: array<vec4<u32>, 8>;
    var yy: array<vec4<u32>, 8>;
    var xy: array<vec4<u32>, 8>;
    for (var r = 0u; r < 8u; r++) {
        mu1[r] = vec4<u32>(0u);
        mu2[r] = vec4<u32>(0u);
        xx[r] = vec4<u32>(0u);
        yy[r] = vec4<u32>(0u);
        xy[r] = vec4<u32>(0u);
    }
    // The next scale's sums at rows y0, y0 + 2, y0 + 4, y0 + 6: its tap
    // k - d reads the row this scale's tap k reads.
    var sr: array<vec4<u32>, 4>;
    var sd: array<vec4<u32>, 4>;
    for (var m = 0u; m < 4u; m++) {
        sr[m] = vec4<u32>(0u);
        sd[m] = vec4<u32>(0u);
    }
    let d = pc.width / 2u - pc.sub_width / 2u;
    for (var k = 0u; k < pc.width; k++) {
        let i = mirror(p0 + i32(k) + 7, hi) * quads + q;
        a[7] = bytes4(ref_plane[i]);
        b[7] = bytes4(dis_plane[i]);
        let c = vec4<u32>(taps[pc.tap0 + k]);
        for (var r = 0u; r < 8u; r++) {
            mu1[r] += c * a[r];
            mu2[r] += c * b[r];
            xx[r] += c * (a[r] * a[r]);
            yy[r] += c * (b[r] * b[r]);
            xy[r] += c * (a[r] * b[r]);
        }
        if (k - d < pc.sub_width) {
            let cs = vec4<u32>(taps[pc.sub_tap0 + k - d]);
            for (var m = 0u; m < 4u; m++) {
                sr[m] += cs * a[2u * m];
                sd[m] += cs * b[2u * m];
            }
        }
        for (var r = 0u; r < 7u; r++) {
            a[r] = a[r + 1u];
            b[r] = b[r + 1u];
        }
    }
    let round = vec4<u32>(128u);
    let eight = vec4<u32>(8u);
    for (var r = 0u; r < 8u; r++) {
        if (y0 + r < h) {
            let o = (y0 + r) * quads + q;
            vsum[o] = (mu1[r] + round) >> eight;
            vsum[plane + o] = (mu2[r] + round) >> eight;
            vsum[2u * plane + o] = xx[r];
            vsum[3u * plane + o] = yy[r];
            vsum[4u * plane + o] = xy[r];
        }
    }
    if (pc.sub_width > 0u) {
        let sub_plane = quads * (h / 2u);
        let n0 = y0 / 2u;
        let add = vec4<u32>(pc.sub_add);
        let shift = vec4<u32>(pc.sub_shift);
        let mask = vec4<u32>(0xffffu);
        for (var m = 0u; m < 4u; m++) {
            if (n0 + m < h / 2u) {
                vsub[(n0 + m) * quads + q] = ((sr[m] + add) >> shift) & mask;
                vsub[sub_plane + (n0 + m) * quads + q] = ((sd[m] + add) >> shift) & mask;
            }
        }
    }
}
