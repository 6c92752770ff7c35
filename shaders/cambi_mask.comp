#version 450
// cambi_mask: cambi.c `get_spatial_mask`, pass 2 of 2 (contract: CAMBI_MASK
// in src/features/cambi/gpu.rs): a pixel is in the mask when the zero
// derivatives of the 7x7 square around it (clipped), the 7 column sums of
// pass 1, number more than mask_index.
layout(local_size_x = 16, local_size_y = 16, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Sums { uint sums[]; };
layout(std430, set = 0, binding = 1) buffer Mask { uint mask_out[]; };

layout(push_constant) uniform Params {
    uint w;
    uint h;
    uint off;
    uint mask_index;
} pc;

void main() {
    uint x = gl_GlobalInvocationID.x;
    uint y = gl_GlobalInvocationID.y;
    if (x >= pc.w || y >= pc.h) {
        return;
    }
    uint left = x > 3u ? x - 3u : 0u;
    uint right = min(x + 4u, pc.w);
    uint count = 0u;
    for (uint c = left; c < right; c++) {
        count += sums[y * pc.w + c];
    }
    mask_out[pc.off + y * pc.w + x] = count > pc.mask_index ? 1u : 0u;
}
