#version 450
// float_vif_vertical_quads: FLOAT_VIF_VERTICAL_STRIP's outputs for byte
// samples (format 0) on rows of a multiple of 4 samples, four columns a
// work item (contract: FLOAT_VIF_VERTICAL_QUADS in
// src/features/vif/gpu_float.rs; the C dialect is kernels/float_vif.cl).
// Item (q, g) makes rows y0 .. y0 + 7 (y0 = 8 g) of columns 4q .. 4q + 3:
// a row's four samples are one word, and each row of each sum goes out as
// one vec4. float_vif_vertical_strip_bytes makes the same outputs a column
// an item, a load a sample and a store a sum: lavapipe loads and stores a
// storage buffer lane by lane, so those were its cost. Each output adds
// its taps from 0 in tap order in f32, the products r·r, d·d, r·d as the
// per-pixel kernel's (component by component: the same operations); the
// build marks every float multiply and add NoContraction. Every loop runs
// a constant count (row checks inside), so the driver unrolls it and the
// arrays stay in registers.
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Reference { uint ref_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer Distorted { uint dis_words[]; };
layout(std430, set = 0, binding = 2) readonly buffer Taps { float taps[]; };
layout(std430, set = 0, binding = 3) buffer Vsum { vec4 vsum[]; };
layout(std430, set = 0, binding = 4) buffer Vsub { vec4 vsub[]; };

layout(push_constant) uniform Params {
    uint w;
    uint h;
    uint format;
    float inv;
    uint tap0;
    uint width;
    uint sub_tap0;
    uint sub_width;
} pc;

uint mirror(int i, int n) {
    int m = i;
    if (i < 0) {
        m = -i;
    } else if (i >= n) {
        m = 2 * n - i - 2;
    }
    return uint(clamp(m, 0, n - 1));
}

// The four byte samples of a word, first in x, less 128 (the samples
// float_vif_samples_bytes.glsl reads one at a time).
vec4 bytes4(uint word) {
    uvec4 v = (uvec4(word) >> uvec4(0u, 8u, 16u, 24u)) & uvec4(0xffu);
    return vec4(v) - vec4(128.0);
}

void main() {
    uint q = gl_GlobalInvocationID.x;
    uint y0 = gl_GlobalInvocationID.y * 8u;
    uint quads = pc.w / 4u;
    if (q >= quads || y0 >= pc.h) {
        return;
    }
    int h = int(pc.h);
    uint plane = quads * pc.h;
    int p0 = int(y0) - int(pc.width / 2u);
    // Row windows: slot j holds row p0 + k + j (four columns) at tap k;
    // slot 7 is read at each tap.
    vec4 a[8];
    vec4 b[8];
    vec4 aa[8];
    vec4 bb[8];
    vec4 ab[8];
    for (int r = 0; r < 7; r++) {
        uint i = mirror(p0 + r, h) * quads + q;
        a[r] = bytes4(ref_words[i]);
        b[r] = bytes4(dis_words[i]);
        aa[r] = a[r] * a[r];
        bb[r] = b[r] * b[r];
        ab[r] = a[r] * b[r];
    }
    vec4 m1[8];
    vec4 m2[8];
    vec4 xx[8];
    vec4 yy[8];
    vec4 xy[8];
    for (int r = 0; r < 8; r++) {
        m1[r] = vec4(0.0);
        m2[r] = vec4(0.0);
        xx[r] = vec4(0.0);
        yy[r] = vec4(0.0);
        xy[r] = vec4(0.0);
    }
    // The next scale's sums at rows y0, y0 + 2, y0 + 4, y0 + 6: its tap
    // k - d reads the row this scale's tap k reads.
    vec4 sr[4];
    vec4 sd[4];
    for (int m = 0; m < 4; m++) {
        sr[m] = vec4(0.0);
        sd[m] = vec4(0.0);
    }
    uint d = pc.width / 2u - pc.sub_width / 2u;
    for (uint k = 0u; k < pc.width; k++) {
        uint i = mirror(p0 + int(k) + 7, h) * quads + q;
        a[7] = bytes4(ref_words[i]);
        b[7] = bytes4(dis_words[i]);
        aa[7] = a[7] * a[7];
        bb[7] = b[7] * b[7];
        ab[7] = a[7] * b[7];
        vec4 c = vec4(taps[pc.tap0 + k]);
        for (int r = 0; r < 8; r++) {
            m1[r] = m1[r] + c * a[r];
            m2[r] = m2[r] + c * b[r];
            xx[r] = xx[r] + c * aa[r];
            yy[r] = yy[r] + c * bb[r];
            xy[r] = xy[r] + c * ab[r];
        }
        if (k - d < pc.sub_width) {
            vec4 cs = vec4(taps[pc.sub_tap0 + k - d]);
            for (int m = 0; m < 4; m++) {
                sr[m] = sr[m] + cs * a[2 * m];
                sd[m] = sd[m] + cs * b[2 * m];
            }
        }
        for (int r = 0; r < 7; r++) {
            a[r] = a[r + 1];
            b[r] = b[r + 1];
            aa[r] = aa[r + 1];
            bb[r] = bb[r + 1];
            ab[r] = ab[r + 1];
        }
    }
    for (int r = 0; r < 8; r++) {
        uint y = y0 + uint(r);
        if (y < pc.h) {
            uint o = y * quads + q;
            vsum[o] = m1[r];
            vsum[plane + o] = m2[r];
            vsum[2u * plane + o] = xx[r];
            vsum[3u * plane + o] = yy[r];
            vsum[4u * plane + o] = xy[r];
        }
    }
    if (pc.sub_width > 0u) {
        uint sub_plane = quads * (pc.h / 2u);
        for (int m = 0; m < 4; m++) {
            uint n = y0 / 2u + uint(m);
            if (n < pc.h / 2u) {
                vsub[n * quads + q] = sr[m];
                vsub[sub_plane + n * quads + q] = sd[m];
            }
        }
    }
}
