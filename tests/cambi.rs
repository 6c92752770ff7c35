//! cambi's GPU pipeline against the CPU reference on Mesa lavapipe
//! (Vulkan) and PoCL (OpenCL), bit for bit.

mod common;

use std::sync::Arc;
use ulpgate::backend::gpu::Gpu;
use ulpgate::features::cambi::CAMBI;
use ulpgate::features::{Options, run_extractor};
use ulpgate::fixture::{Chroma, FrameSource, Geometry, LoadedFixture};
use ulpgate::scores::Scores;

fn reference(folder: &str, dist: &str, width: u32, height: u32, bit_depth: u8) -> LoadedFixture {
    let geometry = Geometry { width, height, bit_depth, chroma: Chroma::Yuv420 };
    let root = common::root().join("fixtures/reference").join(folder);
    let src = |name: &str| FrameSource::Raw { path: root.join(format!("{name}.yuv")), geometry };
    LoadedFixture::load(&src("ref"), &src(dist), None).expect("reference fixture")
}

fn cpu(fx: &LoadedFixture, options: &Options) -> Scores {
    run_extractor((CAMBI.cpu)(&fx.geometry, options).unwrap(), fx, &|| {}).unwrap()
}

fn gpu(gpu: &Arc<dyn Gpu>, fx: &LoadedFixture, options: &Options) -> Scores {
    let make = CAMBI.gpu.expect("cambi has a GPU pipeline");
    run_extractor(make(gpu.clone(), &fx.geometry, options).unwrap(), fx, &|| {}).unwrap()
}

fn assert_same(a: &Scores, b: &Scores, what: &str) {
    let names: Vec<&str> = a.metrics().map(|(n, _)| n).collect();
    assert!(!names.is_empty(), "{what}: no metrics");
    for (name, values) in a.metrics() {
        let other = b.get(name).unwrap_or_else(|| panic!("{what}: no {name}"));
        assert_eq!(values.len(), other.len(), "{what} {name}");
        for (i, (x, y)) in values.iter().zip(other).enumerate() {
            assert_eq!(x.to_bits(), y.to_bits(), "{what} {name} frame {i}: cpu {x}, gpu {y}");
        }
    }
}

#[test]
fn reference_clips_are_bit_exact_on_lavapipe_and_pocl() {
    let fixtures = [("testsrc2_320x240_8bit_420", "dist_band", 8), ("testsrc2_320x240_10bit_420", "dist_band", 10)];
    for (backend, device) in common::software_gpus() {
        for (folder, dist, bits) in fixtures {
            let fx = reference(folder, dist, 320, 240, bits);
            let want = cpu(&fx, &Options::new());
            let got = gpu(&device, &fx, &Options::new());
            eprintln!("{backend} {folder}: {:?} {:?}", want.get("cambi").unwrap()[0], got.get("cambi").unwrap()[0]);
            assert_same(&want, &got, &format!("{backend} {folder}/{dist}"));
        }
    }
}
