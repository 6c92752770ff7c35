//! The kernel dialects themselves, before any feature: every CUDA/OpenCL
//! family compiles with NVRTC (no GPU needed; `scripts/test.sh` installs
//! NVRTC from PyPI), and 64-bit integer arithmetic — what the integer
//! features' kernels are built from — and floats widened to doubles equal
//! Rust's on lavapipe (WGSL dialect) and PoCL (C dialect).

mod common;

use ulpgate::backend::{cuda, kernels, selftest};

#[test]
fn every_kernel_family_compiles_as_cuda_with_nvrtc() {
    let archs = cuda::nvrtc_archs().unwrap_or_else(|e| {
        panic!("this test needs NVRTC (scripts/test.sh installs PyPI's nvidia-cuda-nvrtc; ULPGATE_CUDA_HOME points at it): {e:#}")
    });
    // The oldest architecture this NVRTC targets and Hopper (the device
    // machine's H100/H200), where it knows it.
    let mut targets = vec![*archs.iter().min().expect("NVRTC lists architectures")];
    if archs.contains(&90) {
        targets.push(90);
    }
    for (family, _) in kernels::FAMILIES {
        for &arch in &targets {
            let bytes =
                cuda::compile_family(family, arch).unwrap_or_else(|e| panic!("{family}.cl for sm_{arch}: {e:#}"));
            assert!(bytes > 0, "{family}.cl for sm_{arch}: an empty image");
        }
    }
}

#[test]
fn int64_arithmetic_equals_rusts_on_lavapipe_and_pocl() {
    for (backend, gpu) in common::software_gpus() {
        for shift in [1, 14, 16, 31, 32] {
            selftest::check_int64(gpu.as_ref(), shift).unwrap_or_else(|e| panic!("{backend}: {e:#}"));
        }
    }
}

/// Floats widened to doubles (WGSL's `widen()`, the C casts) and their
/// products: Rust's bits on lavapipe and PoCL, subnormals included.
#[test]
fn widened_floats_and_their_products_equal_rusts_on_lavapipe_and_pocl() {
    for (backend, gpu) in common::software_gpus() {
        selftest::check_widen(gpu.as_ref()).unwrap_or_else(|e| panic!("{backend}: {e:#}"));
    }
}

/// Float products and sums with subnormal operands and results: Rust's
/// bits on lavapipe and PoCL (neither flushes subnormals, so their float
/// kernels can equal the CPU's everywhere).
#[test]
fn float_arithmetic_keeps_subnormals_on_lavapipe_and_pocl() {
    for (backend, gpu) in common::software_gpus() {
        let float = selftest::check_float(gpu.as_ref()).unwrap_or_else(|e| panic!("{backend}: {e:#}"));
        assert_eq!(float, selftest::FloatArithmetic::Exact { pairs: selftest::float_inputs().len() }, "{backend}");
    }
}

#[test]
fn devices_check_runs_the_self_test_on_every_gpu_device() {
    let out = common::ulpgate().args(["devices", "--check", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = doc["self_test"].as_array().expect("self_test results");
    for backend in ["vulkan", "opencl"] {
        let r = results.iter().find(|r| r["backend"] == backend).unwrap_or_else(|| panic!("no {backend} self-test"));
        assert_eq!(r["ok"], true, "{r}");
        assert!(
            r["detail"].as_str().is_some_and(|d| d.contains("float products and sums equal, subnormals included")),
            "{r}"
        );
    }
}
