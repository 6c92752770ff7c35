//! A check of the GLSL kernels' source before naga reads it (build.rs;
//! tests/build_checks.rs runs it on examples).

/// naga 30's GLSL front end builds `float a[11][9]` as nine arrays of
/// eleven: `a[10][8]` fails its validation (IndexOutOfBounds), and with
/// indices it cannot see (a loop's) the kernel reads and writes the wrong
/// elements without a word (found in a throwaway `ssim_decimate_strips`
/// whose scores went NaN; 2026-11-27). Square arrays come out the same
/// either way. So a GLSL declaration of an array of arrays with unequal
/// sizes is an error here: declare it flat (`a[11 * 9]`, indexed `v * 9 +
/// u`) or write the kernel in WGSL.
pub fn refuse_uneven_arrays_of_arrays(source: &str, shown: &str) -> Result<(), String> {
    const TYPES: &[&str] = &[
        "float", "double", "int", "uint", "bool", "vec2", "vec3", "vec4", "dvec2", "dvec3", "dvec4", "ivec2", "ivec3",
        "ivec4", "uvec2", "uvec3", "uvec4",
    ];
    for (n, line) in source.lines().enumerate() {
        let mut words = line.split_whitespace().skip_while(|w| matches!(*w, "shared" | "const" | "highp"));
        if !words.next().is_some_and(|w| TYPES.contains(&w)) {
            continue;
        }
        let rest: String = words.collect::<Vec<_>>().join(" ");
        // The declarator alone: not an initializer's indexing.
        let declarator = rest.split(['=', ';', ',']).next().unwrap_or_default();
        let Some(open) = declarator.find('[') else { continue };
        let rest = declarator;
        let mut sizes = Vec::new();
        let mut tail = &rest[open..];
        while let Some(inner) = tail.strip_prefix('[') {
            let Some(close) = inner.find(']') else { break };
            sizes.push(inner[..close].trim());
            tail = inner[close + 1..].trim_start();
        }
        if sizes.len() > 1 && sizes.iter().any(|s| *s != sizes[0]) {
            return Err(format!(
                "{shown}:{}: `{}`: naga's GLSL front end reverses the sizes of an array of arrays (build.rs, \
                 refuse_uneven_arrays_of_arrays); declare it flat or write the kernel in WGSL",
                n + 1,
                line.trim()
            ));
        }
    }
    Ok(())
}
