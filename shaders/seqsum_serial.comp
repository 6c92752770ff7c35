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

layout(std430, set = 0, binding = 0) readonly buffer Terms { float terms[]; };
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
    uint i = first;
    if (pc.significand_bits == 24u) {
        float s = float(running);
        for (; i + 8u <= end; i += 8u) {
            s += terms[i];
            s += terms[i + 1u];
            s += terms[i + 2u];
            s += terms[i + 3u];
            s += terms[i + 4u];
            s += terms[i + 5u];
            s += terms[i + 6u];
            s += terms[i + 7u];
        }
        for (; i < end; i++) {
            s += terms[i];
        }
        out_sum[g] = double(s);
    } else {
        double s = running;
        for (; i + 8u <= end; i += 8u) {
            s += double(terms[i]);
            s += double(terms[i + 1u]);
            s += double(terms[i + 2u]);
            s += double(terms[i + 3u]);
            s += double(terms[i + 4u]);
            s += double(terms[i + 5u]);
            s += double(terms[i + 6u]);
            s += double(terms[i + 7u]);
        }
        for (; i < end; i++) {
            s += double(terms[i]);
        }
        out_sum[g] = s;
    }
}
