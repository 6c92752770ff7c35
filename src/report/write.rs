//! Writes outputs atomically: every file is complete or absent, never half
//! written. All outputs are staged in temporary files beside their targets
//! first, and renamed into place only once every one of them was written.
//!
//! A symbolic link is followed: the file it points to is replaced, the link
//! stays. A target that is not a regular file (a device such as
//! `/dev/null`, a FIFO, `/dev/stdout` on a pipe or terminal) cannot be
//! replaced by a rename without destroying it: it is written in place,
//! after every staged file has landed. A new file gets the mode the umask
//! allows (0666 less the umask, as a shell redirect would); a replaced one
//! keeps its mode.

use anyhow::{Context, Result, anyhow, bail};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

/// One output written to a temporary file, waiting for [`Staged::commit`].
struct StagedFile {
    tmp: NamedTempFile,
    /// The file it replaces (a link followed).
    file: PathBuf,
    /// That file's [`identity`], which two spellings of one path share.
    identity: PathBuf,
    /// The path as given, for messages.
    given: PathBuf,
}

pub struct Staged {
    files: Vec<StagedFile>,
    /// Targets written in place at [`Staged::commit`]: (path as given, contents).
    in_place: Vec<(PathBuf, Vec<u8>)>,
}

impl Staged {
    pub fn new() -> Self {
        Staged { files: Vec::new(), in_place: Vec::new() }
    }

    /// Writes `contents` to a temporary file in the folder of the file
    /// `path` names (or keeps them for a target written in place). A second
    /// output that names a file already staged (`r` and `./r`) is an error:
    /// one would silently overwrite the other.
    pub fn add(&mut self, path: &Path, contents: &[u8]) -> Result<()> {
        match destination(path)? {
            Destination::InPlace => self.in_place.push((path.to_path_buf(), contents.to_vec())),
            Destination::Replace { file, existing } => {
                let mut tmp = temporary_beside(path, &file)?;
                let same = identity(&file);
                if let Some(first) = self.files.iter().find(|f| f.identity == same) {
                    bail!("cannot write {} and {}: they are the same file", first.given.display(), path.display());
                }
                if let Some(permissions) = existing {
                    // The temporary file's own mode is 0600: the replaced file keeps its mode.
                    tmp.as_file()
                        .set_permissions(permissions)
                        .with_context(|| format!("cannot write {}", path.display()))?;
                }
                tmp.write_all(contents)
                    .and_then(|_| tmp.flush())
                    .with_context(|| format!("cannot write {}", path.display()))?;
                self.files.push(StagedFile { tmp, file, identity: same, given: path.to_path_buf() });
            }
        }
        Ok(())
    }

    /// Renames every staged file into place, then writes the targets that
    /// are written in place.
    pub fn commit(self) -> Result<()> {
        for StagedFile { tmp, file, .. } in self.files {
            tmp.persist(&file).with_context(|| format!("cannot write {}", file.display()))?;
        }
        for (path, contents) in self.in_place {
            File::options()
                .write(true)
                .open(&path)
                .and_then(|mut f| f.write_all(&contents).and_then(|_| f.flush()))
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        Ok(())
    }
}

/// Where an output goes.
#[derive(Debug, PartialEq)]
enum Destination {
    /// Staged beside `file` (the path given, or where its links lead) and
    /// renamed over it; `existing`: the mode of the file it replaces.
    Replace { file: PathBuf, existing: Option<std::fs::Permissions> },
    /// Not a regular file: opened and written as it is.
    InPlace,
}

/// How links longer than this are refused (as the kernel's ELOOP).
const MAX_LINKS: usize = 40;

fn destination(path: &Path) -> Result<Destination> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => bail!("cannot write {}: it is a folder", path.display()),
        Ok(m) if m.is_file() => {
            let file = if path.is_symlink() {
                std::fs::canonicalize(path).with_context(|| format!("cannot write {}", path.display()))?
            } else {
                path.to_path_buf()
            };
            Ok(Destination::Replace { file, existing: Some(m.permissions()) })
        }
        Ok(_) => Ok(Destination::InPlace),
        // Absent, or a link to a file not there yet: create where it leads.
        Err(_) => {
            let mut file = path.to_path_buf();
            for _ in 0..MAX_LINKS {
                match std::fs::read_link(&file) {
                    Ok(target) => file = file.parent().unwrap_or(Path::new("")).join(target),
                    Err(_) => return Ok(Destination::Replace { file, existing: None }),
                }
            }
            bail!("cannot write {}: too many levels of symbolic links", path.display())
        }
    }
}

/// A temporary file in `file`'s folder (`path`: the output as the user
/// named it, for messages), or the error that says why there can be none.
fn temporary_beside(path: &Path, file: &Path) -> Result<NamedTempFile> {
    let dir = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        bail!("cannot write {}: there is no folder {}", path.display(), dir.display());
    }
    // 0666 less the umask for a new file, as `open(2)` gives one.
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    // The kind alone: tempfile's message names its random file name.
    builder.tempfile_in(dir).map_err(|e| {
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
/// Leaves nothing behind. A target written in place (a device, a FIFO) is
/// not opened here: a FIFO's open waits for its reader.
/// Two outputs that name one file (`--json-out r --md-out ./r`) are an
/// error too: one would silently overwrite the other.
pub fn check_writable<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Result<()> {
    // Staged empty and dropped: the same checks as the real outputs get.
    let mut trial = Staged::new();
    for path in paths {
        trial.add(path, b"")?;
    }
    Ok(())
}

/// Where `file` is, whatever the spelling: its folder resolved (the folder
/// exists: [`temporary_beside`] checked it), then its name.
fn identity(file: &Path) -> PathBuf {
    let dir = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match (std::fs::canonicalize(dir), file.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => file.to_path_buf(),
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
        // The same file under another spelling (merge, calibrate fit and
        // render stage their outputs without check_writable).
        let err = staged.add(&dir.path().join(".").join("a.json"), b"x").unwrap_err();
        assert!(format!("{err:#}").contains("they are the same file"), "{err:#}");
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
        let spelt_twice = dir.path().join(".").join("a.json");
        let err = check_writable([good.as_path(), spelt_twice.as_path()]).unwrap_err();
        assert!(format!("{err:#}").contains("they are the same file"), "{err:#}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing left behind");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_followed_and_kept_and_modes_are_a_shell_redirects() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        // A new file: the mode File::create gives (0666 less the umask).
        let witness = dir.path().join("witness");
        File::create(&witness).unwrap();
        let fresh = dir.path().join("fresh.json");
        let mut staged = Staged::new();
        staged.add(&fresh, b"new").unwrap();
        staged.commit().unwrap();
        assert_eq!(mode(&fresh), mode(&witness));
        // A replaced file keeps its mode; a link to it stays a link.
        let target = dir.path().join("target.json");
        std::fs::write(&target, "old").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("target.json", &link).unwrap();
        check_writable([link.as_path()]).unwrap();
        let mut staged = Staged::new();
        staged.add(&link, b"through the link").unwrap();
        staged.commit().unwrap();
        assert!(link.is_symlink(), "the link was replaced");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "through the link");
        assert_eq!(mode(&target), 0o640);
        // A link to a file not there yet creates the file it names.
        let dangling = dir.path().join("dangling.json");
        std::os::unix::fs::symlink("created.json", &dangling).unwrap();
        let mut staged = Staged::new();
        staged.add(&dangling, b"made").unwrap();
        staged.commit().unwrap();
        assert!(dangling.is_symlink());
        assert_eq!(std::fs::read_to_string(dir.path().join("created.json")).unwrap(), "made");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_written_in_place_not_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        check_writable([fifo.as_path()]).unwrap();
        let mut staged = Staged::new();
        staged.add(&fifo, b"streamed").unwrap();
        staged.commit().unwrap();
        // Checked before the join: a replaced FIFO is never opened for
        // writing, and its reader would wait for ever.
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
        assert_eq!(reader.join().unwrap(), b"streamed");
    }
}
