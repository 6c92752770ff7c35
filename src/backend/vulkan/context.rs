//! A logical device on the selected physical device, with one compute
//! queue, as a [`Gpu`].

use super::info::PhysicalDevice;
use super::instance::Instance;
use super::memory::{Use, VkBuffer};
use super::pipeline::VkKernel;
use super::stream::VkStream;
use crate::backend::DeviceInfo;
use crate::backend::gpu::{Buffer, Gpu, Kernel, KernelSpec, Stream};
use anyhow::{Result, anyhow};
use ash::vk;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// What every buffer, kernel and stream of a context shares. Dropped last:
/// the device, then the instance, then the loader.
pub struct Shared {
    pub device: ash::Device,
    /// Submissions to a queue must be externally synchronised.
    pub queue: Mutex<vk::Queue>,
    pub queue_family: u32,
    pub memory: vk::PhysicalDeviceMemoryProperties,
    pub limits: vk::PhysicalDeviceLimits,
    /// The optional features enabled on the device (shaderInt64, shaderFloat64).
    pub features: vk::PhysicalDeviceFeatures,
    /// VK_KHR_push_descriptor, when the device has it (else descriptor pools).
    pub push_descriptor: Option<ash::khr::push_descriptor::Device>,
    pub pipeline_cache: vk::PipelineCache,
    /// The compute queue's valid timestamp bits (0: no timestamps).
    pub timestamp_bits: u32,
    // Declared last: dropped after Drop::drop destroyed the device.
    _instance: Instance,
}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: every buffer, kernel and stream holds an Arc of this, so
        // none is left; waiting for idle covers work still in flight.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_pipeline_cache(self.pipeline_cache, None);
            self.device.destroy_device(None);
        }
    }
}

/// How to open a device (tests use it to take the fallback paths).
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Bind buffers through VK_KHR_push_descriptor when the device has it.
    pub push_descriptor: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { push_descriptor: true }
    }
}

type KernelSlot = Arc<OnceLock<Result<Kernel, String>>>;

/// A Vulkan context: one device, one compute queue.
pub struct VulkanGpu {
    shared: Arc<Shared>,
    info: DeviceInfo,
    /// One pipeline per kernel name, built once even when several threads
    /// ask for it at the same time.
    kernels: Mutex<HashMap<&'static str, KernelSlot>>,
}

impl VulkanGpu {
    /// Creates a logical device with one compute queue on `physical`.
    pub fn new(instance: Instance, physical: &PhysicalDevice, options: Options) -> Result<VulkanGpu, String> {
        let vk_instance = &instance.instance;
        // SAFETY: `physical` was enumerated from this instance.
        let families = unsafe { vk_instance.get_physical_device_queue_family_properties(physical.handle) };
        let queue_family = families
            .iter()
            .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE) && f.queue_count > 0)
            .ok_or_else(|| format!("{} has no compute queue", physical.info.name))? as u32;
        let priorities = [1.0f32];
        let queues =
            [vk::DeviceQueueCreateInfo::default().queue_family_index(queue_family).queue_priorities(&priorities)];
        let use_push = options.push_descriptor && physical.has_extension(ash::khr::push_descriptor::NAME);
        let extensions: Vec<*const std::ffi::c_char> =
            if use_push { vec![ash::khr::push_descriptor::NAME.as_ptr()] } else { Vec::new() };
        // 64-bit integers and floats, where the device has them: the WGSL
        // kernels of the integer features use i64/u64 (shaders/README.md).
        // A kernel that needs one the device lacks is refused by name when
        // it loads (pipeline.rs), never run.
        // SAFETY: a plain query on a valid physical device.
        let available = unsafe { vk_instance.get_physical_device_features(physical.handle) };
        let features = vk::PhysicalDeviceFeatures::default()
            .shader_int64(available.shader_int64 == vk::TRUE)
            .shader_float64(available.shader_float64 == vk::TRUE);
        let create = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&extensions)
            .enabled_features(&features);
        // SAFETY: valid physical device and create info.
        let device = unsafe { vk_instance.create_device(physical.handle, &create, None) }
            .map_err(|e| format!("vkCreateDevice on {} failed with {e:?} ({e})", physical.info.name))?;
        // SAFETY: the queue family and index exist on this device.
        let queue = unsafe { device.get_device_queue(queue_family, 0) };
        // SAFETY: plain queries on a valid physical device.
        let (memory, props) = unsafe {
            (
                vk_instance.get_physical_device_memory_properties(physical.handle),
                vk_instance.get_physical_device_properties(physical.handle),
            )
        };
        // SAFETY: a valid device; an empty cache.
        let pipeline_cache =
            match unsafe { device.create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None) } {
                Ok(c) => c,
                Err(e) => {
                    // SAFETY: nothing was created on the device yet.
                    unsafe { device.destroy_device(None) };
                    return Err(format!("vkCreatePipelineCache: {e:?}"));
                }
            };
        let push_descriptor = use_push.then(|| ash::khr::push_descriptor::Device::new(vk_instance, &device));
        let shared = Shared {
            device,
            queue: Mutex::new(queue),
            queue_family,
            memory,
            limits: props.limits,
            features,
            push_descriptor,
            pipeline_cache,
            timestamp_bits: families[queue_family as usize].timestamp_valid_bits,
            _instance: instance,
        };
        Ok(VulkanGpu { shared: Arc::new(shared), info: physical.info.clone(), kernels: Mutex::new(HashMap::new()) })
    }

    /// Whether buffers are bound through VK_KHR_push_descriptor.
    pub fn uses_push_descriptors(&self) -> bool {
        self.shared.push_descriptor.is_some()
    }
}

impl Gpu for VulkanGpu {
    fn device(&self) -> &DeviceInfo {
        &self.info
    }

    fn create_buffer(&self, bytes: usize) -> Result<Buffer> {
        Ok(Buffer::new(VkBuffer::new(&self.shared, bytes, Use::Device)?, bytes))
    }

    fn load_kernel(&self, spec: &'static KernelSpec) -> Result<Kernel> {
        let slot = {
            let mut kernels = self.kernels.lock().map_err(|_| anyhow!("kernel cache poisoned"))?;
            kernels.entry(spec.name).or_default().clone()
        };
        let built = slot.get_or_init(|| {
            VkKernel::new(&self.shared, spec).map(|k| Kernel::new(k, spec)).map_err(|e| format!("{e:#}"))
        });
        match built {
            Ok(k) if std::ptr::eq(k.spec, spec) => Ok(k.clone()),
            Ok(_) => Err(anyhow!("two kernel specs are named {}", spec.name)),
            Err(e) => Err(anyhow!("{e}")),
        }
    }

    fn create_stream(&self) -> Result<Box<dyn Stream>> {
        Ok(Box::new(VkStream::new(&self.shared)?))
    }
}
