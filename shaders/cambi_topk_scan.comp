#version 450
// cambi_topk_scan: cambi.c `spatial_pooling`, step 2 of 3 (contract:
// CAMBI_TOPK_SCAN in src/features/cambi/gpu.rs): from the top of the
// level's histogram, the bin holding the set's k-th largest value; its
// digit joins the prefix and the values above it leave the rank. At level
// 0, k above the number of non-zero values means the k largest are all of
// those and zeros (mode 1).
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Tables { uint tables[]; };
layout(std430, set = 0, binding = 1) buffer State { uint state[]; };
layout(std430, set = 0, binding = 2) readonly buffer Hist { uint hist[]; };

layout(push_constant) uniform Params {
    uint level;
    uint n_sets;
} pc;

const uint SETS = 96u;
const uint SET_WORDS = 16u;
// Fields of a set record (gpu.rs `table`).
const uint SET_K = 8u;
const uint BINS = 2048u;
const uint PER = 8u; // bins per invocation

shared uint parts[256];

void main() {
    uint s = gl_WorkGroupID.x;
    uint lid = gl_LocalInvocationID.x;
    uint counts = (pc.level * pc.n_sets + s) * BINS;
    uint part = 0u;
    for (uint k = 0u; k < PER; k++) {
        part += hist[counts + lid * PER + k];
    }
    parts[lid] = part;
    barrier();
    if (lid != 0u) {
        return;
    }
    uint st = 4u + 4u * s;
    uint prefix = 0u;
    uint rank = tables[SETS + s * SET_WORDS + SET_K];
    uint mode = 0u;
    if (pc.level > 0u) {
        prefix = state[st];
        rank = state[st + 1u];
        mode = state[st + 2u];
        if (mode != 0u) {
            return;
        }
    }
    uint total = 0u;
    for (uint t = 0u; t < 256u; t++) {
        total += parts[t];
    }
    if (rank > total) {
        mode = 1u; // only at level 0: later levels hold the rank's bin
    } else {
        uint above = 0u;
        uint t = 255u;
        while (above + parts[t] < rank) {
            above += parts[t];
            t--;
        }
        uint b = t * PER + PER - 1u;
        while (above + hist[counts + b] < rank) {
            above += hist[counts + b];
            b--;
        }
        rank -= above;
        prefix = (prefix << (pc.level == 2u ? 10u : 11u)) | b;
    }
    state[st] = prefix;
    state[st + 1u] = rank;
    state[st + 2u] = mode;
}
