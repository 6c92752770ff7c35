//! ciede and psnr_hvs (docs/features/color.md): the GPU pipelines on Mesa
//! lavapipe (Vulkan) and PoCL (OpenCL) against the CPU reference, bit for
//! bit.

mod common;

use std::sync::{Arc, OnceLock};
use ulpgate::backend::gpu::Gpu;
use ulpgate::features::seqsum::{self, Accumulator, SEQSUM, SEQSUM_SERIAL, SeqSum};
use ulpgate::features::{self, Options, run_extractor};
use ulpgate::fixture::{Chroma, Frame, Geometry, LoadedFixture, Samples};

use common::synthetic as fixture;

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
            let cpu = run_extractor(imp.cpu_extractor(&fx.geometry, &Options::new()).unwrap(), fx, &|| {}).unwrap();
            let what = format!("{feature} on {backend}, {}", fx.geometry);
            let out = common::on_gpu(&gpu, fx.frames(), &what, |gpu| {
                let ext =
                    imp.gpu_extractor(gpu, &fx.geometry, &Options::new()).unwrap_or_else(|e| panic!("{what}: {e:#}"));
                run_extractor(ext, fx, &|| {}).unwrap_or_else(|e| panic!("{what}: {e:#}"))
            });
            for metric in (imp.metrics)(&Options::new()).unwrap() {
                let (a, b) = (cpu.get(&metric).unwrap(), out.get(&metric).unwrap());
                assert_eq!(a.len(), fx.frames());
                common::assert_same_bits(a, b, &format!("{what}: {metric}"));
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

/// Frames of few colours, as video has them: each sample one of three
/// levels of the bit depth, the distorted frame the reference with a
/// quarter of its samples moved to another level. Most pixels repeat a
/// colour pair of another (the pairs shape's links), many are equal
/// (scored zero), and the rest are scored once per pair.
fn palette(width: u32, height: u32, bit_depth: u8, chroma: Chroma, seed: u32) -> LoadedFixture {
    let geometry = Geometry { width, height, bit_depth, chroma };
    let top = (1u32 << bit_depth) - 1;
    let levels = [top / 8, top / 2, top - top / 5];
    let mut state = seed.wrapping_mul(2654435761).wrapping_add(1);
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state
    };
    let planes = if chroma == Chroma::Yuv400 { 1 } else { 3 };
    let len: usize = (0..planes).map(|p| geometry.plane_dims(p)).map(|(w, h)| w * h).sum();
    let reference: Vec<u32> = (0..len).map(|_| levels[(next() % 3) as usize]).collect();
    let distorted: Vec<u32> =
        reference.iter().map(|&v| if next() % 4 == 0 { levels[(next() % 3) as usize] } else { v }).collect();
    let frame = |v: &[u32]| {
        let samples = if bit_depth == 8 {
            Samples::U8(v.iter().map(|&x| x as u8).collect())
        } else {
            Samples::U16(v.iter().map(|&x| x as u16).collect())
        };
        Frame::new(geometry, samples).unwrap()
    };
    LoadedFixture { geometry, reference: vec![frame(&reference)], distorted: vec![frame(&distorted)] }
}

/// ciede's two GPU shapes (`ciede::gpu::Shape`): every pixel scored, and
/// each distinct colour pair scored once then copied to its other pixels
/// (what CPU drivers run), each on lavapipe and PoCL, bit for bit with the
/// CPU: on a recorded clip, on few-colour frames at every chroma layout
/// (4:2:2 walks past its rows' ends) and bit depth class, and on random
/// frames (nearly every pair distinct: the claims table's probes meet
/// other pairs).
#[test]
fn both_ciede_shapes_are_bit_exact() {
    use ulpgate::features::ciede::gpu::{Shape, extractor_in};
    let geometry = Geometry { width: 200, height: 184, bit_depth: 8, chroma: Chroma::Yuv420 };
    let fixtures = [
        common::recorded("testsrc2_200x184_8bit_420", "dist_x264", geometry, Some(2)),
        palette(96, 40, 8, Chroma::Yuv420, 1),
        palette(70, 9, 10, Chroma::Yuv422, 2),
        palette(33, 20, 16, Chroma::Yuv444, 3),
        fixture(64, 48, 8, Chroma::Yuv420, 2, 5),
    ];
    let imp = features::find("ciede").unwrap();
    for (backend, gpu) in gpus() {
        for fx in &fixtures {
            let cpu = run_extractor(imp.cpu_extractor(&fx.geometry, &Options::new()).unwrap(), fx, &|| {}).unwrap();
            let want = cpu.get("ciede2000").unwrap();
            assert!(want.iter().all(|v| *v > 0.0 && v.is_finite()), "{}: {want:?}", fx.geometry);
            for shape in [Shape::Pixels, Shape::Pairs] {
                let what = format!("ciede, {shape:?} on {backend}, {}", fx.geometry);
                let out = common::on_gpu(&gpu, fx.frames(), &what, |gpu| {
                    let ext = extractor_in(shape, gpu, &fx.geometry).unwrap_or_else(|e| panic!("{what}: {e:#}"));
                    run_extractor(ext, fx, &|| {}).unwrap_or_else(|e| panic!("{what}: {e:#}"))
                });
                common::assert_same_bits(want, out.get("ciede2000").unwrap(), &what);
            }
        }
    }
}

/// A 4:4:4 8-bit frame pair whose every colour, reference and distorted,
/// takes the kernels' cube root fallback (`cpu::CUBE_ROOT_FALLBACKS`):
/// row 0 holds the triples in order against them reversed, row 1 the
/// other way round.
#[test]
fn ciede_kernels_cube_root_fallback_is_bit_exact() {
    use ulpgate::features::ciede::cpu::CUBE_ROOT_FALLBACKS as T;
    let geometry = Geometry { width: T.len() as u32, height: 2, bit_depth: 8, chroma: Chroma::Yuv444 };
    let frame = |rows: [bool; 2]| {
        let pixels: Vec<[u32; 3]> = rows
            .iter()
            .flat_map(|&reversed| (0..T.len()).map(move |i| T[if reversed { T.len() - 1 - i } else { i }]))
            .collect();
        let planes: Vec<u8> = (0..3).flat_map(|p| pixels.iter().map(move |t| t[p] as u8)).collect();
        Frame::new(geometry, Samples::U8(planes)).unwrap()
    };
    let fx = LoadedFixture { geometry, reference: vec![frame([false, true])], distorted: vec![frame([true, false])] };
    bit_exact("ciede", &[fx]);
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
        make(256 * segment + 3),        // two batches of segments
        make(seqsum::SERIAL_SPAN + 13), // two launches of the serial kernel
        vec![0.0; 5000],
        [vec![1e-30], make(40_000)].concat(),
        // A negative term inside a run of segments with one binade: the
        // run's composed increments saturate, so the walk falls back to
        // segment by segment there, and that segment to the real addition.
        [make(20 * segment), vec![-3.5], make(20 * segment)].concat(),
        // Every addition a tie, decided by the parity of the running
        // significand across segments and the work items' chunks: f32
        // from 2^23 + 1 (unit 1), f64 from 2^30 + 2^-22 (unit 2^-22).
        [vec![8_388_609.0], (0..3 * segment).map(|k| if k % 3 == 0 { 1.5 } else { 0.5 }).collect()].concat(),
        [
            vec![1_073_741_824.0, 2.0f32.powi(-22)],
            (0..3 * segment).map(|k| if k % 5 == 0 { 3.0 } else { 1.0 } * 2.0f32.powi(-23)).collect(),
        ]
        .concat(),
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

/// Runs `gate` (YAML, `@ROOT@` for the repository root) through the binary
/// in `dir`: the exit code, stderr, and the report's cells.
fn run_binary(dir: &std::path::Path, gate: &str) -> (i32, String, Vec<serde_json::Value>) {
    let path = common::write(dir, "g.yaml", gate);
    let json = dir.join("r.json");
    let out = common::ulpgate().arg("run").arg(&path).arg("--json-out").arg(&json).output().unwrap();
    let cells = std::fs::read_to_string(&json)
        .map(|s| serde_json::from_str::<serde_json::Value>(&s).unwrap()["cells"].as_array().unwrap().clone())
        .unwrap_or_default();
    (out.status.code().unwrap(), String::from_utf8_lossy(&out.stderr).into(), cells)
}

#[test]
fn options_are_refused_through_the_binary_neither_feature_takes_any() {
    for feature in ["ciede", "psnr_hvs"] {
        let dir = tempfile::tempdir().unwrap();
        let gate = format!(
            "{}features:\n  - name: {feature}\n    options: {{enable_chroma: false}}\nbackends: {{cpu: {{}}, golden: {{}}}}\npairs: [[golden, cpu]]\nfixtures:\n{}",
            common::HEADER,
            common::FX_8BIT
        );
        let (code, err, cells) = run_binary(dir.path(), &gate);
        assert_eq!(code, 2, "{err}");
        assert!(cells.is_empty());
        assert!(err.contains(&format!("{feature} has no option `enable_chroma`")), "{err}");
        assert!(err.contains(&format!("no options: {feature} takes none")), "{err}");
    }
}

/// A raw YUV pair of two frames in `dir` (synthetic fixtures start at
/// 16x16) and its gate fixture entry.
fn raw_fixture(dir: &std::path::Path, name: &str, width: u32, height: u32, bit_depth: u8, chroma: &str) -> String {
    let parsed = match chroma {
        "420" => Chroma::Yuv420,
        "422" => Chroma::Yuv422,
        "444" => Chroma::Yuv444,
        _ => Chroma::Yuv400,
    };
    let geometry = ulpgate::fixture::Geometry { width, height, bit_depth, chroma: parsed };
    let planes = if parsed == Chroma::Yuv400 { 1 } else { 3 };
    let samples: usize = 2 * (0..planes).map(|p| geometry.plane_dims(p)).map(|(w, h)| w * h).sum::<usize>();
    let max = (1u32 << bit_depth) - 1;
    for (file, seed) in [("ref", 7u32), ("dist", 11)] {
        let bytes: Vec<u8> = (0..samples as u32)
            .map(|i| (i.wrapping_mul(2654435761).wrapping_add(seed * 40503) >> 7) % (max + 1))
            .flat_map(|v| if bit_depth == 8 { vec![v as u8] } else { (v as u16).to_le_bytes().to_vec() })
            .collect();
        std::fs::write(dir.join(format!("{name}_{file}.yuv")), bytes).unwrap();
    }
    let d = dir.display();
    format!(
        "  - name: {name}\n    reference: {d}/{name}_ref.yuv\n    distorted: {d}/{name}_dist.yuv\n    \
         geometry: {{width: {width}, height: {height}, bit_depth: {bit_depth}, chroma: \"{chroma}\"}}\n    frames: 2\n"
    )
}

/// The smallest frames and what libvmaf refuses, through the binary on
/// lavapipe and PoCL: ciede scores a 1x1 frame and psnr_hvs the smallest
/// 4:2:0 frame with an 8x8 chroma block (15x15), every backend the same
/// bits; psnr_hvs with a plane under 8x8 and either feature on input
/// libvmaf refuses are SKIP with libvmaf's reason, never a score.
#[test]
fn smallest_frames_and_refused_inputs_through_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = [
        raw_fixture(dir.path(), "tiny_1x1_420", 1, 1, 8, "420"),
        raw_fixture(dir.path(), "tiny_15x15_420", 15, 15, 10, "420"),
        raw_fixture(dir.path(), "tiny_14x14_420", 14, 14, 8, "420"),
        raw_fixture(dir.path(), "tiny_9x8_16bit_444", 9, 8, 16, "444"),
        raw_fixture(dir.path(), "tiny_16x16_400", 16, 16, 8, "400"),
        raw_fixture(dir.path(), "tiny_80x1_422", 80, 1, 8, "422"),
    ]
    .concat();
    let gate = format!(
        "{}features: [ciede, psnr_hvs]\nbackends:\n  cpu: {{}}\n  vulkan: {{required: true, device: llvmpipe}}\n  \
         opencl: {{required: true}}\npairs: [[cpu, vulkan], [cpu, opencl]]\nfixtures:\n{fixtures}",
        common::HEADER
    );
    let (code, err, cells) = run_binary(dir.path(), &gate);
    assert_eq!(code, 0, "{err}");
    let expect = |feature: &str, fixture: &str, status: &str, note: &str| {
        let mine: Vec<_> = cells.iter().filter(|c| c["feature"] == feature && c["fixture"] == fixture).collect();
        assert_eq!(mine.len(), 2, "{feature} {fixture}: {cells:?}");
        for c in mine {
            assert_eq!(c["status"], status, "{c}");
            assert!(c["note"].as_str().unwrap_or("").contains(note), "{c}");
            if status == "OK" {
                assert_eq!(c["device_b"]["kind"], "gpu", "{c}");
                let worst = c["per_metric_max_abs_diff"].as_object().unwrap().values().map(|v| v.as_f64().unwrap());
                assert!(worst.fold(0.0, f64::max) == 0.0, "{c}");
            }
        }
    };
    expect("ciede", "tiny_1x1_420", "OK", "");
    expect("psnr_hvs", "tiny_1x1_420", "SKIP", "no 8x8 block fits");
    expect("ciede", "tiny_15x15_420", "OK", "");
    expect("psnr_hvs", "tiny_15x15_420", "OK", "");
    expect("ciede", "tiny_14x14_420", "OK", "");
    expect("psnr_hvs", "tiny_14x14_420", "SKIP", "no 8x8 block fits");
    expect("ciede", "tiny_9x8_16bit_444", "OK", "");
    expect("psnr_hvs", "tiny_9x8_16bit_444", "SKIP", "bpc must be less than or equal to 12");
    expect("ciede", "tiny_16x16_400", "SKIP", "4:0:0");
    expect("psnr_hvs", "tiny_16x16_400", "SKIP", "4:0:0");
    expect("ciede", "tiny_80x1_422", "SKIP", "past the end");
}

/// The parallel sum kernel (`seqsum`, what GPUs run; CPU drivers run
/// `seqsum_serial` by default) through the whole pipelines on lavapipe and
/// PoCL: every metric bit for bit with the CPU, on the recorded 8-bit clip
/// and a synthetic 12-bit 4:2:2 one.
#[test]
fn the_parallel_sum_kernel_is_bit_exact_through_both_pipelines() {
    common::assert_bit_exact_with_env("[ciede, psnr_hvs]", 12, "422", seqsum::KERNEL_VAR, "parallel", &["seqsum"]);
}

/// ciede's terms kernel with its table in a storage buffer (what GPUs run;
/// for 8-bit frames with the red and blue maps after it) and in a uniform
/// block (what CPU drivers run), each forced on lavapipe and PoCL: the same
/// bits. The 8-bit synthetic frames are random samples, so their pixels
/// look up maps all over both.
#[test]
fn both_ciede_table_kernels_are_bit_exact() {
    use ulpgate::features::ciede::gpu::TABLE_VAR;
    let (storage, uniform) = (&["ciede_pair_terms_storage"], &["ciede_pair_terms"]);
    common::assert_bit_exact_with_env("[ciede]", 8, "420", TABLE_VAR, "storage", storage);
    common::assert_bit_exact_with_env("[ciede]", 10, "420", TABLE_VAR, "storage", storage);
    common::assert_bit_exact_with_env("[ciede]", 8, "444", TABLE_VAR, "uniform", uniform);
}

/// With the estimates off (every cube root and T from the exact
/// functions: the path an estimate near a midpoint takes), the same bits.
#[test]
fn ciede_kernels_without_estimates_are_bit_exact() {
    use ulpgate::features::ciede::gpu::ESTIMATES_VAR;
    common::assert_bit_exact_with_env("[ciede]", 8, "420", ESTIMATES_VAR, "off", &[]);
    common::assert_bit_exact_with_env("[ciede]", 12, "444", ESTIMATES_VAR, "off", &[]);
}
