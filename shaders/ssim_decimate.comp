#version 450
// ssim_decimate: one level of libvmaf's iqa decimation for both pictures
// (contract: SSIM_DECIMATE in src/features/ssim/gpu.rs).
//
// Mirrors iqa/decimate.c `_iqa_decimate` with iqa/convolve.c
// `_iqa_filter_pixel` (scale 1): output (x, y) of picture z is the k x k
// window at (x * factor, y * factor), rows and columns from -k/2 to
// k/2 - (k even), each sample mirrored by KBND_SYMMETRIC (-1 - i before the
// start, 2n - i - 1 past the end; the identity inside, where C does not
// mirror), `sum += double(sample * tap)` over window rows then columns in
// double, and the output is float(sum). float_ssim uses the box kernel of
// its scale (taps 1.0f / (scale * scale)), float_ms_ssim the 9x9 low-pass
// filter at factor 2. Every float product and add is NoContraction.
layout(local_size_x = 16, local_size_y = 16, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Source { float src[]; };
layout(std430, set = 0, binding = 1) buffer Dest { float dst[]; };
layout(std430, set = 0, binding = 2) readonly buffer Taps { float taps[]; };

layout(push_constant) uniform Params {
    uint width;
    uint height;
    uint out_width;
    uint out_height;
    uint factor;
    uint k;
} pc;

// KBND_SYMMETRIC, clamped afterwards (in bounds whatever the size; the
// host refuses the sizes where one reflection does not suffice).
int mirror(int i, int n) {
    int m = i < 0 ? -1 - i : (i >= n ? 2 * n - i - 1 : i);
    return clamp(m, 0, n - 1);
}

void main() {
    uint x = gl_GlobalInvocationID.x;
    uint y = gl_GlobalInvocationID.y;
    uint z = gl_GlobalInvocationID.z;
    if (x >= pc.out_width || y >= pc.out_height) {
        return;
    }
    int w = int(pc.width);
    int h = int(pc.height);
    int k = int(pc.k);
    int uc = k / 2;
    uint base = z * pc.width * pc.height;
    int cx = int(x * pc.factor) - uc;
    int cy = int(y * pc.factor) - uc;
    double sum = double(0.0);
    if (k == 9 && cx >= 0 && cy >= 0 && cx + 9 <= w && cy + 9 <= h) {
        // ms_ssim's 9x9 filter away from the edges, where mirroring is the
        // identity: the same products and adds in the same order, with
        // constant loop bounds and one row index a window row (the general
        // loop below: 46 µs a dispatch on an H100; this: 29).
        for (int v = 0; v < 9; v++) {
            uint row = base + uint(cy + v) * pc.width + uint(cx);
            for (int u = 0; u < 9; u++) {
                float p = src[row + uint(u)] * taps[v * 9 + u];
                sum += double(p);
            }
        }
        dst[z * pc.out_width * pc.out_height + y * pc.out_width + x] = float(sum);
        return;
    }
    for (int v = 0; v < k; v++) {
        uint row = base + uint(mirror(cy + v, h)) * pc.width;
        for (int u = 0; u < k; u++) {
            float p = src[row + uint(mirror(cx + u, w))] * taps[v * k + u];
            sum += double(p);
        }
    }
    dst[z * pc.out_width * pc.out_height + y * pc.out_width + x] = float(sum);
}
