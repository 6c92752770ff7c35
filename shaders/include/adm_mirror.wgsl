// dwt2_src_indices_filt's mirrored index (integer_adm.c, adm_tools.c): -1
// reads 1, n reads n - 1, n + 1 reads n - 2. Shared by the ADM wavelet
// kernels.
fn mirror(x: i32, n: i32) -> i32 {
    if (x < 0) {
        return -x;
    }
    if (x >= n) {
        return 2 * n - x - 1;
    }
    return x;
}
