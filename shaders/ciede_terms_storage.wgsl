// ciede_terms_storage: ciede_terms (shaders/ciede_terms.wgsl) with its table
// in a storage buffer, for GPUs, where the per-invocation indices of the
// table's lookups are cheap from memory but serialise in a uniform block
// (contract: CIEDE_TERMS_STORAGE in src/features/ciede/gpu.rs).
//
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
// src/features/ciede/tables.rs `table_words` (674 doubles), then, for
// 8-bit frames, the red and blue maps (src/features/ciede/gpu.rs
// `RGB_MAPS`).
@group(0) @binding(2) var<storage, read> table_words: array<f64>;
@group(0) @binding(3) var<storage, read_write> terms: array<f32>;

fn table(i: u32) -> f64 {
    return table_words[i];
}

const RGB_MAPS: bool = true;

#include "widen.wgsl"
#include "ciede_terms.wgsl"
