#version 450
// float_motion_blur_x: the horizontal pass of float_motion's blur for both
// frames (contract: FLOAT_MOTION_BLUR_X in src/features/motion/gpu.rs; C
// dialect in kernels/motion.cl).
//
// libvmaf common/convolution.c convolution_x_c_s on the vertical pass's
// output: accum = 0, accum += taps[k] * tmp[column k] for k in order,
// columns mirrored `n - (i - n + 2)`, each operation rounded on its own.
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Taps { float taps[]; };
layout(std430, set = 0, binding = 1) readonly buffer Tmp { float tmp[]; };
layout(std430, set = 0, binding = 2) buffer Blur { float blur[]; };

layout(push_constant) uniform Params {
    uint width;
    uint height;
    uint filter_width;
} pc;

int mirror(int i, int n) {
    return i < 0 ? -i : (i >= n ? n - (i - n + 2) : i);
}

void main() {
    uint n = pc.width * pc.height;
    uint p = gl_GlobalInvocationID.x;
    if (p >= n) {
        return;
    }
    uint base = gl_WorkGroupID.z * n;
    int i = int(p / pc.width);
    int j = int(p % pc.width);
    int radius = int(pc.filter_width) / 2;
    float accum = 0.0;
    for (int k = 0; k < int(pc.filter_width); k++) {
        int c = mirror(j - radius + k, int(pc.width));
        accum += taps[k] * tmp[base + uint(i * int(pc.width) + c)];
    }
    blur[base + p] = accum;
}
