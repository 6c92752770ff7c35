#version 450
// float_vif_prescale: vif_scale_frame_s (contract: FLOAT_VIF_PRESCALE in
// src/features/vif/gpu_float.rs; the C dialect is kernels/float_vif.cl).
// The weights and source indices of each output column and row come from
// the host (computed once as libvmaf computes them); each pixel combines
// them in libvmaf's order, every float operation NoContraction.
layout(local_size_x = 64, local_size_y = 4, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer SrcRef { uint src_ref[]; };
layout(std430, set = 0, binding = 1) readonly buffer SrcDis { uint src_dis[]; };
layout(std430, set = 0, binding = 2) readonly buffer Table { uint table[]; };
layout(std430, set = 0, binding = 3) buffer DstRef { float dst_ref[]; };
layout(std430, set = 0, binding = 4) buffer DstDis { float dst_dis[]; };

layout(push_constant) uniform Params {
    uint sw;
    uint dw;
    uint dh;
    uint tx;
    uint ty;
    uint method;
    uint format;
    float inv;
} pc;

float sample_at(uint p, uint i) {
    uint word = p == 0u ? src_ref[i >> (2u - pc.format)] : src_dis[i >> (2u - pc.format)];
    if (pc.format == 0u) {
        return float((word >> ((i & 3u) * 8u)) & 0xffu) - 128.0;
    }
    return float((word >> ((i & 1u) * 16u)) & 0xffffu) * pc.inv - 128.0;
}

float col_weight(uint x, uint i) {
    return uintBitsToFloat(table[pc.dw * pc.tx + x * pc.tx + i]);
}

float row_weight(uint y, uint j) {
    return uintBitsToFloat(table[2u * pc.dw * pc.tx + pc.dh * pc.ty + y * pc.ty + j]);
}

uint at(uint x, uint y, uint i, uint j) {
    return table[2u * pc.dw * pc.tx + y * pc.ty + j] * pc.sw + table[x * pc.tx + i];
}

// f32 division correctly rounded on every device: in double, then rounded
// to f32 (innocuous double rounding: 53 >= 2 * 24 + 2 bits), where Vulkan
// lets a device's own f32 division be approximate (kernels/float_vif.cl).
float div_rn(float a, float b) {
    return float(double(a) / double(b));
}

void main() {
    uint x = gl_GlobalInvocationID.x;
    uint y = gl_GlobalInvocationID.y;
    uint p = gl_GlobalInvocationID.z;
    if (x >= pc.dw || y >= pc.dh) {
        return;
    }
    float v = 0.0;
    if (pc.method == 0u) {
        v = sample_at(p, at(x, y, 0u, 0u));
    } else if (pc.method == 1u) {
        for (uint j = 0u; j < 2u; j++) {
            for (uint i = 0u; i < 2u; i++) {
                float t = row_weight(y, j) * col_weight(x, i) * sample_at(p, at(x, y, i, j));
                v = (i | j) == 0u ? t : v + t;
            }
        }
    } else if (pc.method == 2u) {
        for (uint j = 0u; j < 4u; j++) {
            for (uint i = 0u; i < 4u; i++) {
                v = v + sample_at(p, at(x, y, i, j)) * (col_weight(x, i) * row_weight(y, j));
            }
        }
    } else {
        float sum = 0.0;
        for (uint j = 0u; j < 9u; j++) {
            for (uint i = 0u; i < 9u; i++) {
                float wt = col_weight(x, i) * row_weight(y, j);
                sum = sum + wt;
                v = v + sample_at(p, at(x, y, i, j)) * wt;
            }
        }
        v = div_rn(v, sum);
    }
    if (p == 0u) {
        dst_ref[y * pc.dw + x] = v;
    } else {
        dst_dis[y * pc.dw + x] = v;
    }
}
