//! Writes outputs atomically: every file is complete or absent, never half
//! written. All outputs are staged in temporary files beside their targets
//! first, and renamed into place only once every one of them was written.

use anyhow::{Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

pub struct Staged {
    files: Vec<(NamedTempFile, PathBuf)>,
}

impl Staged {
    pub fn new() -> Self {
        Staged { files: Vec::new() }
    }

    /// Writes `contents` to a temporary file in `path`'s folder.
    pub fn add(&mut self, path: &Path, contents: &[u8]) -> Result<()> {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let mut tmp = NamedTempFile::new_in(dir)
            .with_context(|| format!("cannot write {}: cannot create a file in {}", path.display(), dir.display()))?;
        tmp.write_all(contents)
            .and_then(|_| tmp.flush())
            .with_context(|| format!("cannot write {}", path.display()))?;
        self.files.push((tmp, path.to_path_buf()));
        Ok(())
    }

    /// Renames every staged file into place.
    pub fn commit(self) -> Result<()> {
        for (tmp, path) in self.files {
            tmp.persist(&path).with_context(|| format!("cannot write {}", path.display()))?;
        }
        Ok(())
    }
}

impl Default for Staged {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_lands_when_one_output_cannot_be_written() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("a.json");
        let mut staged = Staged::new();
        staged.add(&good, b"{}").unwrap();
        assert!(staged.add(&dir.path().join("missing/b.md"), b"x").is_err());
        drop(staged);
        assert!(!good.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no temporary file left behind");
    }
}
