//! cambi beyond the reference set's default runs:
//!
//! - the CPU reference against libvmaf 3.2.0 (`--cpumask 63`, recorded in
//!   tests/data/cambi/) on option variants, full_ref, resampling, 12- and
//!   16-bit input, odd and minimal sizes and the high-resolution speed-up,
//!   within 1e-6 per frame;
//! - the GPU pipeline against the CPU reference on Mesa lavapipe (Vulkan)
//!   and PoCL (OpenCL), bit for bit, on the same inputs and every chroma
//!   layout;
//! - refusals: frames below cambi's minimum, geometries where libvmaf reads
//!   outside its picture, samples above the bit depth, bad options.

mod common;
use common::recordings::{Recording, recordings};
use common::*;

use sha2::{Digest, Sha256};
use std::sync::Arc;
use ulpgate::backend::gpu::Gpu;
use ulpgate::features::cambi::CAMBI;
use ulpgate::features::{Options, run_extractor};
use ulpgate::fixture::{Chroma, Frame, FrameSource, Geometry, LoadedFixture, Samples, SyntheticSpec};
use ulpgate::scores::Scores;

fn reference_fixture(folder: &str, reference: &str, distorted: &str, max_frames: Option<usize>) -> LoadedFixture {
    let bit_depth = if folder.contains("10bit") { 10 } else { 8 };
    let geometry = Geometry { width: 320, height: 240, bit_depth, chroma: Chroma::Yuv420 };
    let dir = root().join("fixtures/reference").join(folder);
    let src = |name: &str| FrameSource::Raw { path: dir.join(format!("{name}.yuv")), geometry };
    LoadedFixture::load(&src(reference), &src(distorted), max_frames).expect("reference fixture")
}

/// A recording's `derived` input: the luma of a reference clip cropped and,
/// above its own bit depth, shifted up with low bits that change every 32
/// pixels (so 12- and 16-bit rounding is exercised), in the given chroma
/// layout with neutral chroma (cambi reads the luma only). libvmaf scored
/// the 4:4:4 form; the recording holds its SHA-256.
fn derived(spec: &serde_json::Value, chroma: Chroma) -> LoadedFixture {
    let folder = spec["from"].as_str().unwrap();
    let fx = reference_fixture(folder, spec["ref"].as_str().unwrap(), spec["dist"].as_str().unwrap(), None);
    let crop: Vec<usize> = spec["crop"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
    let low: Vec<usize> = spec["low"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
    let (x0, y0, w, h) = (crop[0], crop[1], crop[2], crop[3]);
    let bit_depth = spec["bit_depth"].as_u64().unwrap() as u8;
    let geometry = Geometry { width: w as u32, height: h as u32, bit_depth, chroma };
    let shift = bit_depth - fx.geometry.bit_depth;
    let convert = |frame: &Frame| -> Frame {
        let luma = frame.plane_u16(0);
        let mut samples: Vec<u16> = Vec::with_capacity(geometry.frame_samples());
        for y in 0..h {
            for x in 0..w {
                let v = luma[(y0 + y) * 320 + x0 + x];
                let bits = ((x >> 5) * low[0] + (y >> 5) * low[1]) as u16 & ((1u16 << shift) - 1);
                samples.push(if shift == 0 { v } else { (v << shift) | bits });
            }
        }
        samples.resize(geometry.frame_samples(), 1 << (bit_depth - 1));
        let samples = if bit_depth == 8 {
            Samples::U8(samples.iter().map(|&v| v as u8).collect())
        } else {
            Samples::U16(samples)
        };
        Frame::new(geometry, samples).unwrap()
    };
    LoadedFixture {
        geometry,
        reference: fx.reference.iter().map(convert).collect(),
        distorted: fx.distorted.iter().map(convert).collect(),
    }
}

fn sha256(frames: &[Frame]) -> String {
    let mut h = Sha256::new();
    for f in frames {
        h.update(f.samples.as_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The input libvmaf scored for `case` (in `chroma` where the input allows
/// a choice), checked against the recording's hashes; at most `frames`.
fn case_fixture(case: &Recording, chroma: Option<Chroma>, frames: Option<usize>) -> LoadedFixture {
    let doc = &case.doc;
    let mut fx = if let Some(spec) = doc.get("derived") {
        let fx = derived(spec, Chroma::Yuv444);
        check_hashes(case, &fx);
        match chroma {
            Some(c) => derived(spec, c),
            None => fx,
        }
    } else if let Some(spec) = doc.get("synthetic") {
        let spec: SyntheticSpec = serde_json::from_value(spec.clone()).unwrap();
        let src = |distorted| FrameSource::Synthetic { spec: spec.clone(), distorted };
        let fx = LoadedFixture::load(&src(false), &src(true), frames).unwrap();
        if frames.is_none() {
            check_hashes(case, &fx);
        }
        fx
    } else {
        case.raw_fixture(frames)
    };
    if let Some(n) = frames {
        fx.reference.truncate(n);
        fx.distorted.truncate(n);
    }
    fx
}

fn check_hashes(case: &Recording, fx: &LoadedFixture) {
    let want = &case.doc["sha256"];
    assert_eq!(sha256(&fx.reference), want["ref"].as_str().unwrap(), "{}: not the reference libvmaf scored", case.name);
    assert_eq!(
        sha256(&fx.distorted),
        want["dist"].as_str().unwrap(),
        "{}: not the distorted libvmaf scored",
        case.name
    );
}

fn cpu(fx: &LoadedFixture, options: &Options) -> Scores {
    run_extractor(CAMBI.cpu_extractor(&fx.geometry, options).unwrap(), fx, &|| {}).unwrap()
}

fn gpu(device: &Arc<dyn Gpu>, fx: &LoadedFixture, options: &Options) -> Scores {
    common::on_gpu(device, fx.frames(), &format!("cambi {options:?} on {}", fx.geometry), |device| {
        run_extractor(CAMBI.gpu_extractor(device, &fx.geometry, options).unwrap(), fx, &|| {}).unwrap()
    })
}

fn assert_bit_exact(want: &Scores, got: &Scores, what: &str) {
    let mut n = 0;
    for (name, values) in want.metrics() {
        let other = got.get(name).unwrap_or_else(|| panic!("{what}: no {name}"));
        assert_eq!(values.len(), other.len(), "{what} {name}: frames");
        for (i, (x, y)) in values.iter().zip(other).enumerate() {
            assert_eq!(x.to_bits(), y.to_bits(), "{what} {name} frame {i}: cpu {x}, gpu {y}");
            n += 1;
        }
    }
    assert!(n > 0, "{what}: nothing compared");
}

/// Frames of each recording the CPU is held to (the first), and of the
/// 1080p synthetic ones: enough to vary the content, few enough for a debug
/// build on two cores.
const FRAMES: usize = 3;
const LARGE_FRAMES: usize = 1;

fn frames_for(case: &Recording) -> Option<usize> {
    (case.doc["geometry"]["width"].as_u64().unwrap() >= 1920).then_some(LARGE_FRAMES)
}

#[test]
fn cpu_reproduces_libvmaf_on_options_sizes_and_bit_depths() {
    let cases = recordings("cambi");
    assert!(cases.len() >= 19, "tests/data/cambi holds {} recordings", cases.len());
    let mut nonzero = 0;
    for case in &cases {
        let frames = frames_for(case).unwrap_or(FRAMES);
        let ours = cpu(&case_fixture(case, None, Some(frames)), &case.options);
        let mut expected = (CAMBI.metrics)(&case.options).unwrap();
        expected.sort();
        assert_eq!(expected, case.metric_names(), "{}: metric names", case.name);
        case.assert_reproduced(&ours, frames, 1e-6, false);
        nonzero += case.recorded.metrics().flat_map(|(_, v)| &v[..v.len().min(frames)]).filter(|w| **w != 0.0).count();
    }
    assert!(nonzero > 50, "the recordings mostly band: {nonzero} non-zero scores");
}

#[test]
fn gpu_is_bit_exact_with_the_cpu_on_lavapipe_and_pocl() {
    let cases = recordings("cambi");
    // (what, input, options): the CPU scores each once, every GPU after it.
    let mut inputs: Vec<(String, LoadedFixture, Options)> = Vec::new();
    // The default options on the banded reference clips.
    for folder in ["testsrc2_320x240_8bit_420", "testsrc2_320x240_10bit_420"] {
        inputs.push((folder.into(), reference_fixture(folder, "ref", "dist_band", Some(2)), Options::new()));
    }
    // Every recorded variant; the derived inputs also in the other chroma
    // layouts (the GPU uploads the luma only, wherever it lies in the frame).
    for case in &cases {
        inputs.push((case.name.clone(), case_fixture(case, None, Some(1)), case.options.clone()));
        if case.doc.get("derived").is_some() {
            for chroma in [Chroma::Yuv420, Chroma::Yuv422, Chroma::Yuv400] {
                let what = format!("{} {chroma:?}", case.name);
                inputs.push((what, case_fixture(case, Some(chroma), Some(1)), case.options.clone()));
            }
        }
    }
    let want: Vec<Scores> = inputs.iter().map(|(_, fx, options)| cpu(fx, options)).collect();
    for (backend, device) in software_gpus() {
        for ((what, fx, options), want) in inputs.iter().zip(&want) {
            assert_bit_exact(want, &gpu(&device, fx, options), &format!("{backend} {what}"));
        }
    }
}

#[test]
fn samples_above_the_bit_depth_are_refused_on_every_backend() {
    let mut fx = reference_fixture("testsrc2_320x240_10bit_420", "ref", "dist_band", Some(1));
    let mut samples = fx.distorted[0].plane_u16(0);
    samples[1234] = 1024;
    samples.resize(fx.geometry.frame_samples(), 512);
    fx.distorted[0] = Frame::new(fx.geometry, Samples::U16(samples)).unwrap();
    let check = |r: anyhow::Result<Scores>, what: &str| {
        let e = format!("{:#}", r.expect_err(what));
        assert!(e.contains("values greater than 1023") && e.contains("10-bit"), "{what}: {e}");
        e
    };
    let ext = CAMBI.cpu_extractor(&fx.geometry, &Options::new()).unwrap();
    let want = check(run_extractor(ext, &fx, &|| {}), "cpu");
    for (backend, device) in software_gpus() {
        let ext = CAMBI.gpu_extractor(device, &fx.geometry, &Options::new()).unwrap();
        // The same words, frame number included (the twin-diff session's
        // GPU differential test found the GPU's "frame 0: " prefix alone).
        assert_eq!(check(run_extractor(ext, &fx, &|| {}), backend), want, "{backend}");
    }
}

#[test]
fn libvmafs_refusals_are_refused_with_its_reason() {
    let g = |width, height| Geometry { width, height, bit_depth: 8, chroma: Chroma::Yuv420 };
    let none = Options::new();
    for (geometry, options, why) in [
        (g(200, 184), none.clone(), "both below 216"),
        (g(215, 215), none.clone(), "both below 216"),
        (g(3840, 216), none.clone(), "reads outside its picture"),
        (g(3840, 2160), serde_json::from_value(serde_json::json!({"window_size": 127})).unwrap(), "reciprocal table"),
    ] {
        let reason = (CAMBI.refuses)(&geometry, &options).unwrap_or_else(|| panic!("{geometry} is taken"));
        assert!(reason.contains(why), "{geometry}: {reason}");
        // The extractors refuse too, never score.
        let e = CAMBI.cpu_extractor(&geometry, &options).err().expect("the CPU reference refuses");
        assert!(format!("{e:#}").contains(why), "{e:#}");
    }
    for geometry in [g(216, 100), g(100, 216), g(320, 240), g(1920, 1080)] {
        assert_eq!((CAMBI.refuses)(&geometry, &none), None, "{geometry}");
    }
}

#[test]
fn small_fixtures_are_skipped_cells_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let gate = write(
        dir.path(),
        "g.yaml",
        &format!(
            "{HEADER}features: [cambi]\nbackends: {{golden: {{}}, cpu: {{}}}}\npairs: [[golden, cpu]]\nfixtures:\n{FX_8BIT}"
        ),
    );
    let report = run_report(dir.path(), &gate, &[]);
    let cell = &report["cells"][0];
    assert_eq!(cell["status"], "SKIP", "{cell}");
    let note = cell["note"].as_str().unwrap();
    assert!(note.contains("cambi does not take 200x184") && note.contains("CAMBI_MIN_WIDTH_HEIGHT"), "{note}");
}

#[test]
fn bad_options_are_clear_errors() {
    let run = |option: &str| {
        ulpgate()
            .args(["score", "--backend", "cpu", "--feature", "cambi", "--option", option])
            .args(["--width", "320", "--height", "240"])
            .args(["--reference", "fixtures/reference/testsrc2_320x240_8bit_420/ref.yuv"])
            .args(["--distorted", "fixtures/reference/testsrc2_320x240_8bit_420/dist_band.yuv"])
            .output()
            .unwrap()
    };
    for (option, says) in [
        ("window_sise=33", "did you mean `window_size`"),
        ("window_size=200", "outside its range [15, 127]"),
        ("eotf=hlg", "unknown EOTF `hlg`"),
        ("heatmaps_path=/tmp/h", "writes no files"),
        ("topk=0", "outside its range"),
    ] {
        let out = run(option);
        assert_eq!(out.status.code(), Some(2), "{option}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{option}: {err}");
    }
}

/// Without `full_ref` cambi scores the distorted picture alone, so only the
/// distorted frame is uploaded; with it, both are (and the scores stay the
/// CPU's).
#[test]
fn the_reference_is_uploaded_only_for_full_ref() {
    let fx = common::synthetic(320, 240, 8, Chroma::Yuv420, 3, 7);
    let luma_and_chroma = fx.geometry.plane_offset(3) * fx.geometry.bytes_per_sample();
    for (backend, device) in software_gpus() {
        for (full_ref, sides) in [(false, 1), (true, 2)] {
            let mut options = Options::new();
            options.insert("full_ref".into(), serde_json::json!(full_ref));
            let counting = ulpgate::backend::gpu::CountingGpu::new(device.clone());
            let got = gpu(&(counting.clone() as Arc<dyn Gpu>), &fx, &options);
            assert_bit_exact(&cpu(&fx, &options), &got, &format!("{backend} full_ref={full_ref}"));
            let per_frame = counting.uploaded() / 3;
            assert!(
                per_frame >= sides * 320 * 240 && per_frame <= sides * luma_and_chroma as u64,
                "{backend} full_ref={full_ref}: {per_frame} bytes a frame"
            );
        }
    }
}
