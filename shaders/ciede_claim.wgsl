// ciede_claim: the first pass of ciede's pairs shape (contract:
// CIEDE_CLAIM in src/features/ciede/gpu.rs). One invocation per pixel:
// equal colours score +0.0 here, as ciede_terms scores them; every other
// pixel claims its colour pair in a hash table of pixel indices. The first
// pixel of a pair to claim its slot owns it and lists itself in `owners`
// (ciede_pair_terms scores it); a pixel that finds its pair already
// claimed links to the owner (ciede_scatter copies the owner's term). The
// CPU reference caches pairs the same way (cpu.rs `Caches`): which pixel
// owns a pair varies from run to run, its score does not (the same
// function of the same six samples). WGSL for its atomics (naga's GLSL
// has none: shaders/README.md).

@group(0) @binding(0) var<storage, read> ref_words: array<u32>;
@group(0) @binding(1) var<storage, read> dis_words: array<u32>;
// Word 0: the owners listed; then the table's slots: 0 empty, else 1 + the
// owner's pixel index. Zeroed before every frame.
@group(0) @binding(2) var<storage, read_write> claims: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> owners: array<u32>;
// Each pixel's owner: itself where it owns its pair or scored here.
@group(0) @binding(4) var<storage, read_write> links: array<u32>;
@group(0) @binding(5) var<storage, read_write> terms: array<f32>;

struct Params {
    width: u32,
    height: u32,
    cw: u32,
    ch: u32,
    stride: u32,
    chroma: u32,
    bytes_per_sample: u32,
    scale_shift: u32,
    // The table's slots - 1 (a power of two, at least twice the pixels:
    // a probe always ends at an empty slot or its own pair).
    slot_mask: u32,
}
var<immediate> pc: Params;

#include "ciede_frame.wgsl"

// Where a pair's probe starts: its six samples (16 bits each at most)
// mixed by multiplies and shifts (murmur3's finaliser constants). Any mix
// gives the same scores; a poor one only probes longer.
fn pair_hash(c: Colours) -> u32 {
    var h = (c.a.x | (c.a.y << 16u)) * 0xcc9e2d51u;
    h = (h ^ c.a.z ^ (c.b.x << 16u)) * 0x85ebca6bu;
    h = (h ^ (h >> 15u) ^ c.b.y ^ (c.b.z << 16u)) * 0xc2b2ae35u;
    return h ^ (h >> 16u);
}

// Invocation x of group (gx, i) claims pixel (i, gx * 64 + x)'s pair.
@compute @workgroup_size(64, 1, 1)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let i = group.y;
    let j = group.x * 64u + local.x;
    if i >= pc.height || j >= pc.width {
        return;
    }
    let p = i * pc.width + j;
    let c = colours(i, j);
    if equal_colours(c) {
        terms[p] = 0.0;
        links[p] = p;
        return;
    }
    var slot = pair_hash(c) & pc.slot_mask;
    loop {
        let claim = atomicCompareExchangeWeak(&claims[1u + slot], 0u, p + 1u);
        if claim.exchanged {
            owners[atomicAdd(&claims[0], 1u)] = p;
            links[p] = p;
            break;
        }
        // A weak exchange may fail on an empty slot: try it again.
        if claim.old_value != 0u {
            let q = claim.old_value - 1u;
            let at = pixel_at(q);
            let theirs = colours(at.x, at.y);
            if all(theirs.a == c.a) && all(theirs.b == c.b) {
                links[p] = q;
                break;
            }
            slot = (slot + 1u) & pc.slot_mask;
        }
    }
}
