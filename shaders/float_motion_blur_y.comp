#version 450
// float_motion_blur_y: the vertical pass of float_motion's blur for both
// frames (contract: FLOAT_MOTION_BLUR_Y in src/features/motion/gpu.rs; C
// dialect in kernels/motion.cl).
//
// libvmaf common/convolution.c convolution_y_c_s on picture_copy's floats
// (v / scaler - 128, the division done as a multiply by the exact inverse
// of the power-of-two scaler): accum = 0, accum += taps[k] * src[row k]
// for k in order, rows mirrored `n - (i - n + 2)`, every multiply and add
// rounded on its own (the build marks them NoContraction). Invocation p of
// z-layer 0 (prev) or 1 (cur) writes tmp[z * n + p], n = width * height.
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Prev { uint prev_words[]; };
layout(std430, set = 0, binding = 1) readonly buffer Cur { uint cur_words[]; };
layout(std430, set = 0, binding = 2) readonly buffer Taps { float taps[]; };
layout(std430, set = 0, binding = 3) buffer Tmp { float tmp[]; };

layout(push_constant) uniform Params {
    uint plane_offset;
    uint width;
    uint height;
    uint bytes_per_sample;
    float inv_scaler;
    uint filter_width;
} pc;

int mirror(int i, int n) {
    return i < 0 ? -i : (i >= n ? n - (i - n + 2) : i);
}

float pixel(uint i, bool second, uint shift, uint bits) {
    uint word = second ? cur_words[i >> shift] : prev_words[i >> shift];
    uint v = (word >> ((i & ((1u << shift) - 1u)) * bits)) & ((1u << bits) - 1u);
    return float(v) * pc.inv_scaler + -128.0;
}

void main() {
    uint n = pc.width * pc.height;
    uint p = gl_GlobalInvocationID.x;
    if (p >= n) {
        return;
    }
    bool second = gl_WorkGroupID.z == 1u;
    uint shift = pc.bytes_per_sample == 1u ? 2u : 1u;
    uint bits = 8u * pc.bytes_per_sample;
    int i = int(p / pc.width);
    int j = int(p % pc.width);
    int radius = int(pc.filter_width) / 2;
    float accum = 0.0;
    for (int k = 0; k < int(pc.filter_width); k++) {
        int r = mirror(i - radius + k, int(pc.height));
        accum += taps[k] * pixel(pc.plane_offset + uint(r * int(pc.width) + j), second, shift, bits);
    }
    tmp[gl_WorkGroupID.z * n + p] = accum;
}
