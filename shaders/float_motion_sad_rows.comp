#version 450
// float_motion_sad_rows: each row's sum of |prev - cur| over the blurred
// planes, in pixel order (contract: FLOAT_MOTION_SAD_ROWS in
// src/features/motion/gpu.rs; C dialect in kernels/motion.cl).
//
// libvmaf motion.c vmaf_image_sad_c's inner loop: accum_line +=
// fabs(a - b), left to right in f32 (the C's double fabs rounds back to
// the same float). One invocation per row; the host adds the rows in order.
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Blur { float blur[]; };
layout(std430, set = 0, binding = 1) buffer Rows { float rows[]; };

layout(push_constant) uniform Params {
    uint width;
    uint height;
    uint row_offset;
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.height) {
        return;
    }
    uint n = pc.width * pc.height;
    uint a = i * pc.width;
    float line = 0.0;
    for (uint j = 0u; j < pc.width; j++) {
        float d = blur[a + j] - blur[n + a + j];
        line += d < 0.0 ? -d : d;
    }
    rows[pc.row_offset + i] = line;
}
