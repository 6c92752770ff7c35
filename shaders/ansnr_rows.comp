#version 450
// ansnr_rows: per-row signal and noise energies of the filtered planes
// (contract: ANSNR_ROWS in src/features/ansnr.rs).
//
// Mirrors libvmaf ansnr_tools.c `ansnr_mse_s`: for one row, in pixel order
// and in float, sig += r * r and noise += (r - d) * (r - d). The host adds
// the row sums in row order as ansnr_mse_s does. The build marks every float
// multiply and add NoContraction (no FMA).
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer RefFiltered { float ref_filtered[]; };
layout(std430, set = 0, binding = 1) readonly buffer DisFiltered { float dis_filtered[]; };
layout(std430, set = 0, binding = 2) buffer Rows { float rows[]; };

layout(push_constant) uniform Params {
    uint width;
    uint height;
} pc;

void main() {
    uint y = gl_GlobalInvocationID.x;
    if (y >= pc.height) {
        return;
    }
    uint at = y * pc.width;
    float sig = 0.0;
    float noise = 0.0;
    for (uint x = 0u; x < pc.width; x++) {
        float r = ref_filtered[at + x];
        float d = dis_filtered[at + x];
        sig += r * r;
        noise += (r - d) * (r - d);
    }
    rows[2u * y] = sig;
    rows[2u * y + 1u] = noise;
}
