#version 450
// cambi_mask_columns: cambi.c `get_spatial_mask`, pass 1 of 2 (contract:
// CAMBI_MASK_COLUMNS in src/features/cambi/gpu.rs; the C dialect in
// kernels/cambi.cl says why two passes). sums[y * w + x] = the pixels of
// column x, rows y - 3 ..= y + 3 (clipped), with a zero derivative: equal
// to their right and lower neighbours, the last column and row counting as
// equal. libvmaf sums the 7x7 squares with a cyclic summed-area table; the
// counts are integers, so 7 column sums per square give the same numbers.
layout(local_size_x = 16, local_size_y = 16, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Img { uint img[]; };
layout(std430, set = 0, binding = 1) buffer Sums { uint sums[]; };

layout(push_constant) uniform Params {
    uint w;
    uint h;
    uint off;
} pc;

void main() {
    uint x = gl_GlobalInvocationID.x;
    uint y = gl_GlobalInvocationID.y;
    if (x >= pc.w || y >= pc.h) {
        return;
    }
    uint top = y > 3u ? y - 3u : 0u;
    uint bottom = min(y + 4u, pc.h);
    uint count = 0u;
    uint v = img[pc.off + top * pc.w + x];
    for (uint r = top; r < bottom; r++) {
        uint below = r + 1u < pc.h ? img[pc.off + (r + 1u) * pc.w + x] : v;
        bool right = x + 1u == pc.w || v == img[pc.off + r * pc.w + x + 1u];
        count += (right && v == below) ? 1u : 0u;
        v = below;
    }
    sums[y * pc.w + x] = count;
}
