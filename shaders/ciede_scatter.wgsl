// ciede_scatter: the last pass of ciede's pairs shape (contract:
// CIEDE_SCATTER in src/features/ciede/gpu.rs): a pixel that ciede_claim
// linked to another pixel of its colour pair takes that pixel's term,
// which ciede_pair_terms wrote. The GLSL dialect would do; WGSL keeps the
// family in one language.

@group(0) @binding(0) var<storage, read> links: array<u32>;
@group(0) @binding(1) var<storage, read_write> terms: array<f32>;

struct Params {
    width: u32,
    height: u32,
}
var<immediate> pc: Params;

// Invocation x of group (gx, i): pixel (i, gx * 64 + x).
@compute @workgroup_size(64, 1, 1)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let i = group.y;
    let j = group.x * 64u + local.x;
    if i >= pc.height || j >= pc.width {
        return;
    }
    let p = i * pc.width + j;
    let owner = links[p];
    if owner != p {
        terms[p] = terms[owner];
    }
}
