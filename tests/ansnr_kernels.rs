//! float_ansnr's two GPU kernels, `ansnr_filter_rows` (a work item per row,
//! what CPU drivers run) and `ansnr_row_groups` (a work group per row, what
//! GPUs run), against the CPU reference on Mesa lavapipe (Vulkan) and PoCL
//! (OpenCL), which `.ci/run` installs: every score bit for bit, at widths
//! around the row groups' chunk (1024 pixels) and work group (128), and
//! beyond the widest synthetic fixture a gate may declare (8192).

mod common;

use ulpgate::backend::gpu::KernelSpec;
use ulpgate::features::ansnr::{self, ANSNR_FILTER_ROWS, ANSNR_ROW_GROUPS};
use ulpgate::features::{Options, run_extractor};
use ulpgate::fixture::{Chroma, LoadedFixture};

fn fixture(width: u32, height: u32, bit_depth: u8, chroma: Chroma, seed: u64) -> LoadedFixture {
    common::synthetic(width, height, bit_depth, chroma, 2, seed)
}

#[test]
fn both_kernels_match_the_cpu_bit_for_bit_at_any_width() {
    let fixtures = [
        // Narrower than a work group, odd: rows start mid-word.
        fixture(37, 21, 8, Chroma::Yuv420, 1),
        // Exactly one chunk; one pixel more (a chunk of 1).
        fixture(1024, 16, 10, Chroma::Yuv444, 2),
        fixture(1025, 16, 16, Chroma::Yuv420, 3),
        // Three chunks, the last neither a multiple of 128 nor of 8.
        fixture(2100, 17, 12, Chroma::Yuv422, 4),
        // Wider than any gate's synthetic fixture: 9 chunks.
        fixture(8200, 16, 8, Chroma::Yuv444, 5),
    ];
    let specs: [&'static KernelSpec; 2] = [&ANSNR_FILTER_ROWS, &ANSNR_ROW_GROUPS];
    for (backend, gpu) in common::software_gpus() {
        for fx in &fixtures {
            let cpu =
                run_extractor(ansnr::FLOAT_ANSNR.cpu_extractor(&fx.geometry, &Options::new()).unwrap(), fx, &|| {})
                    .unwrap();
            for spec in specs {
                let what = format!("{} on {backend}, {}", spec.name, fx.geometry);
                let out = common::on_gpu(&gpu, fx.frames(), &what, |gpu| {
                    let ext = ansnr::gpu_extractor(gpu, &fx.geometry, spec).unwrap_or_else(|e| panic!("{what}: {e:#}"));
                    run_extractor(ext, fx, &|| {}).unwrap_or_else(|e| panic!("{what}: {e:#}"))
                });
                for metric in ["float_ansnr", "float_anpsnr"] {
                    let (a, b) = (cpu.get(metric).unwrap(), out.get(metric).unwrap());
                    assert_eq!(a.len(), 2);
                    common::assert_same_bits(a, b, &format!("{metric}, {what}"));
                }
            }
        }
    }
}

#[test]
fn only_float_ansnr_kernels_make_a_float_ansnr_pipeline() {
    let fx = fixture(37, 21, 8, Chroma::Yuv420, 1);
    let (_, gpu) = common::software_gpus().remove(0);
    let err = ansnr::gpu_extractor(gpu, &fx.geometry, &ulpgate::features::psnr::PSNR_SSE).err().unwrap();
    assert!(err.to_string().contains("psnr_sse is not a float_ansnr kernel"), "{err}");
}
