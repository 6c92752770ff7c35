//! A check of the GLSL kernels' source before naga reads it (build.rs;
//! tests/build_checks.rs runs it on examples).
//!
//! naga 30's GLSL front end gets two array declarations wrong, without a
//! word where the indices are a loop's (found 2026-11-27):
//! - `float a[11][9]` comes out as nine arrays of eleven: `a[10][8]` fails
//!   its validation, a loop's indices read and write the wrong elements (a
//!   throwaway `ssim_decimate_strips` whose scores went NaN). Square arrays
//!   come out the same either way.
//! - `float x[4], y[4];` gives `y` the type `float[4][4]`: the sizes of the
//!   declarators before it pile onto it.
//!
//! So a GLSL kernel may declare an array of arrays only with equal sizes,
//! and an array only alone in its declaration: declare it flat (`a[11 *
//! 9]`, indexed `v * 9 + u`), one a line, or write the kernel in WGSL.

const TYPES: &[&str] = &[
    "float", "double", "int", "uint", "bool", "vec2", "vec3", "vec4", "dvec2", "dvec3", "dvec4", "ivec2", "ivec3",
    "ivec4", "uvec2", "uvec3", "uvec4",
];

/// Why `line` (a GLSL source line) would be misread, or `None`.
fn check_line(line: &str) -> Option<&'static str> {
    let mut words = line.split_whitespace().skip_while(|w| matches!(*w, "shared" | "const" | "highp"));
    if !words.next().is_some_and(|w| TYPES.contains(&w)) {
        return None;
    }
    let rest: String = words.collect::<Vec<_>>().join(" ");
    let statement = rest.split(';').next().unwrap_or_default();
    // The declarators: split at the commas outside brackets and parentheses.
    let mut declarators = vec![String::new()];
    let mut depth = 0i32;
    for c in statement.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                declarators.push(String::new());
                continue;
            }
            _ => {}
        }
        declarators.last_mut().expect("one at least").push(c);
    }
    // Each declarator's own brackets: before its initializer.
    let sizes: Vec<Vec<String>> = declarators
        .iter()
        .map(|d| {
            let name = d.split('=').next().unwrap_or_default();
            let mut sizes = Vec::new();
            let mut tail = name.find('[').map_or("", |open| &name[open..]);
            while let Some(inner) = tail.strip_prefix('[') {
                let Some(close) = inner.find(']') else { break };
                sizes.push(inner[..close].trim().to_string());
                tail = inner[close + 1..].trim_start();
            }
            sizes
        })
        .collect();
    if sizes.len() > 1 && sizes.iter().any(|s| !s.is_empty()) {
        return Some("naga's GLSL front end piles the array sizes of a declaration's declarators onto the later ones");
    }
    if sizes.iter().any(|s| s.len() > 1 && s.iter().any(|v| *v != s[0])) {
        return Some("naga's GLSL front end reverses the sizes of an array of arrays");
    }
    None
}

/// The first line of `source` (shown as `shown`) naga would misread, as an
/// error naming it.
pub fn refuse_naga_array_pitfalls(source: &str, shown: &str) -> Result<(), String> {
    for (n, line) in source.lines().enumerate() {
        if let Some(why) = check_line(line) {
            return Err(format!(
                "{shown}:{}: `{}`: {why} (build/glsl_arrays.rs); declare one array a line, flat, or write the \
                 kernel in WGSL",
                n + 1,
                line.trim()
            ));
        }
    }
    Ok(())
}
