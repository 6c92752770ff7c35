// ciede_terms: every pixel's CIEDE2000 colour difference of libvmaf's
// ciede.c, one invocation per pixel (contract: CIEDE_TERMS in
// src/features/ciede/gpu.rs). WGSL for its doubles' bit patterns (naga's
// GLSL has no double bit casts; shaders/README.md).
//
// Statement for statement the CPU reference: ciede.c's port in
// src/features/ciede/cpu.rs, and its math functions in
// src/features/ciede/math.rs (pow, exp, sin, cos, atan2, sqrt and division
// from IEEE adds and multiplies, which the build keeps unfused), with the
// same constants (the generated block below) and tables (the `table`
// buffer). Floats are divided with `div_rn`: Vulkan's own float division
// may be 2.5 ulp off. Where the C rounds a result to float, five steps
// (the cube roots, T, the two hue angles, ΔH' and R_T's sines) round a
// cheaper estimate instead wherever no midpoint between floats lies within
// its error, and take the exact function elsewhere: the same floats
// (math.rs `cbrt_f32`, `upcase_t_f32`, `atan2_f32`, `scaled_sin_f32`).

@group(0) @binding(0) var<storage, read> ref_words: array<u32>;
@group(0) @binding(1) var<storage, read> dis_words: array<u32>;
// src/features/ciede/tables.rs `table_words` (674 doubles), read as a
// uniform block of vec2s: a storage-buffer load costs CPU drivers such as
// lavapipe a gather each. (GPUs take ciede_terms_storage: a uniform block
// indexed by per-invocation values serialises on NVIDIA's constant cache.)
@group(0) @binding(2) var<uniform> table2: array<vec2<f64>, 337>;
@group(0) @binding(3) var<storage, read_write> terms: array<f32>;

fn table(i: u32) -> f64 {
    return table2[i >> 1u][i & 1u];
}

// No red and blue maps after a uniform block's table.
const RGB_MAPS: bool = false;

#include "widen.wgsl"
#include "ciede_terms.wgsl"
