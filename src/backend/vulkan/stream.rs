//! A [`Stream`]: one command buffer and one fence. Operations are recorded
//! in order; a barrier goes in front of any operation that touches a buffer
//! an earlier, unbarriered operation wrote (or writes one it read). Uploads
//! are written into mapped staging memory at record time and copied at
//! submit; downloads are copied into staging memory and read after the
//! fence. Where the context has an upload queue, the uploads a batch
//! records before its first other operation go into a command buffer of
//! their own, submitted there first; the compute submission waits for it
//! on a semaphore (so on a GPU with copy engines one frame's upload runs
//! beside another's kernels). Each stream takes the least used of the
//! context's compute queues, so where the device has two compute families,
//! one stream's barriers do not wait for the kernels of a stream on the
//! other.

use super::context::Shared;
use super::memory::{Arena, Slice, Use, VkBuffer};
use super::pipeline::VkKernel;
use crate::backend::gpu::{Arg, Buffer, Kernel, Stream, check_args};
use anyhow::{Context, Result, anyhow, bail};
use ash::vk;
use std::sync::Arc;

/// How long a batch may run before the stream gives up on the device (the
/// limit of CUDA's and OpenCL's waits too: `backend::watchdog`).
const FENCE_TIMEOUT_NS: u64 = crate::backend::watchdog::DEVICE_WAIT_LIMIT.as_nanos() as u64;

/// Dispatches a batch times under `ULPGATE_KERNEL_TIMES` (two timestamps
/// each); later ones in the same batch go untimed.
const TIMED_DISPATCHES: u32 = 256;

/// Timestamps around dispatches and copies ([`crate::kernel_times`]).
struct KernelTimer {
    pool: vk::QueryPool,
    /// The kernels timed in the batch being recorded or in flight, in order.
    kernels: Vec<&'static str>,
}

/// Buffers touched since the last barrier.
#[derive(Default)]
pub struct Hazards {
    read: Vec<vk::Buffer>,
    written: Vec<vk::Buffer>,
}

impl Hazards {
    /// Whether an operation reading `reads` and writing `writes` must wait
    /// for the operations recorded since the last barrier.
    pub fn conflicts(&self, reads: &[vk::Buffer], writes: &[vk::Buffer]) -> bool {
        reads.iter().any(|b| self.written.contains(b))
            || writes.iter().any(|b| self.written.contains(b) || self.read.contains(b))
    }

    pub fn note(&mut self, reads: &[vk::Buffer], writes: &[vk::Buffer]) {
        self.read.extend_from_slice(reads);
        self.written.extend_from_slice(writes);
    }

    pub fn clear(&mut self) {
        self.read.clear();
        self.written.clear();
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nothing recorded.
    Idle,
    /// The command buffer is open.
    Recording,
    /// Submitted, the fence not yet waited on.
    Submitted,
}

pub struct VkStream {
    shared: Arc<Shared>,
    /// This stream's compute queue, an index into `shared.lanes`. A buffer
    /// one stream wrote is read by another only after the host waited for
    /// the writer's fence (a pipeline's tables).
    lane: usize,
    pool: vk::CommandPool,
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
    state: State,
    uploads: Arena,
    staging_out: Arena,
    /// Downloads of the batch being recorded or in flight, in order.
    downloads: Vec<Slice>,
    /// Downloads of batches that completed before [`Stream::wait`] (work
    /// recorded after a submit waits for the batch before it).
    completed: Vec<Vec<u8>>,
    /// Buffers and kernels the batch uses, alive until it completes.
    keep_buffers: Vec<Buffer>,
    keep_kernels: Vec<Kernel>,
    hazards: Hazards,
    bound: vk::Pipeline,
    /// Descriptor pools, when the device has no push descriptors.
    descriptor_pools: Vec<vk::DescriptorPool>,
    timer: Option<KernelTimer>,
    /// The uploads recorded apart, where the context has an upload queue.
    upload: Option<UploadCommands>,
    /// Whether the batch recorded anything in `cmd` but its leading
    /// barrier: later uploads go there, in order with the kernels.
    compute_started: bool,
}

/// A stream's command buffer for its upload queue.
struct UploadCommands {
    pool: vk::CommandPool,
    cmd: vk::CommandBuffer,
    /// Signalled by the upload submission, waited on by the compute one.
    done: vk::Semaphore,
    recording: bool,
    hazards: Hazards,
}

impl VkStream {
    pub fn new(shared: &Arc<Shared>) -> Result<VkStream> {
        let device = &shared.device;
        let lane = shared.lane();
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(shared.lanes[lane].family)
            .flags(vk::CommandPoolCreateFlags::TRANSIENT);
        // SAFETY: valid device and create info. The stream owns the pool.
        let pool = match unsafe { device.create_command_pool(&pool_info, None) } {
            Ok(pool) => pool,
            Err(e) => {
                shared.leave_lane(lane);
                return Err(anyhow!("vkCreateCommandPool: {e:?}"));
            }
        };
        // From here Drop gives the lane back.
        let mut stream = VkStream {
            lane,
            shared: shared.clone(),
            pool,
            cmd: vk::CommandBuffer::null(),
            fence: vk::Fence::null(),
            state: State::Idle,
            uploads: Arena::new(Use::Upload),
            staging_out: Arena::new(Use::Download),
            downloads: Vec::new(),
            completed: Vec::new(),
            keep_buffers: Vec::new(),
            keep_kernels: Vec::new(),
            hazards: Hazards::default(),
            bound: vk::Pipeline::null(),
            descriptor_pools: Vec::new(),
            timer: None,
            upload: None,
            compute_started: false,
        };
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: as above; Drop frees what was created.
        stream.cmd = unsafe { device.allocate_command_buffers(&alloc) }.context("vkAllocateCommandBuffers")?[0];
        // SAFETY: as above.
        stream.fence =
            unsafe { device.create_fence(&vk::FenceCreateInfo::default(), None) }.context("vkCreateFence")?;
        if let Some((family, _)) = shared.upload_target(lane) {
            let info = vk::CommandPoolCreateInfo::default()
                .queue_family_index(family)
                .flags(vk::CommandPoolCreateFlags::TRANSIENT);
            // SAFETY: as above; Drop destroys what is created here.
            let pool = unsafe { device.create_command_pool(&info, None) }.context("vkCreateCommandPool")?;
            let upload = stream.upload.insert(UploadCommands {
                pool,
                cmd: vk::CommandBuffer::null(),
                done: vk::Semaphore::null(),
                recording: false,
                hazards: Hazards::default(),
            });
            let alloc = vk::CommandBufferAllocateInfo::default()
                .command_pool(pool)
                .level(vk::CommandBufferLevel::PRIMARY)
                .command_buffer_count(1);
            // SAFETY: as above; the buffer is freed with its pool.
            upload.cmd = unsafe { device.allocate_command_buffers(&alloc) }.context("vkAllocateCommandBuffers")?[0];
            // SAFETY: as above.
            upload.done = unsafe { device.create_semaphore(&vk::SemaphoreCreateInfo::default(), None) }
                .context("vkCreateSemaphore")?;
        }
        if crate::kernel_times::enabled() && shared.lanes[lane].timestamp_bits > 0 {
            let info = vk::QueryPoolCreateInfo::default()
                .query_type(vk::QueryType::TIMESTAMP)
                .query_count(2 * TIMED_DISPATCHES);
            // SAFETY: as above.
            let pool = unsafe { device.create_query_pool(&info, None) }.context("vkCreateQueryPool")?;
            stream.timer = Some(KernelTimer { pool, kernels: Vec::new() });
        }
        Ok(stream)
    }

    fn device(&self) -> &ash::Device {
        &self.shared.device
    }

    /// Opens the command buffer for a new operation (waiting first for a
    /// batch still in flight), and puts a barrier in front of it when it
    /// depends on earlier operations.
    fn begin_op(&mut self, reads: &[vk::Buffer], writes: &[vk::Buffer]) -> Result<()> {
        if self.state != State::Recording {
            self.open_batch()?;
        } else if self.hazards.conflicts(reads, writes) {
            self.barrier(
                vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
                vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE,
            );
        }
        self.hazards.note(reads, writes);
        self.compute_started = true;
        Ok(())
    }

    /// Begins the compute command buffer of a new batch (waiting first for
    /// a batch still in flight), with its leading barrier; nothing when it
    /// is recording already.
    fn open_batch(&mut self) -> Result<()> {
        if self.state == State::Submitted {
            self.finish_batch()?;
        }
        if self.state == State::Recording {
            return Ok(());
        }
        let begin = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: the pool was reset, the buffer is in the initial state.
        unsafe { self.device().begin_command_buffer(self.cmd, &begin) }.context("vkBeginCommandBuffer")?;
        self.state = State::Recording;
        if let Some(timer) = &self.timer {
            // SAFETY: recording, outside any render pass.
            unsafe { self.device().cmd_reset_query_pool(self.cmd, timer.pool, 0, 2 * TIMED_DISPATCHES) };
        }
        // Earlier batches on this queue wrote what this one reads.
        self.barrier(vk::PipelineStageFlags::ALL_COMMANDS, vk::AccessFlags::MEMORY_WRITE);
        Ok(())
    }

    /// Records a copy into the upload command buffer (beginning the batch
    /// and that buffer first), behind a transfer barrier where it writes
    /// what an earlier one of the batch did.
    fn record_upload_apart(&mut self, source: vk::Buffer, target: vk::Buffer, region: &[vk::BufferCopy]) -> Result<()> {
        self.open_batch()?;
        let device = &self.shared.device;
        let Some(up) = self.upload.as_mut() else { bail!("this stream has no upload queue") };
        if !up.recording {
            let begin = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            // SAFETY: its pool was reset with the last batch, so the buffer
            // is in the initial state.
            unsafe { device.begin_command_buffer(up.cmd, &begin) }.context("vkBeginCommandBuffer")?;
            up.recording = true;
        } else if up.hazards.conflicts(&[], &[target]) {
            let transfer = (vk::PipelineStageFlags::TRANSFER, vk::AccessFlags::TRANSFER_WRITE);
            memory_barrier(device, up.cmd, transfer, transfer);
            up.hazards.clear();
        }
        up.hazards.note(&[], &[target]);
        // SAFETY: recording; both ranges lie within their buffers.
        unsafe { device.cmd_copy_buffer(up.cmd, source, target, region) };
        Ok(())
    }

    /// A global memory barrier: `src` work and writes before, any compute
    /// or transfer access after.
    fn barrier(&mut self, src_stage: vk::PipelineStageFlags, src_access: vk::AccessFlags) {
        let dst_access = vk::AccessFlags::SHADER_READ
            | vk::AccessFlags::SHADER_WRITE
            | vk::AccessFlags::TRANSFER_READ
            | vk::AccessFlags::TRANSFER_WRITE;
        let dst_stage = vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER;
        memory_barrier(self.device(), self.cmd, (src_stage, src_access), (dst_stage, dst_access));
        self.hazards.clear();
    }

    /// Records `op` between two timestamps when kernel timing is on (the
    /// first [`TIMED_DISPATCHES`] timed operations of a batch), under `name`
    /// in [`crate::kernel_times`]: a dispatch under its kernel's name, a
    /// copy as `(upload)` or `(download)`.
    fn timed(&mut self, name: &'static str, op: impl FnOnce(&mut Self)) {
        let timed = self.timer.as_mut().and_then(|t| {
            let n = t.kernels.len() as u32;
            (n < TIMED_DISPATCHES).then(|| {
                t.kernels.push(name);
                (t.pool, 2 * n)
            })
        });
        let stamp = |stream: &Self, query: u32| {
            if let Some((pool, first)) = timed {
                // SAFETY: recording; the query was reset at the batch's start.
                unsafe {
                    stream.device().cmd_write_timestamp(
                        stream.cmd,
                        vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                        pool,
                        first + query,
                    )
                };
            }
        };
        stamp(self, 0);
        op(self);
        stamp(self, 1);
    }

    fn own_buffer<'b>(&self, buffer: &'b Buffer) -> Result<&'b VkBuffer> {
        let raw = buffer.raw::<VkBuffer>().ok_or_else(|| anyhow!("a buffer of another backend passed to vulkan"))?;
        if !raw.belongs_to(&self.shared) {
            bail!("a buffer of another Vulkan context passed to this stream");
        }
        Ok(raw)
    }

    fn check_range(buffer: &Buffer, offset: usize, len: usize) -> Result<()> {
        if offset.checked_add(len).is_none_or(|end| end > buffer.bytes()) {
            bail!("range {offset}..{} is outside a buffer of {} bytes", offset.saturating_add(len), buffer.bytes());
        }
        Ok(())
    }

    /// Binds the kernel's buffers: pushed, or through a set from a pool.
    fn bind_buffers(&mut self, kernel: &VkKernel, buffers: &[(vk::Buffer, u64)]) -> Result<()> {
        let max_uniform = u64::from(self.shared.limits.max_uniform_buffer_range);
        // A table bound as a uniform block must fit the device's range
        // whole: a clamped range would leave the kernel reading zeros.
        for (&(_, size), &ty) in buffers.iter().zip(&kernel.descriptor_types) {
            if ty == vk::DescriptorType::UNIFORM_BUFFER && size > max_uniform {
                bail!(
                    "a kernel reads a {size}-byte table as a uniform block; this device's uniform blocks hold at \
                     most {max_uniform} bytes"
                );
            }
        }
        let infos: Vec<[vk::DescriptorBufferInfo; 1]> = buffers
            .iter()
            .zip(&kernel.descriptor_types)
            .map(|(&(b, size), &ty)| {
                let range =
                    if ty == vk::DescriptorType::UNIFORM_BUFFER { size.min(max_uniform) } else { vk::WHOLE_SIZE };
                [vk::DescriptorBufferInfo::default().buffer(b).offset(0).range(range)]
            })
            .collect();
        let mut writes: Vec<vk::WriteDescriptorSet> = infos
            .iter()
            .zip(&kernel.descriptor_types)
            .enumerate()
            .map(|(i, (info, &ty))| {
                vk::WriteDescriptorSet::default().dst_binding(i as u32).descriptor_type(ty).buffer_info(info)
            })
            .collect();
        if let Some(push) = &self.shared.push_descriptor {
            // SAFETY: recording; the layout was made with the push flag.
            unsafe {
                push.cmd_push_descriptor_set(self.cmd, vk::PipelineBindPoint::COMPUTE, kernel.layout, 0, &writes)
            };
            return Ok(());
        }
        let set = self.allocate_set(kernel.set_layout)?;
        for w in &mut writes {
            w.dst_set = set;
        }
        // SAFETY: a fresh set no submitted work uses; then bound for this dispatch.
        unsafe {
            self.device().update_descriptor_sets(&writes, &[]);
            self.device().cmd_bind_descriptor_sets(
                self.cmd,
                vk::PipelineBindPoint::COMPUTE,
                kernel.layout,
                0,
                &[set],
                &[],
            );
        }
        Ok(())
    }

    fn allocate_set(&mut self, layout: vk::DescriptorSetLayout) -> Result<vk::DescriptorSet> {
        let layouts = [layout];
        if let Some(&pool) = self.descriptor_pools.last() {
            let info = vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool).set_layouts(&layouts);
            // SAFETY: the pool belongs to this stream.
            match unsafe { self.device().allocate_descriptor_sets(&info) } {
                Ok(sets) => return Ok(sets[0]),
                Err(vk::Result::ERROR_OUT_OF_POOL_MEMORY | vk::Result::ERROR_FRAGMENTED_POOL) => {}
                Err(e) => bail!("vkAllocateDescriptorSets: {e:?}"),
            }
        }
        let sizes = [
            vk::DescriptorPoolSize::default().ty(vk::DescriptorType::STORAGE_BUFFER).descriptor_count(512),
            vk::DescriptorPoolSize::default().ty(vk::DescriptorType::UNIFORM_BUFFER).descriptor_count(128),
        ];
        let info = vk::DescriptorPoolCreateInfo::default().max_sets(64).pool_sizes(&sizes);
        // SAFETY: valid device; the stream destroys its pools.
        let pool = unsafe { self.device().create_descriptor_pool(&info, None) }.context("vkCreateDescriptorPool")?;
        self.descriptor_pools.push(pool);
        let info = vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool).set_layouts(&layouts);
        // SAFETY: as above.
        Ok(unsafe { self.device().allocate_descriptor_sets(&info) }.context("vkAllocateDescriptorSets")?[0])
    }

    /// Waits for the batch in flight, keeps its downloads, and makes the
    /// stream ready to record again.
    fn finish_batch(&mut self) -> Result<()> {
        let device = &self.shared.device;
        // SAFETY: the fence belongs to this stream and was submitted.
        match unsafe { device.wait_for_fences(&[self.fence], true, FENCE_TIMEOUT_NS) } {
            Ok(()) => {}
            Err(vk::Result::TIMEOUT) => {
                bail!("the Vulkan device did not finish a batch within {} s", FENCE_TIMEOUT_NS / 1_000_000_000)
            }
            Err(e) => bail!("waiting for the Vulkan device: {e:?} ({e})"),
        }
        for s in std::mem::take(&mut self.downloads) {
            self.completed.push(self.staging_out.bytes(s).to_vec());
        }
        self.record_kernel_times()?;
        self.reset()
    }

    /// Adds the finished batch's timed dispatches to [`crate::kernel_times`].
    fn record_kernel_times(&mut self) -> Result<()> {
        let Some(timer) = &mut self.timer else { return Ok(()) };
        let kernels = std::mem::take(&mut timer.kernels);
        if kernels.is_empty() {
            return Ok(());
        }
        let mut stamps = vec![0u64; 2 * kernels.len()];
        // SAFETY: the batch that wrote these queries has completed.
        unsafe {
            self.shared.device.get_query_pool_results(
                timer.pool,
                0,
                &mut stamps,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )
        }
        .context("vkGetQueryPoolResults")?;
        let bits = self.shared.lanes[self.lane].timestamp_bits;
        let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let period = f64::from(self.shared.limits.timestamp_period);
        for (kernel, pair) in kernels.into_iter().zip(stamps.chunks_exact(2)) {
            let ticks = pair[1].wrapping_sub(pair[0]) & mask;
            crate::kernel_times::record("vulkan", kernel, ticks as f64 * period);
        }
        Ok(())
    }

    /// Forgets the batch: the device must be done with it.
    fn reset(&mut self) -> Result<()> {
        // SAFETY: no work of this stream is in flight.
        unsafe {
            self.shared.device.reset_fences(&[self.fence]).context("vkResetFences")?;
            self.shared
                .device
                .reset_command_pool(self.pool, vk::CommandPoolResetFlags::empty())
                .context("vkResetCommandPool")?;
            for &pool in &self.descriptor_pools {
                self.shared
                    .device
                    .reset_descriptor_pool(pool, vk::DescriptorPoolResetFlags::empty())
                    .context("vkResetDescriptorPool")?;
            }
        }
        if let Some(up) = &mut self.upload {
            // SAFETY: the batch completed (its fence follows the uploads).
            unsafe { self.shared.device.reset_command_pool(up.pool, vk::CommandPoolResetFlags::empty()) }
                .context("vkResetCommandPool")?;
            up.recording = false;
            up.hazards.clear();
        }
        self.compute_started = false;
        self.uploads.reset(&self.shared)?;
        self.staging_out.reset(&self.shared)?;
        self.keep_buffers.clear();
        self.keep_kernels.clear();
        self.hazards.clear();
        self.bound = vk::Pipeline::null();
        if let Some(timer) = &mut self.timer {
            timer.kernels.clear();
        }
        self.state = State::Idle;
        Ok(())
    }
}

/// Records a global memory barrier in `cmd` (which must be recording):
/// the `src` stage's work and accesses before, the `dst` stage's after.
fn memory_barrier(
    device: &ash::Device,
    cmd: vk::CommandBuffer,
    src: (vk::PipelineStageFlags, vk::AccessFlags),
    dst: (vk::PipelineStageFlags, vk::AccessFlags),
) {
    let memory = [vk::MemoryBarrier::default().src_access_mask(src.1).dst_access_mask(dst.1)];
    // SAFETY: the callers record into a command buffer they began.
    unsafe { device.cmd_pipeline_barrier(cmd, src.0, dst.0, vk::DependencyFlags::empty(), &memory, &[], &[]) };
}

impl Stream for VkStream {
    fn upload_with(
        &mut self,
        dst: &Buffer,
        offset: usize,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]) -> Result<()>,
    ) -> Result<()> {
        Self::check_range(dst, offset, len)?;
        let target = self.own_buffer(dst)?.buffer;
        if len == 0 {
            return Ok(());
        }
        if self.state == State::Submitted {
            self.finish_batch()?;
        }
        let slice = self.uploads.alloc(&self.shared, len)?;
        fill(self.uploads.bytes_mut(slice))?;
        let source = self.uploads.buffer(slice);
        let region = [vk::BufferCopy { src_offset: slice.offset as u64, dst_offset: offset as u64, size: len as u64 }];
        if self.upload.is_some() && !self.compute_started {
            self.record_upload_apart(source, target, &region)?;
            self.keep_buffers.push(dst.clone());
            return Ok(());
        }
        self.begin_op(&[], &[target])?;
        self.timed("(upload)", |stream| {
            // SAFETY: recording; both ranges lie within their buffers.
            unsafe { stream.device().cmd_copy_buffer(stream.cmd, source, target, &region) }
        });
        self.keep_buffers.push(dst.clone());
        Ok(())
    }

    fn zero(&mut self, dst: &Buffer) -> Result<()> {
        let target = self.own_buffer(dst)?.buffer;
        self.begin_op(&[], &[target])?;
        // SAFETY: recording; the whole buffer (a whole number of words).
        unsafe { self.device().cmd_fill_buffer(self.cmd, target, 0, vk::WHOLE_SIZE, 0) };
        self.keep_buffers.push(dst.clone());
        Ok(())
    }

    fn dispatch(&mut self, kernel: &Kernel, groups: [u32; 3], args: &[Arg<'_>]) -> Result<()> {
        check_args(kernel.spec, args)?;
        let name = kernel.spec.name;
        let vk_kernel = kernel.raw::<VkKernel>().ok_or_else(|| anyhow!("kernel {name}: loaded by another backend"))?;
        if !Arc::ptr_eq(&vk_kernel.shared, &self.shared) {
            bail!("kernel {name}: loaded on another Vulkan context");
        }
        let max = self.shared.limits.max_compute_work_group_count;
        if groups.iter().zip(max).any(|(&g, m)| g > m) {
            bail!("kernel {name}: {groups:?} work groups exceed the device's {max:?}");
        }
        let mut bound = Vec::with_capacity(kernel.spec.buffers);
        let mut scalars = Vec::with_capacity(4 * kernel.spec.scalars);
        for arg in args {
            match arg {
                Arg::Buffer(b) => {
                    let raw = self.own_buffer(b)?;
                    bound.push((raw.buffer, raw.size as u64));
                }
                other => scalars.extend_from_slice(&other.scalar_bytes().expect("a scalar argument")),
            }
        }
        if scalars.len() != vk_kernel.push_bytes as usize {
            bail!(
                "kernel {name}: {} bytes of scalars for a {}-byte push-constant block",
                scalars.len(),
                vk_kernel.push_bytes
            );
        }
        // A kernel may read and write each of its buffers.
        let buffers: Vec<vk::Buffer> = bound.iter().map(|b| b.0).collect();
        self.begin_op(&buffers, &buffers)?;
        if self.bound != vk_kernel.pipeline {
            // SAFETY: recording; a compute pipeline of this device.
            unsafe { self.device().cmd_bind_pipeline(self.cmd, vk::PipelineBindPoint::COMPUTE, vk_kernel.pipeline) };
            self.bound = vk_kernel.pipeline;
        }
        self.bind_buffers(vk_kernel, &bound)?;
        if !scalars.is_empty() {
            // SAFETY: recording; the layout's range is exactly these bytes.
            unsafe {
                self.device().cmd_push_constants(self.cmd, vk_kernel.layout, vk::ShaderStageFlags::COMPUTE, 0, &scalars)
            };
        }
        self.timed(name, |stream| {
            // SAFETY: recording, the pipeline and its descriptors bound.
            unsafe { stream.device().cmd_dispatch(stream.cmd, groups[0], groups[1], groups[2]) }
        });
        self.keep_kernels.push(kernel.clone());
        for arg in args {
            if let Arg::Buffer(b) = arg {
                self.keep_buffers.push((*b).clone());
            }
        }
        Ok(())
    }

    fn download(&mut self, src: &Buffer, offset: usize, len: usize) -> Result<()> {
        Self::check_range(src, offset, len)?;
        let source = self.own_buffer(src)?.buffer;
        if self.state == State::Submitted {
            self.finish_batch()?;
        }
        let slice = self.staging_out.alloc(&self.shared, len.max(1))?;
        let slice = Slice { len, ..slice };
        self.begin_op(&[source], &[])?;
        if len > 0 {
            let target = self.staging_out.buffer(slice);
            let region =
                [vk::BufferCopy { src_offset: offset as u64, dst_offset: slice.offset as u64, size: len as u64 }];
            self.timed("(download)", |stream| {
                // SAFETY: recording; both ranges lie within their buffers.
                unsafe { stream.device().cmd_copy_buffer(stream.cmd, source, target, &region) }
            });
        }
        self.downloads.push(slice);
        self.keep_buffers.push(src.clone());
        Ok(())
    }

    fn submit(&mut self) -> Result<()> {
        if self.state != State::Recording {
            return Ok(());
        }
        if !self.downloads.is_empty() {
            memory_barrier(
                self.device(),
                self.cmd,
                (vk::PipelineStageFlags::TRANSFER, vk::AccessFlags::TRANSFER_WRITE),
                (vk::PipelineStageFlags::HOST, vk::AccessFlags::HOST_READ),
            );
        }
        // SAFETY: recording.
        unsafe { self.device().end_command_buffer(self.cmd) }.context("vkEndCommandBuffer")?;
        // The uploads first, on their queue; the compute work waits for them.
        let mut waits = Vec::new();
        if let Some(up) = self.upload.as_mut().filter(|up| up.recording) {
            // SAFETY: recording.
            unsafe { self.shared.device.end_command_buffer(up.cmd) }.context("vkEndCommandBuffer")?;
            up.recording = false;
            let (cmds, signal) = ([up.cmd], [up.done]);
            let submit = [vk::SubmitInfo::default().command_buffers(&cmds).signal_semaphores(&signal)];
            let Some((_, queue)) = self.shared.upload_target(self.lane) else {
                bail!("this stream has no upload queue")
            };
            let queue = queue.lock().map_err(|_| anyhow!("a Vulkan queue lock is poisoned"))?;
            // SAFETY: an executable command buffer; the queue is held
            // exclusively; the semaphore is unsignalled (the last batch's
            // compute submission waited on it).
            unsafe { self.shared.device.queue_submit(*queue, &submit, vk::Fence::null()) }
                .map_err(|e| anyhow!("vkQueueSubmit (uploads): {e:?} ({e})"))?;
            waits.push(up.done);
        }
        let stages = [vk::PipelineStageFlags::TRANSFER | vk::PipelineStageFlags::COMPUTE_SHADER];
        let cmds = [self.cmd];
        let submit = [vk::SubmitInfo::default()
            .command_buffers(&cmds)
            .wait_semaphores(&waits)
            .wait_dst_stage_mask(&stages[..waits.len()])];
        let queue =
            self.shared.lanes[self.lane].queue.lock().map_err(|_| anyhow!("a Vulkan queue lock is poisoned"))?;
        // SAFETY: an executable command buffer; the queue is held exclusively.
        unsafe { self.shared.device.queue_submit(*queue, &submit, self.fence) }
            .map_err(|e| anyhow!("vkQueueSubmit: {e:?} ({e})"))?;
        drop(queue);
        self.state = State::Submitted;
        Ok(())
    }

    fn wait(&mut self) -> Result<Vec<Vec<u8>>> {
        self.submit()?;
        if self.state == State::Submitted {
            self.finish_batch()?;
        }
        Ok(std::mem::take(&mut self.completed))
    }
}

impl Drop for VkStream {
    fn drop(&mut self) {
        self.shared.leave_lane(self.lane);
        let device = &self.shared.device;
        // SAFETY: work in flight is waited for before anything it uses goes.
        unsafe {
            if self.state == State::Submitted {
                let _ = device.wait_for_fences(&[self.fence], true, FENCE_TIMEOUT_NS);
            }
            for &pool in &self.descriptor_pools {
                device.destroy_descriptor_pool(pool, None);
            }
            if let Some(timer) = &self.timer {
                device.destroy_query_pool(timer.pool, None);
            }
            device.destroy_fence(self.fence, None);
            device.destroy_command_pool(self.pool, None);
            if let Some(up) = &self.upload {
                device.destroy_semaphore(up.done, None);
                device.destroy_command_pool(up.pool, None);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ash::vk::Handle;

    #[test]
    fn barriers_only_where_an_operation_depends_on_another() {
        let (a, b, c) = (vk::Buffer::from_raw(1), vk::Buffer::from_raw(2), vk::Buffer::from_raw(3));
        let mut h = Hazards::default();
        // Two uploads to different buffers: independent.
        h.note(&[], &[a]);
        assert!(!h.conflicts(&[], &[b]));
        h.note(&[], &[b]);
        // A kernel reading what they wrote: barrier.
        assert!(h.conflicts(&[a, b, c], &[c]));
        h.clear();
        h.note(&[a, b, c], &[a, b, c]);
        // A download of what the kernel wrote: barrier.
        assert!(h.conflicts(&[c], &[]));
        h.clear();
        // Read after read: none; write after read: barrier.
        h.note(&[a], &[]);
        assert!(!h.conflicts(&[a], &[]));
        assert!(h.conflicts(&[], &[a]));
    }
}
