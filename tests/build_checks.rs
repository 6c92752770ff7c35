//! The build script's source checks, on examples (build.rs runs them on
//! every kernel).

#[path = "../build/glsl_arrays.rs"]
mod glsl_arrays;

use glsl_arrays::refuse_uneven_arrays_of_arrays as check;

#[test]
fn uneven_arrays_of_arrays_are_refused_with_the_line() {
    let err = check("void f() {\n    float win[11][9];\n}\n", "k.comp").unwrap_err();
    assert!(err.starts_with("k.comp:2: `float win[11][9];`"), "{err}");
    assert!(check("shared double s[4][N];", "k.comp").is_err());
}

#[test]
fn square_and_flat_arrays_and_indexing_pass() {
    for ok in [
        "float t[9][9];",
        "float win[99];",
        "float p = win[v][u] * t[v][u];",
        "uint col[9];",
        "win[v * 9 + u] = src[row + col[u]];",
        "int x = a[1][2], y[3];",
    ] {
        assert_eq!(check(ok, "k.comp"), Ok(()), "{ok}");
    }
}
