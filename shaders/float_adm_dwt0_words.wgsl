// float_adm_dwt0_words: float_adm_dwt0_strips for the inner strips of
// 8-bit pictures whose width is a multiple of 4 (contract:
// FLOAT_ADM_DWT0_WORDS in src/features/adm/gpu.rs, C dialect in
// kernels/float_adm.cl; the same bits): no column of an inner strip is
// mirrored and its rows start on words, so one 32-bit word a row serves
// two outputs (adm_words.wgsl; the body is its words_kernel).
#include "adm_mirror.wgsl"
#include "float_adm_filt.wgsl"
#include "float_adm_dwt0_parts.wgsl"
#include "adm_words.wgsl"

@compute @workgroup_size(8, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    words_kernel(i32(gid.x), wid.z);
}
