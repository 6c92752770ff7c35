#version 450
// float_motion_sad_scaled_rows: with motion_add_scale1, each row's SAD of
// the bilinear halves of both blurred planes, sampled on the fly, in pixel
// order (contract: FLOAT_MOTION_SAD_SCALED_ROWS in
// src/features/motion/gpu.rs; C dialect in kernels/motion.cl).
//
// libvmaf vif_tools.c vif_scale_frame_bilinear_apply_s per sample:
// (1-dy)(1-dx) a + (1-dy) dx b + dy (1-dx) c + dy dx d, left to right in
// f32, with the neighbours and weights the host computed as
// vif_scale_frame_bilinear_precompute_columns_s does (index: x1, x2 per
// scaled column then y1, y2 per scaled row; weight: dx then dy); then
// motion.c's accum_line += fabs(a - b).
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Blur { float blur[]; };
layout(std430, set = 0, binding = 1) readonly buffer Index { uint index[]; };
layout(std430, set = 0, binding = 2) readonly buffer Weight { float weight[]; };
layout(std430, set = 0, binding = 3) buffer Rows { float rows[]; };

layout(push_constant) uniform Params {
    uint width;
    uint height;
    uint scaled_width;
    uint scaled_height;
    uint row_offset;
} pc;

float bilinear(float dx, float dy, float a, float b, float c, float d) {
    float ex = 1.0 - dx;
    float ey = 1.0 - dy;
    float s = (ey * ex) * a;
    s += (ey * dx) * b;
    s += (dy * ex) * c;
    s += (dy * dx) * d;
    return s;
}

void main() {
    uint y = gl_GlobalInvocationID.x;
    if (y >= pc.scaled_height) {
        return;
    }
    uint n = pc.width * pc.height;
    uint y1 = index[2u * (pc.scaled_width + y)] * pc.width;
    uint y2 = index[2u * (pc.scaled_width + y) + 1u] * pc.width;
    float dy = weight[pc.scaled_width + y];
    float line = 0.0;
    for (uint x = 0u; x < pc.scaled_width; x++) {
        uint x1 = index[2u * x];
        uint x2 = index[2u * x + 1u];
        float dx = weight[x];
        float a = bilinear(dx, dy, blur[y1 + x1], blur[y1 + x2], blur[y2 + x1], blur[y2 + x2]);
        float b = bilinear(dx, dy, blur[n + y1 + x1], blur[n + y1 + x2], blur[n + y2 + x1], blur[n + y2 + x2]);
        float d = a - b;
        line += d < 0.0 ? -d : d;
    }
    rows[pc.row_offset + y] = line;
}
