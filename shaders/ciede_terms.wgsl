// ciede_terms: every pixel's CIEDE2000 colour difference of libvmaf's
// ciede.c, one invocation per pixel (contract: CIEDE_TERMS in
// src/features/ciede/gpu.rs), the table in a uniform block (CPU drivers).
// WGSL for its doubles' bit patterns (naga's GLSL has no double bit casts;
// shaders/README.md); the arithmetic is shaders/include/ciede_terms.wgsl's.

@group(0) @binding(0) var<storage, read> ref_words: array<u32>;
@group(0) @binding(1) var<storage, read> dis_words: array<u32>;
// src/features/ciede/tables.rs `table_words` (674 doubles), read as a
// uniform block of vec2s: a storage-buffer load costs CPU drivers such as
// lavapipe a gather each. (GPUs take the _storage kernels: a uniform block
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
#include "ciede_frame.wgsl"
#include "ciede_pixel.wgsl"
