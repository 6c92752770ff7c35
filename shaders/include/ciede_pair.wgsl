// The entry point of ciede_pair_terms and ciede_pair_terms_storage (the
// pairs shape: src/features/ciede/gpu.rs), after ciede_terms.wgsl and
// ciede_frame.wgsl: ciede_claim listed one pixel of each distinct pair of
// unequal colours in `owners` (claims[0] of them); invocation n of the
// grid's N scores owners[n], owners[n + N], ... A CPU driver runs every
// statement for all of a SIMD vector's lanes whatever they decide, but
// leaves a loop once no lane goes on: a small grid that loops scores
// claims[0] pairs, not a frame of pixels.
@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let count = claims[0];
    let step = groups.x * 64u;
    var k = id.x;
    loop {
        if k >= count {
            break;
        }
        let p = owners[k];
        let at = pixel_at(p);
        let c = colours(at.x, at.y);
        terms[p] = ciede2000(lab_color(c.a.x, c.a.y, c.a.z), lab_color(c.b.x, c.b.y, c.b.z));
        k += step;
    }
}
