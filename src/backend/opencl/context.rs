//! An OpenCL context on one device: buffers, programs built on first use
//! (one per kernel family), streams.

use super::stream::{new_queue, new_stream};
use crate::backend::DeviceInfo;
use crate::backend::gpu::{Buffer, Gpu, Kernel, KernelSpec, Stream};
use crate::backend::kernels;
use anyhow::{Context as _, Result, anyhow};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::{CL_DEVICE_TYPE_CPU, CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT, Device};
use opencl3::memory::{Buffer as ClMem, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub struct ClGpu {
    info: DeviceInfo,
    device: Device,
    context: Arc<Context>,
    /// A CPU device's one command queue, which all its streams share (see
    /// `new`); `None` on GPUs, where each stream has its own.
    shared_queue: Option<Arc<CommandQueue>>,
    build_options: String,
    programs: Mutex<HashMap<&'static str, Arc<Program>>>,
}

/// A device buffer of this backend.
pub struct ClBuffer(pub ClMem<u8>);

/// A kernel of this backend: the program holding it. Each stream creates
/// its own `cl_kernel` from it, since kernel arguments are per object.
pub struct ClKernel {
    pub program: Arc<Program>,
}

impl ClGpu {
    pub fn new(device: Device, info: DeviceInfo) -> Result<Self> {
        let context = Context::from_device(&device).map_err(|e| anyhow!("clCreateContext: {e}"))?;
        // No -cl-mad-enable or fast-math: kernels keep the CPU's rounding.
        // Division is correctly rounded where the device can do it.
        let mut build_options = String::new();
        if device.single_fp_config().is_ok_and(|c| c & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT != 0) {
            build_options.push_str("-cl-fp32-correctly-rounded-divide-sqrt");
        }
        // A CPU device (PoCL) spreads each kernel over every core already,
        // so its streams share one in-order queue and run one command at a
        // time. Queues of their own let PoCL 3.1 run two commands of one
        // kernel at once, and its cache of compiled kernels then loses count
        // of their references: an item is looked up by grid width too, but
        // released by the first entry of the kernel and work-group size,
        // which can be another's (`pocl_release_dlhandle_cache`), and the
        // process aborts on `found->ref_count > 0` (seen once in tests/motion.rs,
        // 2026-11-28). One command at a time, each release finds the entry
        // its lookup moved to the front.
        let cpu = device.dev_type().is_ok_and(|t| t & CL_DEVICE_TYPE_CPU != 0);
        let shared_queue = if cpu { Some(Arc::new(new_queue(&context, &device)?)) } else { None };
        Ok(ClGpu {
            info,
            device,
            context: Arc::new(context),
            shared_queue,
            build_options,
            programs: Mutex::new(HashMap::new()),
        })
    }

    fn program(&self, family: &'static str) -> Result<Arc<Program>> {
        let mut programs = self.programs.lock().map_err(|_| anyhow!("OpenCL program cache poisoned"))?;
        if let Some(p) = programs.get(family) {
            return Ok(p.clone());
        }
        let source = kernels::source(family)?;
        let program = Program::create_and_build_from_source(&self.context, &source, &self.build_options)
            .map_err(|log| anyhow!("OpenCL build of kernels/{family}.cl failed on {}:\n{log}", self.info.name))?;
        let program = Arc::new(program);
        programs.insert(family, program.clone());
        Ok(program)
    }
}

impl Gpu for ClGpu {
    fn device(&self) -> &DeviceInfo {
        &self.info
    }

    fn create_buffer(&self, bytes: usize) -> Result<Buffer> {
        // OpenCL has no empty buffers; a zero-byte buffer holds one word.
        // SAFETY: no host pointer is passed.
        let mem = unsafe { ClMem::<u8>::create(&self.context, CL_MEM_READ_WRITE, bytes.max(4), std::ptr::null_mut()) }
            .map_err(|e| anyhow!("clCreateBuffer of {bytes} bytes: {e}"))?;
        Ok(Buffer::new(ClBuffer(mem), bytes))
    }

    fn load_kernel(&self, spec: &'static KernelSpec) -> Result<Kernel> {
        let program = self.program(spec.family)?;
        crate::trace::mark(&format!("opencl: kernel {}", spec.name));
        // Fails here, not at the first dispatch, when the program lacks it.
        opencl3::kernel::Kernel::create(&program, spec.c_entry())
            .map_err(|e| anyhow!("kernels/{}.cl has no kernel {}: {e}", spec.family, spec.c_entry()))?;
        Ok(Kernel::new(ClKernel { program }, spec))
    }

    fn create_stream(&self) -> Result<Box<dyn Stream>> {
        let stream = new_stream(self.context.clone(), &self.device, self.shared_queue.clone())
            .context("creating an OpenCL queue")?;
        Ok(Box::new(stream))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CPU device's streams share one in-order queue (see `ClGpu::new`:
    /// PoCL aborts when two commands of one kernel run at once).
    #[test]
    fn the_streams_of_a_cpu_device_share_one_queue() {
        let devices = super::super::find_devices().unwrap_or_else(|e| {
            panic!("this test runs on PoCL (apt-get install pocl-opencl-icd ocl-icd-libopencl1): {e}")
        });
        let pocl = devices
            .iter()
            .find(|d| d.info.device_type.as_deref() == Some("cpu"))
            .expect("PoCL's CPU device (apt-get install pocl-opencl-icd)");
        let gpu = ClGpu::new(Device::new(pocl.id), pocl.info.clone()).expect("an OpenCL context on PoCL");
        assert!(gpu.shared_queue.is_some(), "a CPU device's streams must share one queue");
        // Two streams' work on the one queue, each waiting for its own.
        let buffer = gpu.create_buffer(8).expect("buffer");
        let (mut a, mut b) = (gpu.create_stream().expect("stream"), gpu.create_stream().expect("stream"));
        a.upload(&buffer, 0, &[1, 2, 3, 4]).expect("upload");
        b.upload(&buffer, 4, &[5, 6, 7, 8]).expect("upload");
        a.submit().expect("submit");
        b.download(&buffer, 0, 8).expect("download");
        assert_eq!(b.wait().expect("wait"), vec![vec![1, 2, 3, 4, 5, 6, 7, 8]]);
        assert!(a.wait().expect("wait").is_empty());
    }
}
