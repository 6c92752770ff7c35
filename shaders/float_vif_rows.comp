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
    // Eight columns' loads before their adds, which stay in column order:
    // the adds wait on each other, the loads need not.
    uint x = 0u;
    for (; x + 8u <= pc.w; x += 8u) {
        vec4 n0 = vec4(stat[num + x], stat[num + x + 1u], stat[num + x + 2u], stat[num + x + 3u]);
        vec4 n1 = vec4(stat[num + x + 4u], stat[num + x + 5u], stat[num + x + 6u], stat[num + x + 7u]);
        vec4 d0 = vec4(stat[den + x], stat[den + x + 1u], stat[den + x + 2u], stat[den + x + 3u]);
        vec4 d1 = vec4(stat[den + x + 4u], stat[den + x + 5u], stat[den + x + 6u], stat[den + x + 7u]);
        n = n + n0.x;
        n = n + n0.y;
        n = n + n0.z;
        n = n + n0.w;
        n = n + n1.x;
        n = n + n1.y;
        n = n + n1.z;
        n = n + n1.w;
        d = d + d0.x;
        d = d + d0.y;
        d = d + d0.z;
        d = d + d0.w;
        d = d + d1.x;
        d = d + d1.y;
        d = d + d1.z;
        d = d + d1.w;
    }
    for (; x < pc.w; x++) {
        n = n + stat[num + x];
        d = d + stat[den + x];
    }
    rows[2u * y] = n;
    rows[2u * y + 1u] = d;
}
