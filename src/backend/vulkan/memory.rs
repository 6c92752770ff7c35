//! Buffers and their memory: device buffers for the kernels, and mapped
//! host staging buffers that uploads are written into and downloads read
//! back from. One allocation per buffer: a pipeline needs a few dozen.

use super::context::Shared;
use anyhow::{Context, Result, anyhow};
use ash::vk;
use std::ptr::NonNull;
use std::sync::Arc;

/// What a buffer is for; decides its memory type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// Kernel arguments: device-local where the device has such memory.
    Device,
    /// Host writes, device copies from it.
    Upload,
    /// Device copies into it, host reads (cached where possible).
    Download,
}

impl Use {
    fn flags(self) -> (vk::MemoryPropertyFlags, vk::MemoryPropertyFlags, vk::BufferUsageFlags) {
        use vk::MemoryPropertyFlags as M;
        match self {
            Use::Device => (
                M::empty(),
                M::DEVICE_LOCAL,
                vk::BufferUsageFlags::STORAGE_BUFFER
                    | vk::BufferUsageFlags::UNIFORM_BUFFER
                    | vk::BufferUsageFlags::TRANSFER_SRC
                    | vk::BufferUsageFlags::TRANSFER_DST,
            ),
            Use::Upload => (M::HOST_VISIBLE | M::HOST_COHERENT, M::empty(), vk::BufferUsageFlags::TRANSFER_SRC),
            Use::Download => (M::HOST_VISIBLE | M::HOST_COHERENT, M::HOST_CACHED, vk::BufferUsageFlags::TRANSFER_DST),
        }
    }
}

/// The first memory type allowed by `type_bits` that has `required` and
/// `preferred`, else the first that has `required`.
pub fn pick_memory_type(
    props: &vk::PhysicalDeviceMemoryProperties,
    type_bits: u32,
    required: vk::MemoryPropertyFlags,
    preferred: vk::MemoryPropertyFlags,
) -> Option<u32> {
    let types = &props.memory_types[..props.memory_type_count as usize];
    let fits = |want: vk::MemoryPropertyFlags| {
        (0..types.len() as u32).find(|&i| type_bits & (1 << i) != 0 && types[i as usize].property_flags.contains(want))
    };
    fits(required | preferred).or_else(|| fits(required))
}

/// A buffer with its own memory; host-visible ones stay mapped.
pub struct VkBuffer {
    shared: Arc<Shared>,
    pub buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    pub size: usize,
    mapped: Option<NonNull<u8>>,
}

// SAFETY: the Vulkan handles may be used from any thread; the mapped
// pointer is only written through `&mut` access by the stream that owns a
// staging buffer.
unsafe impl Send for VkBuffer {}
// SAFETY: shared references never touch the mapped memory.
unsafe impl Sync for VkBuffer {}

impl VkBuffer {
    /// A buffer of at least `size` bytes, rounded up to whole 16-byte
    /// vectors: a shader may read a buffer as `vec4`s up to the one that
    /// holds its last value (psnr_hvs's tables, `seqsum_serial`'s terms;
    /// the test `buffers_are_whole_vec4s`).
    pub fn new(shared: &Arc<Shared>, size: usize, usage: Use) -> Result<VkBuffer> {
        let size = size.max(16).div_ceil(16) * 16;
        let (required, preferred, usage_flags) = usage.flags();
        let device = &shared.device;
        // Buffers the queues of several families use are shared with all of
        // them (no ownership transfers to record).
        let families = &shared.families;
        let info = vk::BufferCreateInfo::default().size(size as u64).usage(usage_flags);
        let info = if families.len() == 1 {
            info.sharing_mode(vk::SharingMode::EXCLUSIVE)
        } else {
            info.sharing_mode(vk::SharingMode::CONCURRENT).queue_family_indices(families)
        };
        // SAFETY: a valid device and create info.
        let buffer = unsafe { device.create_buffer(&info, None) }
            .map_err(|e| anyhow!("vkCreateBuffer ({size} bytes): {e:?}"))?;
        let mut out = VkBuffer { shared: shared.clone(), buffer, memory: vk::DeviceMemory::null(), size, mapped: None };
        // SAFETY: `buffer` was just created on this device.
        let needs = unsafe { device.get_buffer_memory_requirements(buffer) };
        let type_index =
            pick_memory_type(&shared.memory, needs.memory_type_bits, required, preferred).ok_or_else(|| {
                anyhow!("no Vulkan memory type has the flags {:#x} a {usage:?} buffer needs", required.as_raw())
            })?;
        let alloc = vk::MemoryAllocateInfo::default().allocation_size(needs.size).memory_type_index(type_index);
        // SAFETY: as above; `out` frees the memory on drop, also on error.
        out.memory = unsafe { device.allocate_memory(&alloc, None) }
            .map_err(|e| anyhow!("vkAllocateMemory ({} bytes, {usage:?}): {e:?}", needs.size))?;
        // SAFETY: unbound buffer, fresh memory of the required size.
        unsafe { device.bind_buffer_memory(buffer, out.memory, 0) }.context("vkBindBufferMemory")?;
        if usage != Use::Device {
            // SAFETY: host-visible memory, mapped once for the buffer's life.
            let ptr = unsafe { device.map_memory(out.memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) }
                .context("vkMapMemory")?;
            out.mapped = NonNull::new(ptr.cast());
        }
        Ok(out)
    }

    pub fn belongs_to(&self, shared: &Arc<Shared>) -> bool {
        Arc::ptr_eq(&self.shared, shared)
    }

    /// The mapped bytes `[offset, offset + len)` of a staging buffer.
    ///
    /// # Panics
    /// On a device buffer or a range outside the buffer (internal misuse).
    pub fn host_mut(&mut self, offset: usize, len: usize) -> &mut [u8] {
        let base = self.mapped.expect("a mapped staging buffer");
        assert!(offset + len <= self.size, "staging range within the buffer");
        // SAFETY: the mapping covers `size` bytes and `&mut self` is exclusive.
        unsafe { std::slice::from_raw_parts_mut(base.as_ptr().add(offset), len) }
    }

    pub fn host(&self, offset: usize, len: usize) -> &[u8] {
        let base = self.mapped.expect("a mapped staging buffer");
        assert!(offset + len <= self.size, "staging range within the buffer");
        // SAFETY: as above; the device wrote it before the fence we waited on.
        unsafe { std::slice::from_raw_parts(base.as_ptr().add(offset), len) }
    }
}

impl Drop for VkBuffer {
    fn drop(&mut self) {
        // SAFETY: streams keep every buffer they recorded alive until their
        // work completed, so the device no longer uses this one. Freeing the
        // memory unmaps it.
        unsafe {
            self.shared.device.destroy_buffer(self.buffer, None);
            if self.memory != vk::DeviceMemory::null() {
                self.shared.device.free_memory(self.memory, None);
            }
        }
    }
}

/// Where a staging allocation lives.
#[derive(Debug, Clone, Copy)]
pub struct Slice {
    pub chunk: usize,
    pub offset: usize,
    pub len: usize,
}

/// A bump allocator over mapped staging buffers, reset after each batch.
/// It grows by whole buffers while recording and, on reset, merges them
/// into one so a steady frame loop allocates nothing.
pub struct Arena {
    usage: Use,
    chunks: Vec<VkBuffer>,
    used: usize,
}

const MIN_CHUNK: usize = 256 << 10;

impl Arena {
    pub fn new(usage: Use) -> Arena {
        Arena { usage, chunks: Vec::new(), used: 0 }
    }

    pub fn alloc(&mut self, shared: &Arc<Shared>, len: usize) -> Result<Slice> {
        let offset = self.used.div_ceil(16) * 16;
        match self.chunks.last() {
            Some(last) if offset + len <= last.size => {}
            last => {
                let size = len.max(last.map_or(0, |l| 2 * l.size)).max(MIN_CHUNK).div_ceil(4096) * 4096;
                self.chunks.push(VkBuffer::new(shared, size, self.usage)?);
                self.used = len;
                return Ok(Slice { chunk: self.chunks.len() - 1, offset: 0, len });
            }
        }
        self.used = offset + len;
        Ok(Slice { chunk: self.chunks.len() - 1, offset, len })
    }

    pub fn buffer(&self, s: Slice) -> vk::Buffer {
        self.chunks[s.chunk].buffer
    }

    pub fn bytes_mut(&mut self, s: Slice) -> &mut [u8] {
        self.chunks[s.chunk].host_mut(s.offset, s.len)
    }

    pub fn bytes(&self, s: Slice) -> &[u8] {
        self.chunks[s.chunk].host(s.offset, s.len)
    }

    /// Forgets every allocation; the device must be done with them.
    pub fn reset(&mut self, shared: &Arc<Shared>) -> Result<()> {
        if self.chunks.len() > 1 {
            let total: usize = self.chunks.iter().map(|c| c.size).sum();
            self.chunks.clear();
            self.chunks.push(VkBuffer::new(shared, total, self.usage)?);
        }
        self.used = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vk::MemoryPropertyFlags as M;

    fn props(types: &[M]) -> vk::PhysicalDeviceMemoryProperties {
        let mut p = vk::PhysicalDeviceMemoryProperties { memory_type_count: types.len() as u32, ..Default::default() };
        for (i, &f) in types.iter().enumerate() {
            p.memory_types[i] = vk::MemoryType { property_flags: f, heap_index: 0 };
        }
        p
    }

    #[test]
    fn discrete_gpus_get_device_local_and_host_staging() {
        let p = props(&[
            M::DEVICE_LOCAL,
            M::HOST_VISIBLE | M::HOST_COHERENT,
            M::HOST_VISIBLE | M::HOST_COHERENT | M::HOST_CACHED,
        ]);
        let (req, pref, _) = Use::Device.flags();
        assert_eq!(pick_memory_type(&p, 0b111, req, pref), Some(0));
        let (req, pref, _) = Use::Upload.flags();
        assert_eq!(pick_memory_type(&p, 0b111, req, pref), Some(1));
        let (req, pref, _) = Use::Download.flags();
        assert_eq!(pick_memory_type(&p, 0b111, req, pref), Some(2));
        // The buffer's allowed types are respected.
        assert_eq!(pick_memory_type(&p, 0b001, req, pref), None);
    }

    #[test]
    fn unified_memory_serves_every_use() {
        // lavapipe: one type, device-local and host-visible.
        let p = props(&[M::DEVICE_LOCAL | M::HOST_VISIBLE | M::HOST_COHERENT | M::HOST_CACHED]);
        for usage in [Use::Device, Use::Upload, Use::Download] {
            let (req, pref, _) = usage.flags();
            assert_eq!(pick_memory_type(&p, 1, req, pref), Some(0));
        }
    }
}
