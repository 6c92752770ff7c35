//! A logical device on the selected physical device, with a compute queue
//! of each compute family (and, where the device has one, a transfer queue
//! for uploads), as a [`Gpu`].

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
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// What every buffer, kernel and stream of a context shares. Dropped last:
/// the device, then the instance, then the loader.
pub struct Shared {
    pub device: ash::Device,
    /// The compute queues, one of each family that computes; a new stream
    /// takes the one fewest live streams use ([`Shared::lane`]).
    pub lanes: Vec<Lane>,
    /// Where streams submit their uploads apart from their compute work;
    /// `None`: uploads are recorded in the compute command buffer.
    pub upload_queue: Option<UploadQueue>,
    /// Every queue family a buffer may be used on: buffers are `CONCURRENT`
    /// over them when there are several (no ownership transfers to record).
    pub families: Vec<u32>,
    pub memory: vk::PhysicalDeviceMemoryProperties,
    pub limits: vk::PhysicalDeviceLimits,
    /// The optional features enabled on the device (shaderInt64, shaderFloat64).
    pub features: vk::PhysicalDeviceFeatures,
    /// VK_KHR_push_descriptor, when the device has it (else descriptor pools).
    pub push_descriptor: Option<ash::khr::push_descriptor::Device>,
    pub pipeline_cache: vk::PipelineCache,
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

/// A compute queue. Work on one queue runs in order, and a barrier waits
/// for everything submitted before it on that queue, so streams sharing a
/// queue serialise at their barriers; streams on queues of two families
/// overlap. Two queues of one family did not: on an NVIDIA H200 every
/// feature lost 5-20% with upload and up to 7x resident, the driver taking
/// turns between them (README, "Vulkan queues").
pub struct Lane {
    /// Submissions to a queue must be externally synchronised.
    pub queue: Mutex<vk::Queue>,
    pub family: u32,
    /// The family's valid timestamp bits (0: no timestamps).
    pub timestamp_bits: u32,
    /// Streams on this queue now.
    streams: AtomicUsize,
}

/// A queue that takes a stream's uploads, in a submission of their own
/// that the compute submission waits for (a semaphore).
pub struct UploadQueue {
    /// A queue of a transfer-only family (NVIDIA's copy engines: the
    /// uploads of one frame run beside the kernels of another, which on the
    /// compute queue the barriers between streams' work would serialise);
    /// `None`: the stream's compute queue itself ([`Uploads::Split`]).
    pub own: Option<(u32, Mutex<vk::Queue>)>,
}

impl Shared {
    /// A new stream's lane, an index into [`Shared::lanes`]: the one with
    /// the fewest live streams (the first of those), so the short-lived
    /// streams pipelines upload their tables with do not skew the frames'
    /// streams onto one queue (in turn, ciede's three slots of an extractor
    /// had all landed on one). Give it back with [`Shared::leave_lane`].
    pub fn lane(&self) -> usize {
        let lane = (0..self.lanes.len()).min_by_key(|&i| self.lanes[i].streams.load(Ordering::Relaxed)).unwrap_or(0);
        self.lanes[lane].streams.fetch_add(1, Ordering::Relaxed);
        lane
    }

    /// A stream on `lane` is gone.
    pub fn leave_lane(&self, lane: usize) {
        self.lanes[lane].streams.fetch_sub(1, Ordering::Relaxed);
    }

    /// Live streams per lane.
    pub fn lane_loads(&self) -> Vec<usize> {
        self.lanes.iter().map(|lane| lane.streams.load(Ordering::Relaxed)).collect()
    }

    /// The family and queue that take the uploads of a stream on `lane`
    /// apart from its kernels, if uploads go apart.
    pub fn upload_target(&self, lane: usize) -> Option<(u32, &Mutex<vk::Queue>)> {
        let upload = self.upload_queue.as_ref()?;
        Some(match &upload.own {
            Some((family, queue)) => (*family, queue),
            None => (self.lanes[lane].family, &self.lanes[lane].queue),
        })
    }
}

/// Where streams put their uploads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uploads {
    /// On a transfer-only queue family when the device has one, else as
    /// [`Uploads::Inline`].
    Auto,
    /// In the compute command buffer, before the kernels that read them.
    Inline,
    /// A submission of their own on the compute queue, waited for by a
    /// semaphore: the transfer queue's path on a device without one
    /// (tests; lavapipe has one queue).
    Split,
}

impl Uploads {
    /// The environment variable that overrides [`Uploads::Auto`]: `auto`,
    /// `inline` or `split` (a diagnostic switch; the results are the same).
    pub const VAR: &'static str = "ULPGATE_VK_UPLOADS";

    /// `choice` ([`Self::VAR`]'s value) parsed; unset or empty: `Auto`.
    pub fn from_env(choice: Option<&std::ffi::OsStr>) -> Result<Uploads, String> {
        let uploads = match choice.map(|c| c.to_string_lossy()) {
            None => return Ok(Uploads::Auto),
            Some(c) => match c.as_ref() {
                "" => return Ok(Uploads::Auto),
                "auto" => Uploads::Auto,
                "inline" => Uploads::Inline,
                "split" => Uploads::Split,
                other => return Err(format!("{}={other}: expected auto, inline or split", Self::VAR)),
            },
        };
        crate::trace::mark(&format!("{}={}: {uploads:?}", Self::VAR, choice.unwrap_or_default().to_string_lossy()));
        Ok(uploads)
    }
}

/// How to open a device (tests use it to take the fallback paths).
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Bind buffers through VK_KHR_push_descriptor when the device has it.
    pub push_descriptor: bool,
    pub uploads: Uploads,
    /// At most this many compute queues ([`Lane`]s), one a family.
    pub lanes: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options { push_descriptor: true, uploads: Uploads::Auto, lanes: usize::MAX }
    }
}

/// The environment variable that caps the compute queues: a positive
/// number (a diagnostic switch; `1` puts every stream on one queue).
pub const LANES_VAR: &str = "ULPGATE_VK_QUEUES";

/// `choice` ([`LANES_VAR`]'s value) parsed; unset or empty: no cap.
pub fn lanes_from_env(choice: Option<&std::ffi::OsStr>) -> Result<usize, String> {
    let Some(text) = choice.map(|c| c.to_string_lossy()).filter(|c| !c.is_empty()) else { return Ok(usize::MAX) };
    match text.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("{LANES_VAR}={text}: expected a number of queues, 1 or more")),
    }
}

impl Options {
    /// The defaults, with [`Uploads::VAR`] and [`LANES_VAR`] applied.
    pub fn from_env() -> Result<Options, String> {
        Ok(Options {
            uploads: Uploads::from_env(std::env::var_os(Uploads::VAR).as_deref())?,
            lanes: lanes_from_env(std::env::var_os(LANES_VAR).as_deref())?,
            ..Options::default()
        })
    }
}

/// Which queue families a context opens a queue of.
#[derive(Debug, PartialEq, Eq)]
pub struct QueuePlan {
    /// The compute lanes' families: every family that computes, in the
    /// device's order, at most `options.lanes`.
    pub compute: Vec<u32>,
    /// The family streams submit their uploads to apart from their kernels:
    /// a transfer-only one (copy engines) under [`Uploads::Auto`], the first
    /// compute family under [`Uploads::Split`], none under
    /// [`Uploads::Inline`] or where `Auto` finds none.
    pub upload: Option<u32>,
    /// Every family above once: the device's queue create infos, and the
    /// families a buffer is shared by.
    pub used: Vec<u32>,
}

impl QueuePlan {
    /// The plan for a device with queue families `families`; `None` when
    /// none computes.
    pub fn new(families: &[vk::QueueFamilyProperties], options: Options) -> Option<QueuePlan> {
        let compute: Vec<u32> = (0..families.len() as u32)
            .filter(|&f| {
                let family = &families[f as usize];
                family.queue_flags.contains(vk::QueueFlags::COMPUTE) && family.queue_count > 0
            })
            .take(options.lanes.max(1))
            .collect();
        let first = *compute.first()?;
        // A transfer-only family: its queues are the device's copy engines.
        let transfer = (0..families.len() as u32).find(|&f| {
            let family = &families[f as usize];
            family.queue_count > 0
                && family.queue_flags.contains(vk::QueueFlags::TRANSFER)
                && !family.queue_flags.intersects(vk::QueueFlags::COMPUTE | vk::QueueFlags::GRAPHICS)
        });
        let upload = match options.uploads {
            Uploads::Auto => transfer,
            Uploads::Inline => None,
            Uploads::Split => Some(first),
        };
        let mut used = compute.clone();
        used.extend(upload.filter(|f| !compute.contains(f)));
        Some(QueuePlan { compute, upload, used })
    }
}

type KernelSlot = Arc<OnceLock<Result<Kernel, String>>>;

/// A Vulkan context: one device, its compute queues (and maybe a transfer
/// queue).
pub struct VulkanGpu {
    shared: Arc<Shared>,
    info: DeviceInfo,
    /// One pipeline per kernel name, built once even when several threads
    /// ask for it at the same time.
    kernels: Mutex<HashMap<&'static str, KernelSlot>>,
}

impl VulkanGpu {
    /// Creates a logical device on `physical` with the first queue of each
    /// compute family (the first such family first; at most
    /// `options.lanes`), and an upload queue as `options.uploads` says.
    pub fn new(instance: Instance, physical: &PhysicalDevice, options: Options) -> Result<VulkanGpu, String> {
        let vk_instance = &instance.instance;
        // SAFETY: `physical` was enumerated from this instance.
        let families = unsafe { vk_instance.get_physical_device_queue_family_properties(physical.handle) };
        let Some(plan) = QueuePlan::new(&families, options) else {
            return Err(format!("{} has no compute queue", physical.info.name));
        };
        let QueuePlan { compute: compute_families, upload: upload_family, used } = plan;
        let priorities = [1.0f32];
        let queues: Vec<_> = used
            .iter()
            .map(|&f| vk::DeviceQueueCreateInfo::default().queue_family_index(f).queue_priorities(&priorities))
            .collect();
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
        let lanes = compute_families
            .iter()
            .map(|&family| Lane {
                // SAFETY: the device was created with queue 0 of this family.
                queue: Mutex::new(unsafe { device.get_device_queue(family, 0) }),
                family,
                timestamp_bits: families[family as usize].timestamp_valid_bits,
                streams: AtomicUsize::new(0),
            })
            .collect();
        let upload_queue = upload_family.map(|family| UploadQueue {
            // SAFETY: as above (created with the device when not a compute
            // family).
            own: (!compute_families.contains(&family))
                .then(|| (family, Mutex::new(unsafe { device.get_device_queue(family, 0) }))),
        });
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
            lanes,
            upload_queue,
            families: used,
            memory,
            limits: props.limits,
            features,
            push_descriptor,
            pipeline_cache,
            _instance: instance,
        };
        Ok(VulkanGpu { shared: Arc::new(shared), info: physical.info.clone(), kernels: Mutex::new(HashMap::new()) })
    }

    /// Whether buffers are bound through VK_KHR_push_descriptor.
    pub fn uses_push_descriptors(&self) -> bool {
        self.shared.push_descriptor.is_some()
    }

    /// How many live streams each compute queue has.
    pub fn lane_loads(&self) -> Vec<usize> {
        self.shared.lane_loads()
    }

    /// The queue families of the compute queues streams take.
    pub fn compute_families(&self) -> Vec<u32> {
        self.shared.lanes.iter().map(|lane| lane.family).collect()
    }

    /// The queue family the first stream submits its uploads to apart
    /// from its kernels, if any.
    pub fn upload_family(&self) -> Option<u32> {
        self.shared.upload_target(0).map(|(family, _)| family)
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
