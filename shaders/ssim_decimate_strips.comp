#version 450
// ssim_decimate_strips: ssim_decimate's CPU-driver shape for ms_ssim's 9x9
// filter at factor 2 (contract: SSIM_DECIMATE_STRIPS in
// src/features/ssim/gpu.rs): the same outputs, `strip` of them down a
// column per invocation, each sample read once. A kernel of its own so
// that its registers do not weigh on the GPU shape's.
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
    // Outputs per invocation, down a column: y = strip * gid.y + j.
    uint strip;
} pc;

// KBND_SYMMETRIC, clamped afterwards (in bounds whatever the size; the
// host refuses the sizes where one reflection does not suffice).
int mirror(int i, int n) {
    int m = i < 0 ? -1 - i : (i >= n ? 2 * n - i - 1 : i);
    return clamp(m, 0, n - 1);
}

// The strip shape: column x, rows y0..y1 - 1 of picture z, k = 9, factor 2.
// win[v][u] holds window row v, column u; the mirrored columns are read
// once, the taps are constants (include/ms_ssim_lpf.glsl). Every loop runs a constant 2, 7 or 9 times, so
// the driver unrolls it and the arrays stay in registers (a long loop that
// indexes them would not be unrolled, and the arrays go to memory).
void strips(uint x, uint y0, uint z) {
    int w = int(pc.width);
    int h = int(pc.height);
    uint base = z * pc.width * pc.height;
    uint y1 = min(y0 + pc.strip, pc.out_height);
    float t[9][9];
    float win[9][9];
    uint col[9];
    // The taps are ms_ssim's g_lpf, constants here (the host loads this
    // kernel for no other filter); the length query keeps `taps` bound,
    // the contract's third buffer, and the driver drops it.
#include "ms_ssim_lpf.glsl"
    uint taps_bound = uint(taps.length());
    int cx = int(x * 2u) - 4;
    for (int u = 0; u < 9; u++) {
        col[u] = uint(mirror(cx + u, w));
    }
    // Rows 2..8 of the window before the first step (0..6 of the first
    // output's window); each step shifts two rows out and reads two.
    int cy0 = int(y0 * 2u) - 4;
    for (int v = 0; v < 7; v++) {
        uint row = base + uint(mirror(cy0 + v, h)) * pc.width;
        for (int u = 0; u < 9; u++) {
            win[v + 2][u] = src[row + col[u]];
        }
    }
    for (uint y = y0; y < y1; y++) {
        int cy = int(y * 2u) - 4;
        for (int v = 0; v < 7; v++) {
            for (int u = 0; u < 9; u++) {
                win[v][u] = win[v + 2][u];
            }
        }
        for (int v = 7; v < 9; v++) {
            uint row = base + uint(mirror(cy + v, h)) * pc.width;
            for (int u = 0; u < 9; u++) {
                win[v][u] = src[row + col[u]];
            }
        }
        double sum = double(0.0);
        for (int v = 0; v < 9; v++) {
            for (int u = 0; u < 9; u++) {
                float p = win[v][u] * t[v][u];
                sum += double(p);
            }
        }
        dst[z * pc.out_width * pc.out_height + y * pc.out_width + x] = float(sum);
    }
}

void main() {
    uint sx = gl_GlobalInvocationID.x;
    uint sy = gl_GlobalInvocationID.y * pc.strip;
    if (sx < pc.out_width && sy < pc.out_height) {
        strips(sx, sy, gl_GlobalInvocationID.z);
    }
}
