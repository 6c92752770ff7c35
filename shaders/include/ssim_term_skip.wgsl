// ssim_term_store.wgsl's function storing nothing, for
// `ssim_vertical_strips_ieee_unstored`: lavapipe's first pass, whose
// frames redo with the terms stored where a mean needs the sequential
// fallback (src/features/ssim/gpu.rs, `Redo`). The stores were a third of
// the kernel on lavapipe (it stores a storage buffer lane by lane): 203-213
// against 133-138 ms over issue 14's anchor, Mesa 22.3.6.
// The length query keeps `terms` bound (the kernel's interface is its
// contract's four buffers); the driver drops it as dead code.
fn store_term(o: u32, v: f64) {
    _ = arrayLength(&terms);
}
