#version 450
// float_vif_vertical_strip: FLOAT_VIF_VERTICAL's contract in the shape for
// CPU drivers (src/features/vif/gpu_float.rs; the C dialect is
// kernels/float_vif.cl). Item (x, g) makes rows y0 .. y0 + 7 (y0 = 8 g) of
// column x: each sample of the column is loaded once into a window of
// eight registers that slides one row per tap, so eight outputs take 7 +
// width loads a picture where an item per pixel takes 8 width (lavapipe
// loads a storage buffer lane by lane, or gathers: the loads are its
// cost). The next scale's filter reads the same rows (its taps are the
// middle sub_width of this scale's), so it adds from the same window, with
// no loads of its own. Each output still adds its taps from 0 in tap
// order, in f32, and the products r·r, d·d, r·d are the per-pixel kernel's;
// the build marks every float multiply and add NoContraction.
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Reference { uint ref_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer Distorted { uint dis_words[]; };
layout(std430, set = 0, binding = 2) readonly buffer Taps { float taps[]; };
layout(std430, set = 0, binding = 3) buffer Vsum { float vsum[]; };
layout(std430, set = 0, binding = 4) buffer Vsub { float vsub[]; };

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

// The samples, by format (include/float_vif_samples_any.glsl; the
// variants for byte and float inputs read only theirs: lavapipe runs every
// side of a run-time choice, here three loads a sample).
#variant float_vif_vertical_strip_bytes "float_vif_samples_any.glsl" "float_vif_samples_bytes.glsl"
#variant float_vif_vertical_strip_floats "float_vif_samples_any.glsl" "float_vif_samples_floats.glsl"
#include "float_vif_samples_any.glsl"

void main() {
    uint x = gl_GlobalInvocationID.x;
    uint y0 = gl_GlobalInvocationID.y * 8u;
    if (x >= pc.w || y0 >= pc.h) {
        return;
    }
    uint w = pc.w;
    int h = int(pc.h);
    uint plane = w * pc.h;
    int p0 = int(y0) - int(pc.width / 2u);
    // Windows (rows p0 + k + 0..3 in lo, + 4..7 in hi at tap k) of r, d,
    // r·r, d·d, r·d, and the five sums alike.
    vec4 alo = vec4(0.0), ahi = vec4(0.0), blo = vec4(0.0), bhi = vec4(0.0), aalo = vec4(0.0), aahi = vec4(0.0);
    vec4 bblo = vec4(0.0), bbhi = vec4(0.0), ablo = vec4(0.0), abhi = vec4(0.0);
    for (int r = 0; r < 7; r++) {
        uint i = mirror(p0 + r, h) * w + x;
        float a = sample_ref(i);
        float b = sample_dis(i);
        // Shift in from the top: after seven, rows p0 .. p0 + 6 sit in
        // slots 0 .. 6.
        alo = vec4(alo.yzw, ahi.x);
        ahi = vec4(ahi.yzw, a);
        blo = vec4(blo.yzw, bhi.x);
        bhi = vec4(bhi.yzw, b);
        aalo = vec4(aalo.yzw, aahi.x);
        aahi = vec4(aahi.yzw, a * a);
        bblo = vec4(bblo.yzw, bbhi.x);
        bbhi = vec4(bbhi.yzw, b * b);
        ablo = vec4(ablo.yzw, abhi.x);
        abhi = vec4(abhi.yzw, a * b);
    }
    // The seven loads left slots 1 .. 7 filled; move them to 0 .. 6.
    alo = vec4(alo.yzw, ahi.x);
    ahi = vec4(ahi.yzw, 0.0);
    blo = vec4(blo.yzw, bhi.x);
    bhi = vec4(bhi.yzw, 0.0);
    aalo = vec4(aalo.yzw, aahi.x);
    aahi = vec4(aahi.yzw, 0.0);
    bblo = vec4(bblo.yzw, bbhi.x);
    bbhi = vec4(bbhi.yzw, 0.0);
    ablo = vec4(ablo.yzw, abhi.x);
    abhi = vec4(abhi.yzw, 0.0);
    vec4 m1lo = vec4(0.0), m1hi = vec4(0.0), m2lo = vec4(0.0), m2hi = vec4(0.0);
    vec4 xxlo = vec4(0.0), xxhi = vec4(0.0), yylo = vec4(0.0), yyhi = vec4(0.0);
    vec4 xylo = vec4(0.0), xyhi = vec4(0.0);
    // The next scale's sums at the even rows y0, y0 + 2, y0 + 4, y0 + 6;
    // its tap k - d reads the row this scale's tap k reads.
    vec4 sr = vec4(0.0), sd = vec4(0.0);
    uint d = pc.width / 2u - pc.sub_width / 2u;
    for (uint k = 0u; k < pc.width; k++) {
        uint i = mirror(p0 + int(k) + 7, h) * w + x;
        float a = sample_ref(i);
        float b = sample_dis(i);
        ahi.w = a;
        bhi.w = b;
        aahi.w = a * a;
        bbhi.w = b * b;
        abhi.w = a * b;
        vec4 c = vec4(taps[pc.tap0 + k]);
        m1lo = m1lo + c * alo;
        m1hi = m1hi + c * ahi;
        m2lo = m2lo + c * blo;
        m2hi = m2hi + c * bhi;
        xxlo = xxlo + c * aalo;
        xxhi = xxhi + c * aahi;
        yylo = yylo + c * bblo;
        yyhi = yyhi + c * bbhi;
        xylo = xylo + c * ablo;
        xyhi = xyhi + c * abhi;
        if (k - d < pc.sub_width) {
            vec4 cs = vec4(taps[pc.sub_tap0 + k - d]);
            sr = sr + cs * vec4(alo.xz, ahi.xz);
            sd = sd + cs * vec4(blo.xz, bhi.xz);
        }
        alo = vec4(alo.yzw, ahi.x);
        ahi = vec4(ahi.yzw, 0.0);
        blo = vec4(blo.yzw, bhi.x);
        bhi = vec4(bhi.yzw, 0.0);
        aalo = vec4(aalo.yzw, aahi.x);
        aahi = vec4(aahi.yzw, 0.0);
        bblo = vec4(bblo.yzw, bbhi.x);
        bbhi = vec4(bbhi.yzw, 0.0);
        ablo = vec4(ablo.yzw, abhi.x);
        abhi = vec4(abhi.yzw, 0.0);
    }
    float m1[8] = float[8](m1lo.x, m1lo.y, m1lo.z, m1lo.w, m1hi.x, m1hi.y, m1hi.z, m1hi.w);
    float m2[8] = float[8](m2lo.x, m2lo.y, m2lo.z, m2lo.w, m2hi.x, m2hi.y, m2hi.z, m2hi.w);
    float xx[8] = float[8](xxlo.x, xxlo.y, xxlo.z, xxlo.w, xxhi.x, xxhi.y, xxhi.z, xxhi.w);
    float yy[8] = float[8](yylo.x, yylo.y, yylo.z, yylo.w, yyhi.x, yyhi.y, yyhi.z, yyhi.w);
    float xy[8] = float[8](xylo.x, xylo.y, xylo.z, xylo.w, xyhi.x, xyhi.y, xyhi.z, xyhi.w);
    for (uint r = 0u; r < 8u; r++) {
        uint y = y0 + r;
        if (y < pc.h) {
            uint o = y * w + x;
            vsum[o] = m1[r];
            vsum[plane + o] = m2[r];
            vsum[2u * plane + o] = xx[r];
            vsum[3u * plane + o] = yy[r];
            vsum[4u * plane + o] = xy[r];
        }
    }
    if (pc.sub_width > 0u) {
        uint sub_plane = w * (pc.h / 2u);
        float srs[4] = float[4](sr.x, sr.y, sr.z, sr.w);
        float sds[4] = float[4](sd.x, sd.y, sd.z, sd.w);
        for (uint m = 0u; m < 4u; m++) {
            uint n = y0 / 2u + m;
            if (n < pc.h / 2u) {
                vsub[n * w + x] = srs[m];
                vsub[sub_plane + n * w + x] = sds[m];
            }
        }
    }
}
