#version 450
// float_vif_rows: vif_statistic_s's row sums (contract: FLOAT_VIF_ROWS in
// src/features/vif/gpu_float.rs; the C dialect is kernels/float_vif.cl):
// invocation i adds row i / 2 of plane i % 2 (num_val, den_val) in column
// order, in f32, into rows[i].
layout(local_size_x = 16, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Stat { float stat[]; };
layout(std430, set = 0, binding = 1) buffer Rows { float rows[]; };

layout(push_constant) uniform Params {
    uint w;
    uint h;
} pc;

// Columns loaded before their adds, which stay in column order: the adds
// wait on each other, the loads need not. With a row per invocation (1080
// at 1080p) a GPU has few invocations to hide load latency behind, so each
// keeps many loads in flight (32 at a time: 128 bytes of a row, against 8
// of each plane before; an H100's Vulkan driver spent 57% of float_vif's
// time in this kernel then).
#define BATCH 32u

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= 2u * pc.h) {
        return;
    }
    uint at = (i & 1u) * pc.w * pc.h + (i >> 1u) * pc.w;
    float s = 0.0;
    float t[BATCH];
    uint x = 0u;
    for (; x + BATCH <= pc.w; x += BATCH) {
        for (uint k = 0u; k < BATCH; k++) {
            t[k] = stat[at + x + k];
        }
        for (uint k = 0u; k < BATCH; k++) {
            s = s + t[k];
        }
    }
    for (; x < pc.w; x++) {
        s = s + stat[at + x];
    }
    rows[i] = s;
}
