//! The CUDA/OpenCL kernel sources, embedded at build time. Each family's
//! body (`kernels/<family>.cl`) is written once; the dialect header
//! `kernels/ulp.h` is spliced in at its `#include "ulp.h"` line, with
//! `#line` markers so compiler messages name the original files.

use anyhow::{Result, anyhow};

const HEADER_NAME: &str = "ulp.h";
const HEADER: &str = include_str!("../../kernels/ulp.h");

/// Every kernel family, one line each (families add theirs without
/// touching each other's).
pub const FAMILIES: &[(&str, &str)] = &[
    ("psnr", include_str!("../../kernels/psnr.cl")),
    ("moment", include_str!("../../kernels/moment.cl")),
    ("ansnr", include_str!("../../kernels/ansnr.cl")),
    ("seqsum", include_str!("../../kernels/seqsum.cl")),
    ("psnr_hvs", include_str!("../../kernels/psnr_hvs.cl")),
    ("ciede", include_str!("../../kernels/ciede.cl")),
    ("cambi", include_str!("../../kernels/cambi.cl")),
    ("ssimulacra2", include_str!("../../kernels/ssimulacra2.cl")),
    ("adm", include_str!("../../kernels/adm.cl")),
    ("float_adm", include_str!("../../kernels/float_adm.cl")),
    ("vif", include_str!("../../kernels/vif.cl")),
    ("float_vif", include_str!("../../kernels/float_vif.cl")),
    ("ssim", include_str!("../../kernels/ssim.cl")),
    ("motion", include_str!("../../kernels/motion.cl")),
    ("selftest", include_str!("../../kernels/selftest.cl")),
];

/// The self-contained source of a kernel family: header inlined.
pub fn source(family: &str) -> Result<String> {
    let body = FAMILIES
        .iter()
        .find(|(name, _)| *name == family)
        .map(|(_, body)| *body)
        .ok_or_else(|| anyhow!("no CUDA/OpenCL kernels for family `{family}` (kernels/{family}.cl)"))?;
    Ok(splice(family, body))
}

fn splice(family: &str, body: &str) -> String {
    let include = format!("#include \"{HEADER_NAME}\"");
    let mut out = String::with_capacity(HEADER.len() + body.len() + 128);
    out.push_str(&format!("#line 1 \"{family}.cl\"\n"));
    for (n, line) in body.lines().enumerate() {
        if line.trim() == include {
            out.push_str(&format!("#line 1 \"{HEADER_NAME}\"\n{HEADER}\n#line {} \"{family}.cl\"\n", n + 2));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// A stable 64-bit FNV-1a hash (cache keys and checksums: unlike std's
/// hasher it is the same in every build).
pub fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // Separate the parts so ("ab", "c") and ("a", "bc") differ.
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::{ansnr, moment, psnr};

    /// The parameter list of `KERNEL name(...)` in a family's source.
    fn parameters(source: &str, name: &str) -> Vec<String> {
        let start = source.find(&format!("KERNEL {name}(")).unwrap_or_else(|| panic!("no kernel {name}"));
        let open = start + source[start..].find('(').unwrap();
        let close = open + source[open..].find(')').unwrap();
        source[open + 1..close].split(',').map(|p| p.split_whitespace().collect::<Vec<_>>().join(" ")).collect()
    }

    #[test]
    fn every_kernel_spec_has_a_c_body_with_its_layout() {
        for spec in crate::features::kernel_specs() {
            let src = source(spec.family).unwrap();
            let params = parameters(&src, spec.c_entry());
            assert_eq!(params.len(), spec.buffers + spec.scalars, "{}: {params:?}", spec.name);
            for (i, p) in params.iter().enumerate() {
                assert_eq!(
                    p.starts_with("GLOBAL") && p.contains('*'),
                    i < spec.buffers,
                    "{}: parameter {p}",
                    spec.name
                );
            }
        }
    }

    /// A Vulkan `#variant` runs as the kernel it was built from in the C
    /// dialects, so it must keep that kernel's contract: family, work
    /// group, buffers and scalars.
    #[test]
    fn variants_keep_the_contract_of_the_kernel_they_were_built_from() {
        let specs = crate::features::kernel_specs();
        let find = |name: &str| specs.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no spec {name}"));
        let variants = crate::backend::vulkan::shaders::VARIANTS;
        assert!(variants.len() >= 7, "the variants build.rs made: {variants:?}");
        for &(variant, base) in variants {
            let (v, b) = (find(variant), find(base));
            assert_eq!(v.c_entry(), base, "{variant}");
            assert_eq!(
                (v.family, v.workgroup, v.buffers, v.scalars),
                (b.family, b.workgroup, b.buffers, b.scalars),
                "{variant}"
            );
        }
        assert_eq!(find("vif_vertical_strip").c_entry(), "vif_vertical_strip");
    }

    #[test]
    fn reductions_are_sized_for_their_declared_work_group() {
        // psnr_sse, moment_sums and ansnr_row_groups size their local arrays
        // or strides by a constant: it must be the work group the host launches.
        for (spec, constant) in
            [(&psnr::PSNR_SSE, "PSNR_WG"), (&moment::MOMENT_SUMS, "MOMENT_WG"), (&ansnr::ANSNR_ROW_GROUPS, "ANSNR_WG")]
        {
            let src = source(spec.family).unwrap();
            assert!(src.contains(&format!("#define {constant} {}\n", spec.workgroup[0])), "{}", spec.name);
            assert_eq!(spec.workgroup[1..], [1, 1]);
        }
    }

    #[test]
    fn the_header_is_inlined_with_line_markers() {
        let src = source("psnr").unwrap();
        assert!(!src.lines().any(|l| l.trim_start().starts_with("#include")));
        assert!(src.contains("#define KERNEL extern \"C\" __global__ void"));
        assert!(src.contains("#pragma OPENCL FP_CONTRACT OFF"));
        assert!(src.starts_with("#line 1 \"psnr.cl\"\n"));
        // The line after the include keeps its number in psnr.cl.
        let include_line = FAMILIES[0].1.lines().position(|l| l.starts_with("#include")).unwrap() + 1;
        assert!(src.contains(&format!("#line {} \"psnr.cl\"", include_line + 1)));
        assert!(source("no_such").unwrap_err().to_string().contains("kernels/no_such.cl"));
    }

    #[test]
    fn fnv_is_stable_and_separates_parts() {
        assert_eq!(fnv1a(&[]), 0xcbf2_9ce4_8422_2325);
        assert_ne!(fnv1a(&[b"ab", b"c"]), fnv1a(&[b"a", b"bc"]));
        assert_eq!(fnv1a(&[b"x"]), fnv1a(&[b"x"]));
    }
}
