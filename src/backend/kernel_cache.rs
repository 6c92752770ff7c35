//! An on-disk cache of compiled kernels (CUDA CUBIN), so a run starts
//! without calling the compiler. Entries live in `$XDG_CACHE_HOME/ulpgate`
//! (else `~/.cache/ulpgate`), one file per key. The cache never fails a
//! run: an unwritable folder just means compiling every time, and an entry
//! that does not check out (another key, truncated, corrupt) is ignored and
//! rebuilt.

use super::kernels::fnv1a;
use std::io::Write;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 16] = b"ulpgate-kcache1\n";

#[derive(Debug, Clone)]
pub struct DiskCache {
    dir: Option<PathBuf>,
}

impl DiskCache {
    /// The per-user cache folder (not created until something is stored).
    pub fn user() -> Self {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| Path::new(&h).join(".cache")));
        DiskCache { dir: base.map(|b| b.join("ulpgate")) }
    }

    pub fn at(dir: impl Into<PathBuf>) -> Self {
        DiskCache { dir: Some(dir.into()) }
    }

    fn path(&self, name: &str, key: &str) -> Option<PathBuf> {
        let file = format!("{name}-{:016x}.bin", fnv1a(&[key.as_bytes()]));
        self.dir.as_ref().map(|d| d.join(file))
    }

    /// The payload stored under `key`, if a valid entry exists. `name` only
    /// makes the file names readable (`psnr-<hash>.bin`).
    pub fn load(&self, name: &str, key: &str) -> Option<Vec<u8>> {
        let bytes = std::fs::read(self.path(name, key)?).ok()?;
        decode(&bytes, key)
    }

    /// Stores a payload; failures are ignored (the next run compiles again).
    pub fn store(&self, name: &str, key: &str, payload: &[u8]) {
        let Some(path) = self.path(name, key) else { return };
        let Some(dir) = path.parent() else { return };
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(dir)?;
            let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
            tmp.write_all(&encode(key, payload))?;
            tmp.persist(&path).map_err(|e| e.error)?;
            Ok(())
        };
        let _ = write();
    }
}

/// magic, key length (u32 LE), key, payload length (u64 LE), payload
/// checksum (u64 LE), payload.
fn encode(key: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAGIC.len() + 4 + key.len() + 16 + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(key.len() as u32).to_le_bytes());
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv1a(&[payload]).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

fn decode(bytes: &[u8], key: &str) -> Option<Vec<u8>> {
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let (klen, rest) = rest.split_first_chunk::<4>()?;
    let (stored_key, rest) = rest.split_at_checked(u32::from_le_bytes(*klen) as usize)?;
    if stored_key != key.as_bytes() {
        return None;
    }
    let (plen, rest) = rest.split_first_chunk::<8>()?;
    let (sum, payload) = rest.split_first_chunk::<8>()?;
    if payload.len() as u64 != u64::from_le_bytes(*plen) || fnv1a(&[payload]) != u64::from_le_bytes(*sum) {
        return None;
    }
    Some(payload.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_other_keys() {
        let dir = tempfile::tempdir().unwrap();
        let cache = DiskCache::at(dir.path().join("sub"));
        assert_eq!(cache.load("psnr", "k1"), None);
        cache.store("psnr", "k1", b"cubin bytes");
        assert_eq!(cache.load("psnr", "k1").as_deref(), Some(&b"cubin bytes"[..]));
        assert_eq!(cache.load("psnr", "k2"), None);
    }

    #[test]
    fn corrupt_or_truncated_entries_are_ignored_then_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let cache = DiskCache::at(dir.path());
        cache.store("ansnr", "key", b"0123456789");
        let path = cache.path("ansnr", "key").unwrap();
        let good = std::fs::read(&path).unwrap();
        let mut flipped = good.clone();
        *flipped.last_mut().unwrap() ^= 1;
        for bad in [&flipped[..], &good[..good.len() - 3], b"garbage"] {
            std::fs::write(&path, bad).unwrap();
            assert_eq!(cache.load("ansnr", "key"), None);
        }
        cache.store("ansnr", "key", b"0123456789");
        assert_eq!(cache.load("ansnr", "key").as_deref(), Some(&b"0123456789"[..]));
    }

    #[test]
    fn an_unwritable_cache_is_silent() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-dir");
        std::fs::write(&file, b"x").unwrap();
        let cache = DiskCache::at(file.join("ulpgate"));
        cache.store("psnr", "k", b"payload");
        assert_eq!(cache.load("psnr", "k"), None);
    }
}
