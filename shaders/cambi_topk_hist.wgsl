// cambi_topk_hist: cambi.c `spatial_pooling`, step 1 of 3 of the radix
// select of the k-th largest c-value (contract: CAMBI_TOPK_HIST in
// src/features/cambi/gpu.rs; the C dialect is kernels/cambi.cl). WGSL, not
// GLSL: the counts are atomic adds, and naga's GLSL front end has no
// atomics (shaders/README.md).
//
// Counts the non-zero c-values by one digit of their key (the float's
// bits, which order non-negative floats: bits 31..21, 20..10, 9..0), among
// those whose higher digits are the prefix found so far. Counts are
// integers: the order of the atomic adds does not matter.
struct Params {
    level: u32,
    n_sets: u32,
    groups: u32,
}

var<immediate> pc: Params;

@group(0) @binding(0) var<storage, read> cvals: array<u32>;
@group(0) @binding(1) var<storage, read> tables: array<u32>;
@group(0) @binding(2) var<storage, read> state: array<u32>;
@group(0) @binding(3) var<storage, read_write> hist: array<atomic<u32>>;

const SETS: u32 = 96u;
const SET_WORDS: u32 = 16u;
// Fields of a set record (gpu.rs `table`).
const SET_OFF: u32 = 2u;
const SET_N: u32 = 7u;
const SET_EL_FIRST: u32 = 9u;
const ELEMENTS: u32 = 4096u;
const BINS: u32 = 2048u;

var<workgroup> counts: array<atomic<u32>, 2048>;

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let g = group.x + group.y * groups.x;
    if (g >= pc.groups) {
        return; // uniform over the group
    }
    for (var k = lid; k < BINS; k += 256u) {
        atomicStore(&counts[k], 0u);
    }
    workgroupBarrier();
    var s = 0u;
    for (var k = 1u; k < pc.n_sets; k++) {
        if (tables[SETS + k * SET_WORDS + SET_EL_FIRST] <= g) {
            s = k;
        }
    }
    let rec = SETS + s * SET_WORDS;
    let st = 4u + 4u * s;
    // Level 0 reads no state; later levels skip sets already decided.
    if (pc.level == 0u || state[st + 2u] == 0u) {
        let prefix = state[st];
        var shift = 0u;
        if (pc.level == 0u) {
            shift = 21u;
        } else if (pc.level == 1u) {
            shift = 10u;
        }
        var bits = 11u;
        if (pc.level == 2u) {
            bits = 10u;
        }
        let digit_mask = (1u << bits) - 1u;
        let start = (g - tables[rec + SET_EL_FIRST]) * ELEMENTS;
        let end = min(start + ELEMENTS, tables[rec + SET_N]);
        let off = tables[rec + SET_OFF];
        for (var e = start + lid; e < end; e += 256u) {
            let key = cvals[off + e];
            if (key == 0u) {
                continue;
            }
            if (pc.level > 0u && (key >> (shift + bits)) != prefix) {
                continue;
            }
            atomicAdd(&counts[(key >> shift) & digit_mask], 1u);
        }
    }
    workgroupBarrier();
    let out_base = (pc.level * pc.n_sets + s) * BINS;
    for (var k = lid; k < BINS; k += 256u) {
        let c = atomicLoad(&counts[k]);
        if (c != 0u) {
            atomicAdd(&hist[out_base + k], c);
        }
    }
}
