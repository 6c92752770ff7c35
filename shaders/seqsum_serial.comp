#version 450
// seqsum_serial: the sequential sum of each sequence of f32 terms by one
// invocation, term after term, in the accumulator's own precision (contract:
// SEQSUM_SERIAL in src/features/seqsum.rs): libvmaf's loop itself. What CPU
// drivers run (lavapipe, PoCL), where one core walking the terms beats
// seqsum's parallel phases; GPUs run seqsum.
//
// A dispatch adds terms [start, start + span) of every sequence (clipped
// to it) to the running sum in `out`, zero when start is 0: lavapipe stops
// an invocation's loops after 65535 iterations in all (gallivm's guard
// against endless shaders), so the host splits a long sum into dispatches.
layout(local_size_x = 1, local_size_y = 1, local_size_z = 1) in;

// The terms, read four at a time: lavapipe loads a storage buffer lane by
// lane, so a vec4 load costs about what a float load does. Every Vulkan
// buffer is a whole number of vec4s (src/backend/vulkan/memory.rs rounds
// its size up to 16 bytes, and it is bound whole), so the vec4 holding
// the last term is inside it.
layout(std430, set = 0, binding = 0) readonly buffer Terms { vec4 terms4[]; };

float term(uint i) {
    return terms4[i >> 2u][i & 3u];
}
// Per sequence: first term, term count.
layout(std430, set = 0, binding = 1) readonly buffer Sums { uint sums[]; };
// Per sequence: the running sum as a double (the contract's (lo, hi) words).
layout(std430, set = 0, binding = 2) buffer Out { double out_sum[]; };

layout(push_constant) uniform Params {
    uint start;
    uint span;
    uint significand_bits; // 24: float accumulator, 53: double
} pc;

void main() {
    uint g = gl_WorkGroupID.x;
    uint count = sums[2u * g + 1u];
    if (pc.start >= count && pc.start > 0u) {
        return;
    }
    uint first = sums[2u * g] + pc.start;
    uint end = sums[2u * g] + min(count, pc.start + pc.span);
    double running = pc.start == 0u ? double(0.0) : out_sum[g];
    // Eight terms an iteration, added one after another in order (the same
    // additions as one a time): lavapipe's per-iteration cost (its exec
    // mask, its iteration guard, a bounds check) is paid once per eight.
    // The terms before the first whole vec4 one by one, then two vec4s an
    // iteration, then the rest one by one.
    uint i = first;
    uint head = min(end, (first + 3u) & ~3u);
    if (pc.significand_bits == 24u) {
        float s = float(running);
        for (; i < head; i++) {
            s += term(i);
        }
        for (; i + 8u <= end; i += 8u) {
            vec4 a = terms4[i >> 2u];
            vec4 b = terms4[(i >> 2u) + 1u];
            s += a.x;
            s += a.y;
            s += a.z;
            s += a.w;
            s += b.x;
            s += b.y;
            s += b.z;
            s += b.w;
        }
        for (; i < end; i++) {
            s += term(i);
        }
        out_sum[g] = double(s);
    } else {
        double s = running;
        for (; i < head; i++) {
            s += double(term(i));
        }
        for (; i + 8u <= end; i += 8u) {
            vec4 a = terms4[i >> 2u];
            vec4 b = terms4[(i >> 2u) + 1u];
            s += double(a.x);
            s += double(a.y);
            s += double(a.z);
            s += double(a.w);
            s += double(b.x);
            s += double(b.y);
            s += double(b.z);
            s += double(b.w);
        }
        for (; i < end; i++) {
            s += double(term(i));
        }
        out_sum[g] = s;
    }
}
