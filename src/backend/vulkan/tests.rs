//! Tests of the Vulkan backend. The SPIR-V checks need no device; the rest
//! run on Mesa lavapipe, which `.ci/run` installs (they fail, saying so,
//! where it is missing: a GPU test that skips itself proves nothing).

use super::context::{Options, QueuePlan, Uploads, VulkanGpu, lanes_from_env};
use super::shaders::{self, SHADERS};
use crate::backend::gpu::{Arg, CountingGpu, Gpu, KernelSpec};
use crate::config::gate::DeviceSelector;
use crate::features::psnr::PSNR_SSE;
use std::sync::Arc;

/// Every kernel of the build (the features' and the dialect self-test's).
fn specs() -> Vec<&'static KernelSpec> {
    crate::features::kernel_specs()
}

fn lavapipe(options: Options) -> Arc<VulkanGpu> {
    super::open(Some(&DeviceSelector::Name("llvmpipe".into())), options)
        .unwrap_or_else(|e| panic!("these tests run on Mesa lavapipe (apt-get install mesa-vulkan-drivers): {e}"))
}

#[test]
fn every_kernel_has_one_spirv_module_and_back() {
    let specs = specs();
    for spec in &specs {
        assert!(shaders::find(spec.name).is_some(), "no shaders/{}.comp or .wgsl", spec.name);
    }
    for shader in SHADERS {
        assert!(
            specs.iter().any(|s| s.name == shader.name),
            "shaders/{} has no KernelSpec in any feature's `kernels`",
            shader.name
        );
    }
}

/// Re-parses each embedded module with naga's SPIR-V front end, validates
/// it, and checks its interface against the kernel's spec: entry point,
/// work-group size, storage buffers at set 0 bindings 0.., and a push
/// constant block of 4 bytes per scalar.
#[test]
fn spirv_modules_validate_and_match_their_specs() {
    use naga::valid::{Capabilities, ValidationFlags, Validator};
    for spec in specs() {
        let shader = shaders::find(spec.name).expect("checked above");
        let module = naga::front::spv::parse_u8_slice(shader.spirv, &naga::front::spv::Options::default())
            .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
        Validator::new(
            ValidationFlags::all(),
            Capabilities::IMMEDIATES | Capabilities::SHADER_INT64 | Capabilities::FLOAT64,
        )
        .validate(&module)
        .unwrap_or_else(|e| panic!("{}: {e:?}", spec.name));
        let [entry] = module.entry_points.as_slice() else { panic!("{}: one entry point", spec.name) };
        assert_eq!(entry.name, spec.name);
        assert_eq!(entry.stage, naga::ShaderStage::Compute);
        assert_eq!(entry.workgroup_size, spec.workgroup, "{}", spec.name);

        let mut bindings: Vec<u32> = Vec::new();
        let mut push_bytes = 0;
        for (_, var) in module.global_variables.iter() {
            match var.space {
                naga::AddressSpace::Storage { .. } | naga::AddressSpace::Uniform => {
                    let b = var.binding.as_ref().expect("a bound buffer");
                    assert_eq!(b.group, 0, "{}: set 0", spec.name);
                    bindings.push(b.binding);
                }
                naga::AddressSpace::Immediate => push_bytes = module.types[var.ty].inner.size(module.to_ctx()),
                _ => {}
            }
        }
        bindings.sort();
        assert_eq!(bindings, (0..spec.buffers as u32).collect::<Vec<_>>(), "{}: bindings", spec.name);
        assert_eq!(push_bytes, 4 * spec.scalars as u32, "{}: push constants", spec.name);
        // The run-time reflection reads the same interface: entry point,
        // work-group size, and which bindings are uniform blocks (the taps).
        assert_eq!(shaders::entry_point(&shader.words()), Some((spec.name.to_string(), spec.workgroup)));
        let uniform: Vec<u32> = module
            .global_variables
            .iter()
            .filter(|(_, v)| v.space == naga::AddressSpace::Uniform)
            .filter_map(|(_, v)| v.binding.as_ref().map(|b| b.binding))
            .collect();
        assert_eq!(shaders::uniform_bindings(&shader.words()), uniform, "{}", spec.name);
    }
}

/// Every float multiply, add and subtract is NoContraction (no FMA the
/// CPU reference does not do).
#[test]
fn float_arithmetic_is_never_contracted() {
    const OP_DECORATE: u32 = 71;
    const NO_CONTRACTION: u32 = 42;
    for shader in SHADERS {
        let words = shader.words();
        let decorated: Vec<u32> = shaders::instructions(&words)
            .filter(|(op, args)| *op == OP_DECORATE && args.get(1) == Some(&NO_CONTRACTION))
            .map(|(_, args)| args[0])
            .collect();
        let arithmetic: Vec<u32> = shaders::instructions(&words)
            .filter(|(op, _)| matches!(op, 129 | 131 | 133))
            .map(|(_, args)| args[1])
            .collect();
        for id in &arithmetic {
            assert!(decorated.contains(id), "{}: %{id} may be fused", shader.name);
        }
        if shader.name.starts_with("ansnr") {
            assert!(!arithmetic.is_empty(), "{}: float kernels do float arithmetic", shader.name);
        }
    }
}

#[test]
fn lavapipe_reports_its_identity() {
    let gpu = lavapipe(Options::default());
    let d = gpu.device();
    assert_eq!(d.arch_id, "vulkan:0x10005:0x0000");
    assert_eq!(d.kind, crate::backend::DeviceKind::Gpu);
    assert_eq!(d.device_type.as_deref(), Some("cpu"));
    assert!(d.driver.as_deref().is_some_and(|s| s.contains("llvmpipe")), "{:?}", d.driver);
    assert!(d.api_version.as_deref().is_some_and(|v| v.starts_with("1.")), "{:?}", d.api_version);
}

/// Every buffer is a whole number of 16-byte vectors, bound whole: kernels
/// read past the requested end up to the vec4 that holds the last value
/// (psnr_hvs's tables as `vec4`s, `seqsum_serial`'s terms).
#[test]
fn buffers_are_whole_vec4s() {
    let gpu = lavapipe(Options::default());
    for bytes in [1, 4, 5, 16, 17, 746_500] {
        let buf = gpu.create_buffer(bytes).unwrap();
        let size = buf.raw::<super::memory::VkBuffer>().unwrap().size;
        assert!(size >= bytes && size % 16 == 0, "{bytes} bytes: a buffer of {size}");
    }
}

#[test]
fn streams_run_in_order_and_return_downloads_in_order() {
    let gpu = lavapipe(Options::default());
    let buf = gpu.create_buffer(64).unwrap();
    let mut s = gpu.create_stream().unwrap();
    let first: Vec<u8> = (0..64).collect();
    s.upload(&buf, 0, &first).unwrap();
    s.download(&buf, 8, 8).unwrap();
    s.zero(&buf).unwrap();
    s.upload_with(&buf, 4, 4, &mut |staging| {
        staging.copy_from_slice(&[9, 9, 9, 9]);
        Ok(())
    })
    .unwrap();
    s.download(&buf, 0, 12).unwrap();
    // Nothing ran yet: the downloads come from wait, in recording order.
    let out = s.wait().unwrap();
    assert_eq!(out, vec![(8..16).collect::<Vec<u8>>(), vec![0, 0, 0, 0, 9, 9, 9, 9, 0, 0, 0, 0]]);
    // The stream is reusable, and work recorded after a submit sees it.
    s.upload(&buf, 0, &[1, 2, 3, 4]).unwrap();
    s.submit().unwrap();
    s.download(&buf, 0, 4).unwrap();
    assert_eq!(s.wait().unwrap(), vec![vec![1, 2, 3, 4]]);
    assert!(s.wait().unwrap().is_empty());
}

#[test]
fn out_of_range_and_foreign_arguments_are_refused() {
    let gpu = lavapipe(Options::default());
    let buf = gpu.create_buffer(16).unwrap();
    let mut s = gpu.create_stream().unwrap();
    let err = s.upload(&buf, 12, &[0; 8]).unwrap_err().to_string();
    assert!(err.contains("outside a buffer of 16 bytes"), "{err}");
    assert!(s.download(&buf, 17, 0).is_err());
    let foreign = crate::backend::gpu::Buffer::new(0u32, 16);
    assert!(s.zero(&foreign).unwrap_err().to_string().contains("another backend"));
    let kernel = gpu.load_kernel(&PSNR_SSE).unwrap();
    let err = s.dispatch(&kernel, [1, 1, 1], &[Arg::Buffer(&buf), Arg::U32(1)]).unwrap_err().to_string();
    assert!(err.contains("takes 3 buffers and 6 scalars"), "{err}");
}

/// A table bound as a uniform block larger than the device's range is
/// refused at dispatch, where a clamped range would have the kernel read
/// zeros past it: vif_horizontal_strip's log2 table (binding 3) one vec4
/// over lavapipe's 65536 bytes.
#[test]
fn a_uniform_table_past_the_devices_range_is_refused() {
    use crate::features::vif::gpu_integer::VIF_HORIZONTAL_STRIP;
    let gpu = lavapipe(Options::default());
    let kernel = gpu.load_kernel(&VIF_HORIZONTAL_STRIP).unwrap();
    // The table at binding 3; the partials (binding 5), which every item
    // writes, for the one group of 64.
    let sizes = |table: usize| (0..8).map(move |b| [16, 16, 16, table, 16, 64 * 32, 16, 16][b]);
    let mut s = gpu.create_stream().unwrap();
    let mut dispatch = |table: usize| {
        let buffers: Vec<_> = sizes(table).map(|bytes| gpu.create_buffer(bytes).unwrap()).collect();
        let mut args: Vec<Arg> = buffers.iter().map(Arg::Buffer).collect();
        // No item: w = h = 0.
        args.extend([0u32; 6].map(Arg::U32));
        s.dispatch(&kernel, [1, 1, 1], &args).map_err(|e| e.to_string())
    };
    assert!(dispatch(65536).is_ok());
    let err = dispatch(65536 + 16).unwrap_err();
    assert!(
        err.contains("reads a 65552-byte table as a uniform block") && err.contains("hold at most 65536 bytes"),
        "{err}"
    );
    s.wait().unwrap();
}

/// Uploads apart from the kernels (a transfer queue's path, taken here on
/// lavapipe's one queue) land as uploads in the compute command buffer do:
/// two into one buffer in order, one recorded after a download after it,
/// and a second batch reuses the stream's upload command buffer and
/// semaphore.
#[test]
fn uploads_apart_from_the_kernels_land_as_inline_ones_do() {
    for uploads in [Uploads::Inline, Uploads::Split] {
        let gpu = lavapipe(Options { uploads, ..Options::default() });
        // lavapipe has no transfer-only family, so Auto would be Inline.
        assert_eq!(gpu.upload_family().is_some(), uploads == Uploads::Split, "{uploads:?}");
        let buf = gpu.create_buffer(64).unwrap();
        let mut s = gpu.create_stream().unwrap();
        for batch in 0..2u8 {
            s.upload(&buf, 0, &[batch + 1; 64]).unwrap();
            s.upload(&buf, 16, &[batch + 10; 16]).unwrap();
            s.download(&buf, 0, 64).unwrap();
            s.upload(&buf, 0, &[batch + 20; 8]).unwrap();
            s.download(&buf, 0, 64).unwrap();
            let out = s.wait().unwrap();
            let mut want = [batch + 1; 64];
            want[16..32].fill(batch + 10);
            assert_eq!(out[0], want, "{uploads:?}, batch {batch}: the first download");
            want[..8].fill(batch + 20);
            assert_eq!(out[1], want, "{uploads:?}, batch {batch}: the second download");
        }
    }
    assert_eq!(Uploads::from_env(None), Ok(Uploads::Auto));
    assert_eq!(Uploads::from_env(Some("split".as_ref())), Ok(Uploads::Split));
    let err = Uploads::from_env(Some("dma".as_ref())).unwrap_err();
    assert_eq!(err, "ULPGATE_VK_UPLOADS=dma: expected auto, inline or split");
}

/// Streams take the least used of the compute queues, one queue of each
/// compute family, and `ULPGATE_VK_QUEUES` caps how many; a stream gives
/// its queue back when dropped. Lavapipe has one family, so every stream
/// meets on its queue here; the default gate with every backend required
/// on NVIDIA (`scripts/device-check.sh`: two compute families) is what
/// runs streams on two.
#[test]
fn streams_take_the_least_used_compute_queue() {
    for lanes in [1, usize::MAX] {
        let gpu = lavapipe(Options { lanes, ..Options::default() });
        assert_eq!(gpu.compute_families(), [0], "lanes {lanes}");
        let bufs: Vec<_> = (0..3).map(|_| gpu.create_buffer(16).unwrap()).collect();
        let mut streams: Vec<_> = (0..3).map(|_| gpu.create_stream().unwrap()).collect();
        for (i, (s, buf)) in streams.iter_mut().zip(&bufs).enumerate() {
            s.upload(buf, 0, &[i as u8 + 1; 16]).unwrap();
            s.download(buf, 0, 16).unwrap();
            s.submit().unwrap();
        }
        for (i, s) in streams.iter_mut().enumerate() {
            assert_eq!(s.wait().unwrap(), [vec![i as u8 + 1; 16]], "stream {i}");
        }
        assert_eq!(gpu.lane_loads(), [3], "lanes {lanes}: three live streams");
        drop(streams);
        assert_eq!(gpu.lane_loads(), [0], "lanes {lanes}: every stream gave its queue back");
    }
    assert_eq!(lanes_from_env(None), Ok(usize::MAX));
    assert_eq!(lanes_from_env(Some("".as_ref())), Ok(usize::MAX));
    assert_eq!(lanes_from_env(Some("1".as_ref())), Ok(1));
    let err = lanes_from_env(Some("0".as_ref())).unwrap_err();
    assert_eq!(err, "ULPGATE_VK_QUEUES=0: expected a number of queues, 1 or more");
}

/// The queue families a context opens, on an NVIDIA-like layout (on the
/// H100 and H200, driver 580, the lanes were families 0 and 2 and uploads
/// went to a transfer-only family; the queue counts here are typical, not
/// read there) and on lavapipe's: one lane of each compute family, the
/// copy engines for uploads, and the caps and switches.
#[test]
fn queue_plans_take_one_lane_of_each_compute_family() {
    use ash::vk::{QueueFamilyProperties, QueueFlags};
    let family = |flags, count| QueueFamilyProperties { queue_flags: flags, queue_count: count, ..Default::default() };
    let gct = QueueFlags::GRAPHICS | QueueFlags::COMPUTE | QueueFlags::TRANSFER;
    let nvidia = [
        family(gct, 16),
        family(QueueFlags::TRANSFER, 2),
        family(QueueFlags::COMPUTE | QueueFlags::TRANSFER, 8),
        family(QueueFlags::TRANSFER | QueueFlags::VIDEO_DECODE_KHR, 4),
    ];
    let plan = |families: &[QueueFamilyProperties], lanes, uploads| {
        QueuePlan::new(families, Options { lanes, uploads, ..Options::default() })
    };
    let want = |compute: &[u32], upload, used: &[u32]| {
        Some(QueuePlan { compute: compute.to_vec(), upload, used: used.to_vec() })
    };
    assert_eq!(plan(&nvidia, usize::MAX, Uploads::Auto), want(&[0, 2], Some(1), &[0, 2, 1]));
    assert_eq!(plan(&nvidia, 1, Uploads::Auto), want(&[0], Some(1), &[0, 1]));
    assert_eq!(plan(&nvidia, usize::MAX, Uploads::Inline), want(&[0, 2], None, &[0, 2]));
    assert_eq!(plan(&nvidia, usize::MAX, Uploads::Split), want(&[0, 2], Some(0), &[0, 2]));
    let lavapipe = [family(gct, 1)];
    assert_eq!(plan(&lavapipe, usize::MAX, Uploads::Auto), want(&[0], None, &[0]));
    assert_eq!(plan(&[family(QueueFlags::TRANSFER, 1)], usize::MAX, Uploads::Auto), None);
    assert_eq!(plan(&[family(gct, 0), family(gct, 1)], usize::MAX, Uploads::Auto), want(&[1], None, &[1]));
}

/// `psnr_sse` on a known frame pair: the sums are exact, across work
/// groups and planes, with push descriptors and with descriptor pools.
#[test]
fn psnr_sse_sums_exactly_with_either_binding_path() {
    for push_descriptor in [true, false] {
        let gpu = lavapipe(Options { push_descriptor, ..Options::default() });
        assert_eq!(gpu.uses_push_descriptors(), push_descriptor);
        let kernel = gpu.load_kernel(&PSNR_SSE).unwrap();
        // 16-bit samples, luma of 5000 (two groups of 4096), chroma 1250.
        let (luma, chroma) = (5000usize, 1250usize);
        let n = luma + 2 * chroma;
        let r: Vec<u16> = (0..n).map(|i| (i * 7919 % 65536) as u16).collect();
        let d: Vec<u16> = (0..n).map(|i| (i * 104_729 % 65536) as u16).collect();
        let bytes = |v: &[u16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let (rb, db) = (gpu.create_buffer(2 * n).unwrap(), gpu.create_buffer(2 * n).unwrap());
        let groups = luma.div_ceil(4096);
        let partials = gpu.create_buffer(groups * 3 * 8).unwrap();
        let mut s = gpu.create_stream().unwrap();
        s.upload(&rb, 0, &bytes(&r)).unwrap();
        s.upload(&db, 0, &bytes(&d)).unwrap();
        let args = [Arg::Buffer(&rb), Arg::Buffer(&db), Arg::Buffer(&partials)];
        let scalars = [luma, chroma, 3, 2, 4096, 0].map(|v| Arg::U32(v as u32));
        let all: Vec<Arg> = args.iter().chain(&scalars).copied().collect();
        // Twice in one batch: the second sees the same inputs.
        for _ in 0..2 {
            s.dispatch(&kernel, [groups as u32, 3, 1], &all).unwrap();
            s.download(&partials, 0, groups * 3 * 8).unwrap();
        }
        let out = s.wait().unwrap();
        assert_eq!(out[0], out[1]);
        let words: Vec<u64> = out[0]
            .chunks_exact(8)
            .map(|c| {
                u64::from(u32::from_le_bytes(c[..4].try_into().unwrap()))
                    | u64::from(u32::from_le_bytes(c[4..].try_into().unwrap())) << 32
            })
            .collect();
        let starts = [0, luma, luma + chroma];
        let lens = [luma, chroma, chroma];
        for p in 0..3 {
            let expected: u64 = (starts[p]..starts[p] + lens[p])
                .map(|i| {
                    let e = i64::from(r[i]) - i64::from(d[i]);
                    (e * e) as u64
                })
                .sum();
            let got: u64 = words[p * groups..(p + 1) * groups].iter().sum();
            assert_eq!(got, expected, "plane {p}, push_descriptor {push_descriptor}");
            assert!(expected > u64::from(u32::MAX), "the test exercises the carry");
        }
    }
}

/// The GPU twins against the CPU reference on synthetic fixtures of every
/// bit depth, bit for bit (ssimulacra2 within its sum-order tolerance).
#[test]
fn gpu_twins_match_the_cpu_reference_bit_for_bit() {
    use crate::features::{self, Options as FeatureOptions, run_extractor};
    use crate::fixture::Chroma;
    use crate::fixture::{FrameSource, LoadedFixture, SyntheticSpec};
    let gpu: Arc<dyn Gpu> = lavapipe(Options::default());
    // 48x32, and 37x21: rows that start mid-word, odd chroma planes.
    let odd = |bit_depth, chroma| {
        let spec = SyntheticSpec {
            width: 37,
            height: 21,
            frames: 3,
            bit_depth,
            chroma,
            seed: 9,
            content: Default::default(),
            distortion: Default::default(),
        };
        let src = |distorted| FrameSource::Synthetic { spec: spec.clone(), distorted };
        LoadedFixture::load(&src(false), &src(true), None).unwrap()
    };
    let fixtures = [
        features::testutil::synthetic(8, Chroma::Yuv420, 3),
        features::testutil::synthetic(10, Chroma::Yuv444, 3),
        features::testutil::synthetic(12, Chroma::Yuv422, 3),
        features::testutil::synthetic(16, Chroma::Yuv420, 3),
        odd(8, Chroma::Yuv420),
        odd(10, Chroma::Yuv422),
        odd(16, Chroma::Yuv444),
    ];
    for fx in &fixtures {
        for imp in features::implementations() {
            if !imp.has_gpu() {
                continue;
            }
            let options = FeatureOptions::new();
            // Frames libvmaf has no score for (adm below 33x33, float_ms_ssim
            // below 176x176) are refused on every backend; the family tests
            // cover that.
            if (imp.refuses)(&fx.geometry, &options).is_some() {
                continue;
            }
            let cpu = run_extractor(imp.cpu_extractor(&fx.geometry, &options).unwrap(), fx, &|| {}).unwrap();
            // Behind a kernel counter: a pipeline that fell back to the CPU
            // would match it by construction.
            let counting = CountingGpu::new(gpu.clone());
            let ext = imp.gpu_extractor(counting.clone(), &fx.geometry, &options).unwrap();
            let vk = run_extractor(ext, fx, &|| {}).unwrap();
            assert!(counting.dispatches() >= 3, "{} on {}: {} kernels", imp.name, fx.geometry, counting.dispatches());
            for metric in (imp.metrics)(&options).unwrap() {
                let (a, b) = (cpu.get(&metric).unwrap(), vk.get(&metric).unwrap());
                assert_eq!((a.len(), b.len()), (3, 3), "{metric} on {}", fx.geometry);
                // Non-finite on either side is a mismatch (f64::max would
                // drop a NaN). ssimulacra2 adds its f64 map sums in another
                // order on GPUs; every other metric is bit-exact.
                let max = a
                    .iter()
                    .zip(b)
                    .map(|(x, y)| if x.to_bits() == y.to_bits() { 0.0 } else { (x - y).abs() })
                    .map(|d| if d.is_nan() { f64::INFINITY } else { d })
                    .fold(0.0f64, f64::max);
                let allowed =
                    if imp.name == "ssimulacra2" { features::ssimulacra2::gpu::SUM_ORDER_TOLERANCE } else { 0.0 };
                assert!(max <= allowed, "{metric} on {}: cpu {a:?} vs vulkan {b:?}", fx.geometry);
            }
        }
    }
}
