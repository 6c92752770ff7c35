#version 450
// ssimulacra2_blur_rows: the row pass of the recursive Gaussian for the five
// statistics of a channel, one invocation per row and channel (contract:
// BLUR_ROWS in src/features/ssimulacra2/gpu.rs).
//
// Mirrors ssimulacra2.c `fast_gaussian_1d` along each row of the five blur
// inputs of `extract`: the reference's and the distorted's XYB channel, and
// the products ref * ref, dist * dist, ref * dist, each rounded to f32 as
// `multiply_3plane` writes them. For n from -N + 1 on: sum = in[n - N - 1]
// + in[n + N - 1] (0 outside the row), then per pole o_k = n2[k] * sum -
// d1[k] * prev1_k - prev2_k, and (o_0 + o_1) + o_2 written at n >= 0. The
// build marks each float operation NoContraction: the bits are the C's.
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Xyb { float xyb[]; };
layout(std430, set = 0, binding = 1) buffer Rows { float rows[]; };

layout(push_constant) uniform Params {
    uint width;
    uint height;
    float n2_0;
    float n2_1;
    float n2_2;
    float d1_0;
    float d1_1;
    float d1_2;
    uint radius;
} pc;

void main() {
    uint y = gl_GlobalInvocationID.x;
    uint c = gl_WorkGroupID.y;
    if (y >= pc.height) {
        return;
    }
    uint plane = pc.width * pc.height;
    uint a = c * plane + y * pc.width;
    uint b = (3u + c) * plane + y * pc.width;
    uint out_row = 5u * c * plane + y * pc.width;
    vec3 n2 = vec3(pc.n2_0, pc.n2_1, pc.n2_2);
    vec3 d1 = vec3(pc.d1_0, pc.d1_1, pc.d1_2);
    // Per statistic, the three poles' prev1 and prev2.
    vec3 p1[5];
    vec3 p2[5];
    for (int s = 0; s < 5; s++) {
        p1[s] = vec3(0.0);
        p2[s] = vec3(0.0);
    }
    int w = int(pc.width);
    int big_n = int(pc.radius);
    for (int n = -big_n + 1; n < w; n++) {
        int left = n - big_n - 1;
        int right = n + big_n - 1;
        float l[5] = float[5](0.0, 0.0, 0.0, 0.0, 0.0);
        float r[5] = float[5](0.0, 0.0, 0.0, 0.0, 0.0);
        if (left >= 0) {
            float la = xyb[a + uint(left)];
            float lb = xyb[b + uint(left)];
            l = float[5](la, lb, la * la, lb * lb, la * lb);
        }
        if (right < w) {
            float ra = xyb[a + uint(right)];
            float rb = xyb[b + uint(right)];
            r = float[5](ra, rb, ra * ra, rb * rb, ra * rb);
        }
        for (int s = 0; s < 5; s++) {
            float sum = l[s] + r[s];
            vec3 o = n2 * sum - d1 * p1[s] - p2[s];
            p2[s] = p1[s];
            p1[s] = o;
            if (n >= 0) {
                rows[out_row + uint(s) * plane + uint(n)] = (o.x + o.y) + o.z;
            }
        }
    }
}
