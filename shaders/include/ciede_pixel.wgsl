// The entry point of ciede_terms and ciede_terms_storage (the pixels
// shape: src/features/ciede/gpu.rs): after ciede_frame.wgsl and
// ciede_terms.wgsl. Invocation x of group (gx, i) scores pixel
// (i, gx * 64 + x).
@compute @workgroup_size(64, 1, 1)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let i = group.y;
    let j = group.x * 64u + local.x;
    if i >= pc.height || j >= pc.width {
        return;
    }
    let c = colours(i, j);
    if equal_colours(c) {
        terms[i * pc.width + j] = 0.0;
        return;
    }
    terms[i * pc.width + j] = ciede2000(lab_color(c.a.x, c.a.y, c.a.z), lab_color(c.b.x, c.b.y, c.b.z));
}
