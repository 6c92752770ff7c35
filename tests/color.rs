//! ciede and psnr_hvs (docs/features/color.md): the GPU pipelines on Mesa
//! lavapipe (Vulkan) and PoCL (OpenCL) against the CPU reference, bit for
//! bit.

mod common;

use std::sync::{Arc, OnceLock};
use ulpgate::backend::gpu::Gpu;
use ulpgate::features::{self, Options, run_extractor};
use ulpgate::fixture::{Chroma, FrameSource, LoadedFixture, SyntheticSpec};

fn fixture(width: u32, height: u32, bit_depth: u8, chroma: Chroma, frames: u32, seed: u64) -> LoadedFixture {
    let spec = SyntheticSpec {
        width,
        height,
        frames,
        bit_depth,
        chroma,
        seed,
        content: Default::default(),
        distortion: Default::default(),
    };
    let src = |distorted| FrameSource::Synthetic { spec: spec.clone(), distorted };
    LoadedFixture::load(&src(false), &src(true), None).expect("synthetic frames")
}

/// Lavapipe and PoCL, opened once for every test of this file: PoCL's (3.1)
/// first device query is not thread-safe (two tests opening it at once can
/// crash in clGetDeviceInfo).
fn gpus() -> Vec<(&'static str, Arc<dyn Gpu>)> {
    static GPUS: OnceLock<Vec<(&'static str, Arc<dyn Gpu>)>> = OnceLock::new();
    GPUS.get_or_init(common::software_gpus).clone()
}

fn bit_exact(feature: &str, fixtures: &[LoadedFixture]) {
    let imp = features::find(feature).unwrap();
    for (backend, gpu) in gpus() {
        for fx in fixtures {
            let cpu = run_extractor((imp.cpu)(&fx.geometry, &Options::new()).unwrap(), fx, &|| {}).unwrap();
            let ext = (imp.gpu.unwrap())(gpu.clone(), &fx.geometry, &Options::new())
                .unwrap_or_else(|e| panic!("{feature} on {backend}: {e:#}"));
            let out = run_extractor(ext, fx, &|| {}).unwrap_or_else(|e| panic!("{feature} on {backend}: {e:#}"));
            for metric in (imp.metrics)(&Options::new()).unwrap() {
                let (a, b) = (cpu.get(&metric).unwrap(), out.get(&metric).unwrap());
                assert_eq!(a.len(), fx.frames());
                assert!(
                    a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()),
                    "{metric} on {backend}, {}: cpu {a:?} vs {b:?}",
                    fx.geometry
                );
            }
        }
    }
}

#[test]
fn psnr_hvs_is_bit_exact_on_lavapipe_and_pocl() {
    bit_exact(
        "psnr_hvs",
        &[
            fixture(64, 48, 8, Chroma::Yuv420, 2, 1),
            fixture(37, 29, 10, Chroma::Yuv444, 2, 2),
            fixture(50, 33, 12, Chroma::Yuv422, 2, 3),
            fixture(16, 16, 8, Chroma::Yuv420, 1, 4),
        ],
    );
}

#[test]
fn ciede_is_bit_exact_on_lavapipe_and_pocl() {
    bit_exact(
        "ciede",
        &[
            fixture(64, 48, 8, Chroma::Yuv420, 2, 1),
            fixture(37, 29, 10, Chroma::Yuv444, 2, 2),
            fixture(50, 33, 12, Chroma::Yuv422, 2, 3),
            fixture(21, 17, 16, Chroma::Yuv420, 1, 4),
        ],
    );
}
