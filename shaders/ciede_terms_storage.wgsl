// ciede_terms_storage: ciede_terms with its table in a storage buffer, for
// GPUs, where the per-invocation indices of the table's lookups are cheap
// from memory but serialise in a uniform block (contract:
// CIEDE_TERMS_STORAGE in src/features/ciede/gpu.rs).
// WGSL for its doubles' bit patterns (naga's GLSL has no double bit casts;
// shaders/README.md); the arithmetic is shaders/include/ciede_terms.wgsl's.

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
#include "ciede_frame.wgsl"
#include "ciede_pixel.wgsl"
