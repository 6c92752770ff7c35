//! ciede and psnr_hvs (docs/features/color.md): the GPU pipelines on Mesa
//! lavapipe (Vulkan) and PoCL (OpenCL) against the CPU reference, bit for
//! bit.

mod common;

use std::sync::{Arc, OnceLock};
use ulpgate::backend::gpu::Gpu;
use ulpgate::features::seqsum::{self, Accumulator, SEQSUM, SEQSUM_SERIAL, SeqSum};
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

/// Term sequences shaped to break a wrong sum: many zeros, long fractions,
/// rare huge terms, halves and integers (ties once the sum is coarse), a
/// first term that is tiny, and lengths around the segment and batch sizes.
fn sequences() -> Vec<Vec<f32>> {
    let mut state = 77u64;
    let mut next = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as u32
    };
    let mut make = |n: usize| -> Vec<f32> {
        (0..n)
            .map(|_| {
                let r = next();
                match r % 9 {
                    0 | 1 => 0.0,
                    2 => (r >> 8) as f32 * 1e-3,
                    3 => ((r >> 8) % 5000) as f32 * 37.25,
                    4 => f32::from_bits(0x3000_0000 + (r >> 6)),
                    5 => ((r >> 10) % 256) as f32,
                    6 => ((r >> 12) % 64) as f32 * 0.5,
                    7 => 1e-7,
                    _ => ((r >> 8) as f32).sqrt(),
                }
            })
            .collect()
    };
    let segment = seqsum::SEGMENT;
    vec![
        make(1),
        make(segment - 1),
        make(segment + 1),
        make(256 * segment + 3), // two batches of segments
        vec![0.0; 5000],
        [vec![1e-30], make(40_000)].concat(),
    ]
}

#[test]
fn both_sum_kernels_are_the_sequential_sum_on_lavapipe_and_pocl() {
    let seqs = sequences();
    let counts: Vec<usize> = seqs.iter().map(Vec::len).collect();
    let terms: Vec<u8> = seqs.iter().flatten().flat_map(|t| t.to_le_bytes()).collect();
    for (backend, gpu) in gpus() {
        for acc in [Accumulator::F32, Accumulator::F64] {
            for spec in [&SEQSUM, &SEQSUM_SERIAL] {
                let sum = SeqSum::with_kernel(gpu.as_ref(), acc, &counts, spec).unwrap();
                let buffers = sum.buffers(gpu.as_ref()).unwrap();
                let input = gpu.create_buffer(terms.len()).unwrap();
                let mut stream = gpu.create_stream().unwrap();
                stream.upload(&input, 0, &terms).unwrap();
                sum.record(&input, &buffers, stream.as_mut()).unwrap();
                let got = sum.results(&stream.wait().unwrap()[0]).unwrap();
                for (seq, g) in seqs.iter().zip(got) {
                    let want = seq.iter().fold(0.0, |s, &t| acc.add(s, t));
                    assert_eq!(
                        g.to_bits(),
                        want.to_bits(),
                        "{} {acc:?} on {backend}, {} terms: {g} vs {want}",
                        spec.name,
                        seq.len()
                    );
                }
            }
        }
    }
}
