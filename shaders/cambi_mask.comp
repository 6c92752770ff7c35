#version 450
// cambi_mask: cambi.c `get_spatial_mask` (contract: CAMBI_MASK in
// src/features/cambi/gpu.rs). A pixel is in the mask when more than
// mask_index pixels of the 7x7 square around it (clipped to the picture)
// have a zero derivative: equal to their right and lower neighbours, the
// last column and row counting as equal. libvmaf sums the squares with a
// cyclic summed-area table; the counts are integers, so counting each
// square directly from a shared tile gives the same numbers.
layout(local_size_x = 16, local_size_y = 16, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Img { uint img[]; };
layout(std430, set = 0, binding = 1) buffer Mask { uint mask_out[]; };

layout(push_constant) uniform Params {
    uint w;
    uint h;
    uint off;
    uint mask_index;
} pc;

// The 16x16 tile with 3 pixels around it and 1 more right and below, and
// the zero derivatives of the tile with 3 around.
shared uint px[23 * 23];
shared uint zd[22 * 22];

void main() {
    uint lx = gl_LocalInvocationID.x;
    uint ly = gl_LocalInvocationID.y;
    uint lid = ly * 16u + lx;
    int x0 = int(gl_WorkGroupID.x * 16u) - 3;
    int y0 = int(gl_WorkGroupID.y * 16u) - 3;
    int w = int(pc.w);
    int h = int(pc.h);
    for (uint k = lid; k < 529u; k += 256u) {
        int gy = y0 + int(k / 23u);
        int gx = x0 + int(k % 23u);
        bool inside = gx >= 0 && gy >= 0 && gx < w && gy < h;
        px[k] = inside ? img[pc.off + uint(gy) * pc.w + uint(gx)] : 0u;
    }
    barrier();
    for (uint k = lid; k < 484u; k += 256u) {
        uint r = k / 22u;
        uint c = k % 22u;
        int gy = y0 + int(r);
        int gx = x0 + int(c);
        uint z = 0u;
        if (gx >= 0 && gy >= 0 && gx < w && gy < h) {
            uint v = px[r * 23u + c];
            bool right = gx == w - 1 || v == px[r * 23u + c + 1u];
            bool down = gy == h - 1 || v == px[(r + 1u) * 23u + c];
            z = (right && down) ? 1u : 0u;
        }
        zd[k] = z;
    }
    barrier();
    uint x = gl_WorkGroupID.x * 16u + lx;
    uint y = gl_WorkGroupID.y * 16u + ly;
    if (x < pc.w && y < pc.h) {
        uint count = 0u;
        for (uint r = 0u; r < 7u; r++) {
            for (uint c = 0u; c < 7u; c++) {
                count += zd[(ly + r) * 22u + lx + c];
            }
        }
        mask_out[pc.off + y * pc.w + x] = count > pc.mask_index ? 1u : 0u;
    }
}
