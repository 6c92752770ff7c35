// ssim_vertical_strips' store of a pixel's term at terms[o], which only
// the sequential fallback reads (ssim_total's inline sum). The variant
// that leaves it out is ssim_term_skip.wgsl.
fn store_term(o: u32, v: f64) {
    terms[o] = v;
}
