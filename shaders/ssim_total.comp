#version 450
// ssim_total: each metric's sum over the map, bit for bit the sum libvmaf's
// sequential loop makes (contract: SSIM_TOTAL in src/features/ssim/gpu.rs;
// the argument in src/features/ssim/sums.rs).
//
// Work group e handles metric entry e of the layout (6 uints: the offset of
// its first term, of its first partial triple of ssim_vertical(_strips),
// the map's width, its rows, its count of partial triples, and its first
// record of the ssim_exact kernels). It adds
// the partials' sums, magnitudes and weighted magnitudes (each thread its
// partials in order, then a tree), and writes them
// to results[5 e ..]: sum T, magnitudes A, weighted W. libvmaf's sequential
// f64 sum S lies within E = 2^-53 (1.01 W + 1.01 (width + rows + 16) A) of
// T; if every value in [T - 2E, T + 2E] gives the same float mean S / n,
// that float is libvmaf's and results[5 e + 4] (the flag) is 0. Otherwise
// (a mean within about 1e-10 of a float rounding boundary) the flag is 1
// and, with inline_exact (CPU drivers), the group adds the terms one after
// the other in raster order, exactly as libvmaf does, into results[5 e +
// 3]; without it the ssim_exact kernels make that sum in parallel. The
// host rechecks with E and takes the float from T or from S.
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Terms { double terms[]; };
layout(std430, set = 0, binding = 1) readonly buffer Partials { double partials[]; };
layout(std430, set = 0, binding = 2) readonly buffer Layout { uint entries[]; };
layout(std430, set = 0, binding = 3) buffer Results { double results[]; };

layout(push_constant) uniform Params {
    uint count;
    // Non-zero: the sequential sum for every entry (tests of the fallback).
    uint sequential;
    // Non-zero: this kernel adds a flagged entry's terms itself.
    uint inline_exact;
} pc;

shared double red[3 * 256];
shared double chunk[1024];
shared uint exact;

// Whether every value in [t - e, t + e] divided by n rounds to one float:
// both ends round to the same float (rounding is monotone), as the host's
// `sums::resolve` asks with e half as large; NaN, infinity or a zero
// mean answer no. The ends are computed from doubles only: Mesa 25.0.7's
// lavapipe evaluates an add or multiply of widened floats as a float
// operation (shaders/README.md), which turned the midpoints this used to
// compare with, (f + next) / 2, into floats and decided means that sit
// on a midpoint. The ends and the division may be a few ulps off the
// host's (a Vulkan division up to 2.5 ulp: under 4e-16 of the mean in
// all); the margin, a second E, is wider: E >= 2^-53 1.01 (width + rows +
// 16) A, and A >= |T|, so E is at least 2e-15 of the mean. (It was 4 E
// until 2026-11-27: every device fallback costs one work item a map of
// dependent double adds, and 2 E takes it half as often.)
bool one_float(double t, double e, double n) {
    float a = float((t - e) / n);
    float b = float((t + e) / n);
    if (!(a != 0.0) || isinf(a) || isnan(a) || isnan(b)) {
        return false;
    }
    return floatBitsToUint(a) == floatBitsToUint(b);
}

void main() {
    uint e = gl_WorkGroupID.x;
    uint lid = gl_LocalInvocationID.x;
    if (e >= pc.count) {
        return; // uniform over the group
    }
    uint terms_at = entries[6u * e];
    uint parts_at = entries[6u * e + 1u];
    uint width = entries[6u * e + 2u];
    uint rows = entries[6u * e + 3u];
    uint parts = entries[6u * e + 4u];
    double s = double(0.0);
    double a = double(0.0);
    double w = double(0.0);
    for (uint r = lid; r < parts; r += 256u) {
        s += partials[parts_at + 3u * r];
        a += partials[parts_at + 3u * r + 1u];
        w += partials[parts_at + 3u * r + 2u];
    }
    red[lid] = s;
    red[256u + lid] = a;
    red[512u + lid] = w;
    barrier();
    for (uint stride = 128u; stride > 0u; stride >>= 1u) {
        if (lid < stride) {
            red[lid] += red[lid + stride];
            red[256u + lid] += red[256u + lid + stride];
            red[512u + lid] += red[512u + lid + stride];
        }
        barrier();
    }
    if (lid == 0u) {
        double t = red[0];
        double mag = red[256];
        double weighted = red[512];
        // 2^-53 (exact as a float literal), times the host's bound, times 2.
        double unit = double(1.1102230246251565e-16);
        double bound = unit * (double(1.01) * weighted + double(1.01) * double(width + rows + 16u) * mag);
        double n = double(width) * double(rows);
        exact = (pc.sequential == 0u && one_float(t, double(2.0) * bound, n)) ? 0u : 1u;
        results[5u * e] = t;
        results[5u * e + 1u] = mag;
        results[5u * e + 2u] = weighted;
        results[5u * e + 3u] = double(0.0);
        results[5u * e + 4u] = double(exact);
    }
    barrier();
    if (exact != 0u && pc.inline_exact != 0u) {
        // libvmaf's loop: sum += term, in raster order, one add at a time.
        // The group stages 1024 terms at a time; the first thread adds them.
        uint n = width * rows;
        double sum = double(0.0);
        for (uint base = 0u; base < n; base += 1024u) {
            uint count = min(1024u, n - base);
            for (uint i = lid; i < count; i += 256u) {
                chunk[i] = terms[terms_at + base + i];
            }
            barrier();
            if (lid == 0u) {
                // Eight loads before their adds, which stay in order: the
                // adds wait on each other, the loads need not (an H100's
                // Vulkan driver spent most of float_ms_ssim's time here).
                uint i = 0u;
                for (; i + 8u <= count; i += 8u) {
                    double c0 = chunk[i];
                    double c1 = chunk[i + 1u];
                    double c2 = chunk[i + 2u];
                    double c3 = chunk[i + 3u];
                    double c4 = chunk[i + 4u];
                    double c5 = chunk[i + 5u];
                    double c6 = chunk[i + 6u];
                    double c7 = chunk[i + 7u];
                    sum += c0;
                    sum += c1;
                    sum += c2;
                    sum += c3;
                    sum += c4;
                    sum += c5;
                    sum += c6;
                    sum += c7;
                }
                for (; i < count; i++) {
                    sum += chunk[i];
                }
            }
            barrier();
        }
        if (lid == 0u) {
            results[5u * e + 3u] = sum;
        }
    }
}
