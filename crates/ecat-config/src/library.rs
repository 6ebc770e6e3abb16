//! The device library: ESI files from a set of directories, looked up by identity or type.
//!
//! Directories come from `ECAT_ESI_PATH` (colon-separated) and/or explicit paths. Listing
//! the `*.xml` files is cheap; parsing is not (a Beckhoff file is 2–4 MB), so files are
//! parsed on demand and kept (`Arc<EsiFile>`), and a lookup first parses only the files whose
//! raw text mentions what it looks for (the product code's hex digits, or `>TYPE<`), falling
//! back to the rest only when those do not have it. Once parsed, a file is never parsed
//! again; the library is `Sync` so threads can share it. A file that cannot be read does not
//! hide the others (it is skipped with a warning), and a device left out of its file for a
//! broken description is reported with its reason when asked for.

use crate::error::{Error, Result};
use crate::esi::{Device, EsiFile};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Name of the environment variable listing ESI directories.
pub const ESI_PATH_ENV: &str = "ECAT_ESI_PATH";

/// A device found in the library: the parsed file and the device's position in it.
#[derive(Debug, Clone)]
pub struct DeviceRef {
    /// The file holding the device.
    pub file: Arc<EsiFile>,
    /// Index into `file.devices`.
    pub index: usize,
}

impl std::ops::Deref for DeviceRef {
    type Target = Device;
    fn deref(&self) -> &Device {
        &self.file.devices[self.index]
    }
}

/// ESI files from a set of directories, parsed lazily and cached.
#[derive(Debug, Default)]
pub struct DeviceLibrary {
    dirs: Vec<PathBuf>,
    files: Vec<PathBuf>,
    cache: Mutex<HashMap<PathBuf, Arc<EsiFile>>>,
}

impl DeviceLibrary {
    /// A library over `dirs` (each listed once, `*.xml` files in name order; a directory
    /// that does not exist simply contributes no files).
    pub fn new<I, P>(dirs: I) -> DeviceLibrary
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        let mut lib = DeviceLibrary::default();
        for d in dirs {
            lib.add_dir(d.into());
        }
        lib
    }

    /// A library over the directories in `ECAT_ESI_PATH` followed by `extra`.
    pub fn from_env_and<I, P>(extra: I) -> DeviceLibrary
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        let mut dirs: Vec<PathBuf> = std::env::var_os(ESI_PATH_ENV)
            .map(|v| std::env::split_paths(&v).collect())
            .unwrap_or_default();
        dirs.retain(|d| !d.as_os_str().is_empty());
        dirs.extend(extra.into_iter().map(Into::into));
        DeviceLibrary::new(dirs)
    }

    fn add_dir(&mut self, dir: PathBuf) {
        if self.dirs.contains(&dir) {
            return;
        }
        let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| {
                        p.is_file() && p.extension().is_some_and(|e| e.eq_ignore_ascii_case("xml"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        found.sort();
        self.files.extend(found);
        self.dirs.push(dir);
    }

    /// The directories searched.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// The ESI files found.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// The parsed file at `path` (parsed once, then from the cache).
    pub fn file(&self, path: &Path) -> Result<Arc<EsiFile>> {
        if let Some(f) = self
            .cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(path)
        {
            return Ok(f.clone());
        }
        let f = Arc::new(EsiFile::from_path(path)?);
        self.cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(path.to_path_buf(), f.clone());
        Ok(f)
    }

    /// How many files have been parsed so far (each is parsed at most once).
    pub fn parsed_files(&self) -> usize {
        self.cache.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    fn is_cached(&self, path: &Path) -> bool {
        self.cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(path)
    }

    /// Search the files: first those whose raw text contains one of `hints` (or that are
    /// already parsed), then the others; return the best match that `pick` finds. A file
    /// that cannot be read is skipped with a warning; when nothing matches, the reason a
    /// matching device was left out (`broken`), else the error of a likely file that could
    /// not be read, else [`Error::UnknownDevice`].
    fn search(
        &self,
        hints: &[Vec<u8>],
        pick: &dyn Fn(&EsiFile) -> Option<usize>,
        broken: &dyn Fn(&EsiFile) -> Option<Error>,
        wanted: String,
    ) -> Result<DeviceRef> {
        let mut first = Vec::new();
        let mut rest = Vec::new();
        for p in &self.files {
            let likely = self.is_cached(p)
                || std::fs::read(p)
                    .map(|b| contains_any_ci(&b, hints))
                    .unwrap_or(false);
            if likely {
                first.push(p);
            } else {
                rest.push(p);
            }
        }
        let mut why: Option<Error> = None;
        for (likely, group) in [(true, first), (false, rest)] {
            let mut best: Option<DeviceRef> = None;
            for p in group {
                let f = match self.file(p) {
                    Ok(f) => f,
                    Err(e) => {
                        crate::esi::report_unreadable(&e);
                        if likely && why.is_none() {
                            why = Some(e);
                        }
                        continue;
                    }
                };
                if let Some(i) = pick(&f) {
                    let better = best
                        .as_ref()
                        .is_none_or(|b| f.devices[i].revision > b.revision);
                    if better {
                        best = Some(DeviceRef { file: f, index: i });
                    }
                } else if let Some(e) = broken(&f) {
                    why.get_or_insert(e);
                }
            }
            if let Some(b) = best {
                return Ok(b);
            }
        }
        Err(why.unwrap_or(Error::UnknownDevice {
            wanted,
            dirs: self.dirs.clone(),
        }))
    }

    /// The device with `product` code (and `vendor` when given) at `revision`, or at the
    /// highest revision any file has when `revision` is `None`.
    pub fn find_product(
        &self,
        vendor: Option<u32>,
        product: u32,
        revision: Option<u32>,
    ) -> Result<DeviceRef> {
        let hint = format!("{product:08x}").into_bytes();
        let pick = move |f: &EsiFile| {
            f.devices
                .iter()
                .enumerate()
                .filter(|(_, d)| d.product_code == Some(product))
                .filter(|(_, d)| vendor.is_none_or(|v| v == d.vendor_id))
                .filter(|(_, d)| revision.is_none_or(|r| r == d.revision))
                .max_by_key(|(_, d)| d.revision)
                .map(|(i, _)| i)
        };
        let mut wanted = format!("product 0x{product:08x}");
        if let Some(v) = vendor {
            wanted = format!("vendor 0x{v:08x} {wanted}");
        }
        if let Some(r) = revision {
            wanted += &format!(" revision 0x{r:08x}");
        }
        let broken = move |f: &EsiFile| {
            f.broken
                .iter()
                .find(|b| {
                    b.product_code == Some(product)
                        && vendor.is_none_or(|v| v == f.vendor.id)
                        && revision.is_none_or(|r| b.revision.is_none_or(|x| x == r))
                })
                .map(|b| b.to_error())
        };
        self.search(&[hint], &pick, &broken, wanted)
    }

    /// The device of type `type_name` (e.g. "EL2032", case-insensitive) at `revision`, or at
    /// its highest revision when `revision` is `None`.
    pub fn find_type(&self, type_name: &str, revision: Option<u32>) -> Result<DeviceRef> {
        let hints = vec![
            format!(">{type_name}<").into_bytes(),
            format!("]{type_name}<").into_bytes(),
        ];
        let pick = |f: &EsiFile| {
            f.devices
                .iter()
                .enumerate()
                .filter(|(_, d)| d.type_name.eq_ignore_ascii_case(type_name))
                .filter(|(_, d)| revision.is_none_or(|r| r == d.revision))
                .max_by_key(|(_, d)| d.revision)
                .map(|(i, _)| i)
        };
        let wanted = match revision {
            Some(r) => format!("type {type_name} revision 0x{r:08x}"),
            None => format!("type {type_name}"),
        };
        let broken = |f: &EsiFile| f.broken_device(type_name, revision).map(|b| b.to_error());
        self.search(&hints, &pick, &broken, wanted)
    }

    /// Every device of every file (parses all files).
    pub fn devices(&self) -> Result<Vec<DeviceRef>> {
        let mut out = Vec::new();
        for p in &self.files {
            let f = self.file(p)?;
            for index in 0..f.devices.len() {
                out.push(DeviceRef {
                    file: f.clone(),
                    index,
                });
            }
        }
        Ok(out)
    }
}

/// True if `hay` contains any needle, ASCII case-insensitively.
fn contains_any_ci(hay: &[u8], needles: &[Vec<u8>]) -> bool {
    needles
        .iter()
        .any(|n| !n.is_empty() && hay.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n)))
}
