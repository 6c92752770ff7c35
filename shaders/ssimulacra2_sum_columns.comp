#version 450
// ssimulacra2_sum_columns: each plane's map sums from its column sums
// (contract: SUM_COLUMNS in src/features/ssimulacra2/gpu.rs). Invocation
// t < 108 of the one work group adds, in double and in column order, the
// column sums of term t % 18 (channel * 6 + sum) of scale t / 18, whose
// width is width0 halved (rounding up) t / 18 times; a scale from `scales`
// on gives 0.
layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Sums { double sums[]; };
layout(std430, set = 0, binding = 1) buffer Totals { double totals[]; };

layout(push_constant) uniform Params {
    uint width0;
    uint scales;
} pc;

void main() {
    uint t = gl_LocalInvocationID.x;
    if (t >= 108u) {
        return;
    }
    uint s = t / 18u;
    uint term = t % 18u;
    double total = double(0.0);
    if (s < pc.scales) {
        uint w = pc.width0;
        for (uint k = 0u; k < s; k++) {
            w = (w + 1u) / 2u;
        }
        uint col = (s * 18u + term) * pc.width0;
        for (uint x = 0u; x < w; x++) {
            total += sums[col + x];
        }
    }
    totals[t] = total;
}
