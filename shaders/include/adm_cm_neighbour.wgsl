// The contrast masking's 3x3 neighbour index (integer_adm.c adm_cm,
// adm_tools.c adm_cm_s: row or column -1 reads 1, n reads n - 1), shared
// by adm_cm, adm_cm_rows, float_adm_cm and float_adm_cm_rows(_powf).
fn nb(x: i32, n: i32) -> i32 {
    if (x < 0) {
        return 1;
    }
    if (x >= n) {
        return n - 1;
    }
    return x;
}
