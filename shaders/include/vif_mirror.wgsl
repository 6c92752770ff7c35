// integer_vif.c's border rule, clamped after (see kernels/vif.cl).
fn mirror(i: i32, n: i32) -> u32 {
    var m = i;
    if (i < 0) {
        m = -i;
    } else if (i >= n) {
        m = 2 * (n - 1) - i;
    }
    return u32(clamp(m, 0, n - 1));
}
