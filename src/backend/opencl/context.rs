//! An OpenCL context on one device: buffers, programs built on first use
//! (one per kernel family), streams.

use super::stream::new_stream;
use crate::backend::DeviceInfo;
use crate::backend::gpu::{Buffer, Gpu, Kernel, KernelSpec, Stream};
use crate::backend::kernels;
use anyhow::{Context as _, Result, anyhow};
use opencl3::context::Context;
use opencl3::device::{CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT, Device};
use opencl3::memory::{Buffer as ClMem, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub struct ClGpu {
    info: DeviceInfo,
    device: Device,
    context: Arc<Context>,
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
        Ok(ClGpu { info, device, context: Arc::new(context), build_options, programs: Mutex::new(HashMap::new()) })
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
        // Fails here, not at the first dispatch, when the program lacks it.
        opencl3::kernel::Kernel::create(&program, spec.c_entry())
            .map_err(|e| anyhow!("kernels/{}.cl has no kernel {}: {e}", spec.family, spec.c_entry()))?;
        Ok(Kernel::new(ClKernel { program }, spec))
    }

    fn create_stream(&self) -> Result<Box<dyn Stream>> {
        let stream = new_stream(self.context.clone(), &self.device).context("creating an OpenCL queue")?;
        Ok(Box::new(stream))
    }
}
