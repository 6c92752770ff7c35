//! Writes outputs atomically: every file is complete or absent, never half
//! written. All outputs are staged in temporary files beside their targets
//! first, and renamed into place only once every one of them was written.

use anyhow::{Context, Result, anyhow, bail};
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
        let mut tmp = temporary_beside(path)?;
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

/// A temporary file in `path`'s folder, or the error that says why there
/// can be none.
fn temporary_beside(path: &Path) -> Result<NamedTempFile> {
    if path.is_dir() {
        bail!("cannot write {}: it is a folder", path.display());
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        bail!("cannot write {}: there is no folder {}", path.display(), dir.display());
    }
    // The kind alone: tempfile's message names its random file name.
    NamedTempFile::new_in(dir).map_err(|e| {
        anyhow!(
            "cannot write {}: cannot create a file in {}: {}",
            path.display(),
            dir.display(),
            std::io::Error::from(e.kind())
        )
    })
}

/// Fails now, with the error [`Staged::add`] would give at the end, where
/// an output could not be written (its folder missing or read-only, or the
/// path a folder): for commands that work a long time before they write.
/// Leaves nothing behind.
pub fn check_writable<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Result<()> {
    for path in paths {
        drop(temporary_beside(path)?);
    }
    Ok(())
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

    #[test]
    fn outputs_that_cannot_be_written_are_found_before_the_work() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("a.json");
        check_writable([good.as_path()]).unwrap();
        let missing = dir.path().join("missing/b.md");
        let err = check_writable([good.as_path(), missing.as_path()]).unwrap_err();
        assert!(format!("{err:#}").contains("cannot write") && format!("{err:#}").contains("missing"), "{err:#}");
        let err = check_writable([dir.path()]).unwrap_err();
        assert!(format!("{err:#}").contains("it is a folder"), "{err:#}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing left behind");
    }
}
