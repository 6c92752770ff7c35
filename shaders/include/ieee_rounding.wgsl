// correct_rounding.wgsl's `div_rn(a, b)` (f64) and `sqrt_rn(x)` (f32) as
// the device's own division and square root, for a driver whose double
// division and square root are IEEE 754's (correctly rounded, ties to
// even): the same results as correct_rounding.wgsl's, which only corrects
// a device that is off, without its checks. Include widen.wgsl before this
// file.
//
// Only llvmpipe (Mesa lavapipe) gets these (`ssim_vertical_strips_ieee`,
// chosen by src/features/gpu.rs `divides_as_ieee`): its NIR options
// lower neither fdiv nor fsqrt (gallivm_nir_options in llvmpipe's
// lp_screen.c), and gallivm emits them as LLVM's `fdiv` and `llvm.sqrt`
// without fast-math flags, which the host CPU computes with its IEEE
// divide and square-root instructions, as the CPU reference's C does.
// llvmpipe runs both sides of every branch for all its lanes, so the
// checks that find nothing to correct cost it as much as a correction:
// half of ssim_vertical_strips' time (620 against 290 ms over issue 14's
// anchor, Mesa 22.3.6). tests/ssim.rs holds this variant (the strips shape
// on lavapipe) and correct_rounding.wgsl's (the pixels shape, and the
// strips with ULPGATE_DIVISION=checked) to the CPU bit for bit.

fn div_rn(a: f64, b: f64) -> f64 {
    return a / b;
}

// (float)sqrt((double)x): a correctly rounded double root rounded to float
// is the correctly rounded float root (53 >= 2 * 24 + 2 bits).
fn sqrt_rn(x: f32) -> f32 {
    return f32(sqrt(widen(x)));
}
