//! The build script's source checks, on examples (build.rs runs them on
//! every kernel).

#[path = "../build/glsl_arrays.rs"]
mod glsl_arrays;

use glsl_arrays::refuse_naga_array_pitfalls as check;

#[test]
fn uneven_arrays_of_arrays_are_refused_with_the_line() {
    let err = check("void f() {\n    float win[11][9];\n}\n", "k.comp").unwrap_err();
    assert!(err.starts_with("k.comp:2: `float win[11][9];`: naga's GLSL front end reverses"), "{err}");
    assert!(check("shared double s[4][N];", "k.comp").is_err());
}

#[test]
fn an_array_beside_other_declarators_is_refused() {
    for bad in ["vec4 a[8], b[8];", "float x, y[4];", "float x[4], y;", "int x = a[1][2], y[3];"] {
        let err = check(bad, "k.comp").unwrap_err();
        assert!(err.contains("piles the array sizes"), "{bad}: {err}");
    }
}

#[test]
fn square_flat_and_lone_arrays_and_indexing_pass() {
    for ok in [
        "float t[9][9];",
        "float win[99];",
        "float p = win[v][u] * t[v][u];",
        "uint col[9];",
        "win[v * 9 + u] = src[row + col[u]];",
        "uint i0 = row + mirror(p0, w), i1 = row + mirror(p0 + 1, w);",
        "float m1[8] = float[8](m1lo.x, m1lo.y, m1lo.z, m1lo.w, m1hi.x, m1hi.y, m1hi.z, m1hi.w);",
        "vec4 c = vec4(taps[pc.tap0 + k]);",
    ] {
        assert_eq!(check(ok, "k.comp"), Ok(()), "{ok}");
    }
}
