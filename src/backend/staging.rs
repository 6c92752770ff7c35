//! Host staging memory for a stream: a bump arena over large chunks of
//! pinned (page-locked) memory. Uploads are filled straight into it and
//! copied to the device asynchronously; downloads land in it. Regions stay
//! valid until [`Staging::reset`], which a stream calls once its work has
//! finished, so steady-state frames allocate nothing.

use anyhow::{Result, ensure};

/// One chunk of host memory the device can copy from and to directly.
pub trait HostChunk: Send {
    /// Start of the chunk; valid for [`HostChunk::len`] bytes for the
    /// chunk's whole life, and never moved.
    fn ptr(&self) -> *mut u8;
    fn len(&self) -> usize;
}

/// A part of a chunk handed out by [`Staging::alloc`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    chunk: usize,
    offset: usize,
    pub len: usize,
}

/// Smallest chunk allocated. Larger uploads get a chunk of their own size,
/// once per stream; small fixtures stay cheap to start (pinned memory is
/// slow to allocate: a stream should not pin megabytes it never uses).
pub const MIN_CHUNK: usize = 1 << 20;
const ALIGN: usize = 256;

pub struct Staging<C: HostChunk> {
    chunks: Vec<C>,
    /// The chunk being filled and the first free byte in it.
    current: usize,
    used: usize,
}

impl<C: HostChunk> Default for Staging<C> {
    fn default() -> Self {
        Staging { chunks: Vec::new(), current: 0, used: 0 }
    }
}

impl<C: HostChunk> Staging<C> {
    /// A region of `len` bytes, from the chunks already held when one has
    /// room, else from a new chunk made by `new_chunk(size)`.
    pub fn alloc(&mut self, len: usize, new_chunk: impl FnOnce(usize) -> Result<C>) -> Result<Region> {
        // Empty regions still take a byte, so every region has an address.
        let need = len.max(1);
        let start = self.used.next_multiple_of(ALIGN);
        if self.chunks.get(self.current).is_some_and(|c| start + need <= c.len()) {
            self.used = start + need;
            return Ok(Region { chunk: self.current, offset: start, len });
        }
        // A later chunk (from an earlier, larger round) that fits?
        if let Some(i) = (self.current + 1..self.chunks.len()).find(|&i| need <= self.chunks[i].len()) {
            (self.current, self.used) = (i, need);
            return Ok(Region { chunk: i, offset: 0, len });
        }
        let size = need.next_multiple_of(ALIGN).max(MIN_CHUNK);
        let chunk = new_chunk(size)?;
        ensure!(chunk.len() >= need, "staging chunk of {} bytes is smaller than the {len} asked for", chunk.len());
        // SAFETY: the chunk is valid for len() bytes; zeroed once so the
        // slices handed to fill closures are initialized memory.
        unsafe { std::ptr::write_bytes(chunk.ptr(), 0, chunk.len()) };
        self.chunks.push(chunk);
        (self.current, self.used) = (self.chunks.len() - 1, need);
        Ok(Region { chunk: self.current, offset: 0, len })
    }

    /// The region's host address.
    pub fn ptr(&self, r: Region) -> *mut u8 {
        // SAFETY: alloc only hands out regions inside their chunk.
        unsafe { self.chunks[r.chunk].ptr().add(r.offset) }
    }

    pub fn slice_mut(&mut self, r: Region) -> &mut [u8] {
        // SAFETY: in bounds (alloc), initialized (zeroed at creation), and
        // borrowed mutably through &mut self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr(r), r.len) }
    }

    pub fn slice(&self, r: Region) -> &[u8] {
        // SAFETY: as slice_mut.
        unsafe { std::slice::from_raw_parts(self.ptr(r), r.len) }
    }

    /// Makes every region free again. Call only when no copy that uses
    /// one is still in flight.
    pub fn reset(&mut self) {
        (self.current, self.used) = (0, 0);
    }

    /// Gives up every chunk (a stream releasing its staging).
    pub fn take_chunks(&mut self) -> Vec<C> {
        self.reset();
        std::mem::take(&mut self.chunks)
    }

    /// Bytes held in chunks.
    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        self.chunks.iter().map(HostChunk::len).sum()
    }
}

/// Ordinary host memory as a chunk, for tests of what stages through it.
#[cfg(test)]
pub(crate) struct VecChunk(pub Vec<u8>);

#[cfg(test)]
impl HostChunk for VecChunk {
    fn ptr(&self) -> *mut u8 {
        self.0.as_ptr() as *mut u8
    }
    fn len(&self) -> usize {
        self.0.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn new(size: usize) -> Result<VecChunk> {
        Ok(VecChunk(vec![0xaa; size]))
    }

    #[test]
    fn regions_do_not_overlap_and_are_reused_after_reset() {
        let mut s = Staging::default();
        let a = s.alloc(100, new).unwrap();
        let b = s.alloc(100, new).unwrap();
        assert_eq!(s.capacity(), MIN_CHUNK);
        assert!(s.ptr(b) as usize >= s.ptr(a) as usize + 100);
        assert_eq!((s.ptr(b) as usize - s.ptr(a) as usize) % ALIGN, 0);
        s.slice_mut(a).fill(1);
        assert!(s.slice(b).iter().all(|&v| v == 0), "fresh chunks are zeroed");
        s.reset();
        assert_eq!(s.alloc(100, new).unwrap(), a);
        assert_eq!(s.capacity(), MIN_CHUNK);
    }

    #[test]
    fn large_requests_get_their_own_chunk_and_steady_state_allocates_nothing() {
        let mut s = Staging::default();
        for _ in 0..3 {
            s.alloc(MIN_CHUNK - 10, new).unwrap();
            s.alloc(MIN_CHUNK + 1, new).unwrap();
            s.alloc(10, new).unwrap();
            s.reset();
        }
        assert_eq!(s.capacity(), 3 * MIN_CHUNK + ALIGN);
    }

    #[test]
    fn a_short_chunk_is_an_error() {
        let mut s: Staging<VecChunk> = Staging::default();
        assert!(s.alloc(MIN_CHUNK * 2, |_| Ok(VecChunk(vec![0; 4]))).is_err());
    }
}
