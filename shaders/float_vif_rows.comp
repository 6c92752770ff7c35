#version 450
// float_vif_rows: vif_statistic_s's row sums (contract: FLOAT_VIF_ROWS in
// src/features/vif/gpu_float.rs; the C dialect is kernels/float_vif.cl):
// invocation y adds row y's num_val and den_val in column order, in f32.
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Stat { float stat[]; };
layout(std430, set = 0, binding = 1) buffer Rows { float rows[]; };

layout(push_constant) uniform Params {
    uint w;
    uint h;
} pc;

void main() {
    uint y = gl_GlobalInvocationID.x;
    if (y >= pc.h) {
        return;
    }
    uint num = y * pc.w;
    uint den = pc.w * pc.h + y * pc.w;
    float n = 0.0;
    float d = 0.0;
    for (uint x = 0u; x < pc.w; x++) {
        n = n + stat[num + x];
        d = d + stat[den + x];
    }
    rows[2u * y] = n;
    rows[2u * y + 1u] = d;
}
