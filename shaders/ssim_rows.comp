#version 450
// ssim_rows: per map row and metric, the row's sums of the per-pixel terms
// (contract: SSIM_ROWS in src/features/ssim/gpu.rs).
//
// Invocation (y, m) walks row y of metric m's terms (terms[terms_offset +
// m * n + y * width ..], n = width * rows) left to right and writes, at
// partials[partials_offset + 3 * (m * rows + y)]: the terms' sum, the sum
// of their magnitudes, and the sum of (n - i) * |term_i| (i the pixel's
// raster index), all in double. ssim_total adds the rows and bounds, from
// the last two, how far libvmaf's sequential sum can be from them.
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Terms { double terms[]; };
layout(std430, set = 0, binding = 1) buffer Partials { double partials[]; };

layout(push_constant) uniform Params {
    uint width;
    uint rows;
    uint terms_offset;
    uint partials_offset;
} pc;

void main() {
    uint y = gl_GlobalInvocationID.x;
    uint m = gl_GlobalInvocationID.y;
    if (y >= pc.rows) {
        return;
    }
    uint n = pc.width * pc.rows;
    uint first = y * pc.width;
    uint at = pc.terms_offset + m * n + first;
    double sum = double(0.0);
    double mag = double(0.0);
    double weighted = double(0.0);
    for (uint x = 0u; x < pc.width; x++) {
        double p = terms[at + x];
        double a = abs(p);
        sum += p;
        mag += a;
        weighted += double(n - first - x) * a;
    }
    uint o = pc.partials_offset + 3u * (m * pc.rows + y);
    partials[o] = sum;
    partials[o + 1u] = mag;
    partials[o + 2u] = weighted;
}
