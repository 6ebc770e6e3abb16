//! The process image as Python sees it: one `bytearray` per domain, mirrored to and from the
//! domain images once per cycle, and the per-SubDevice layout with entry names.
//!
//! Design: Python owns the memory (a `bytearray`, exposed as a writable `memoryview`, so numpy
//! can wrap it without copies). The runtime keeps a `memoryview` of each array for its whole
//! life, which forbids resizing it, so the buffer address stays valid; the cycle thread copies
//! through that address without the GIL: outputs Python → domain before each send, inputs
//! domain → Python after each receive, under the exchange lock. Entry access by name
//! (`read_bits`/`write_bits`) takes the same lock, so a value is never seen half-written;
//! writes through the `memoryview` itself are plain byte stores (use the entry methods for
//! multi-byte values that must not tear).

use ecat::config::Direction;
use ecat::runtime::Runtime;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict, PyList, PyMemoryView};
use std::sync::Mutex;

/// One domain's Python-side buffer.
pub struct Mirror {
    ptr: *mut u8,
    len: usize,
    outputs_len: usize,
}

// SAFETY: the pointer is into a bytearray that the owning PyRuntime keeps alive and
// non-resizable (an exported memoryview) for as long as any Mirror exists; access from Rust
// is serialised by `Mirrors::lock`.
unsafe impl Send for Mirror {}
// SAFETY: as above.
unsafe impl Sync for Mirror {}

/// The mirrors of every domain and the lock that serialises Rust-side access.
pub struct Mirrors {
    pub(crate) domains: Vec<Mirror>,
    pub(crate) lock: Mutex<()>,
}

/// The Python objects behind the mirrors (kept alive by the runtime).
pub struct Views {
    /// One writable memoryview per domain.
    pub views: Vec<Py<PyMemoryView>>,
}

impl Mirrors {
    /// Create one bytearray + memoryview per domain of `rt`.
    pub fn new(py: Python<'_>, rt: &Runtime) -> PyResult<(Mirrors, Views)> {
        let mut domains = Vec::new();
        let mut views = Vec::new();
        for d in rt.domains() {
            let ba = PyByteArray::new(py, d.image());
            let mv = PyMemoryView::from(ba.as_any())?;
            // The memoryview export pins the buffer (see the module notes).
            let ptr = ba.data();
            domains.push(Mirror {
                ptr,
                len: d.size(),
                outputs_len: d.outputs_len,
            });
            views.push(mv.unbind());
        }
        Ok((
            Mirrors {
                domains,
                lock: Mutex::new(()),
            },
            Views { views },
        ))
    }

    /// Copy the outputs Python wrote into the domain images.
    pub fn outputs_in(&self, rt: &mut Runtime) {
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        for (i, m) in self.domains.iter().enumerate() {
            let img = rt.domain_mut(i).image_mut();
            let n = m.outputs_len.min(img.len()).min(m.len);
            // SAFETY: `m.ptr` is valid for `m.len` bytes (module notes); no overlap.
            unsafe { std::ptr::copy_nonoverlapping(m.ptr, img.as_mut_ptr(), n) };
        }
    }

    /// Copy the inputs the last exchange brought into Python's buffers.
    pub fn inputs_out(&self, rt: &Runtime) {
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        for (i, m) in self.domains.iter().enumerate() {
            let img = rt.domain(i).image();
            let end = img.len().min(m.len);
            if m.outputs_len < end {
                // SAFETY: as in `outputs_in`.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        img.as_ptr().add(m.outputs_len),
                        m.ptr.add(m.outputs_len),
                        end - m.outputs_len,
                    )
                };
            }
        }
    }

    fn check(&self, domain: usize, byte: usize, bit: u8, bits: u8) -> Result<&Mirror, String> {
        let m = self
            .domains
            .get(domain)
            .ok_or_else(|| format!("there is no domain {domain}"))?;
        let end_bit = byte * 8 + bit as usize + bits as usize;
        if bits == 0 || bits > 64 || end_bit > m.len * 8 {
            return Err(format!(
                "{bits} bits at byte {byte} bit {bit} do not fit domain {domain} ({} bytes) or exceed 64 bits",
                m.len
            ));
        }
        Ok(m)
    }

    /// Read `bits` bits (little-endian, from bit `bit` of byte `byte`) of a domain.
    pub fn read_bits(&self, domain: usize, byte: usize, bit: u8, bits: u8) -> Result<u64, String> {
        let m = self.check(domain, byte, bit, bits)?;
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut v = 0u64;
        for i in 0..bits as usize {
            let b = bit as usize + i;
            // SAFETY: in bounds (checked).
            let x = unsafe { *m.ptr.add(byte + b / 8) };
            v |= (((x >> (b % 8)) & 1) as u64) << i;
        }
        Ok(v)
    }

    /// Write `bits` bits of `value` (little-endian, from bit `bit` of byte `byte`).
    pub fn write_bits(
        &self,
        domain: usize,
        byte: usize,
        bit: u8,
        bits: u8,
        value: u64,
    ) -> Result<(), String> {
        let m = self.check(domain, byte, bit, bits)?;
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        for i in 0..bits as usize {
            let b = bit as usize + i;
            // SAFETY: in bounds (checked).
            unsafe {
                let p = m.ptr.add(byte + b / 8);
                let mask = 1u8 << (b % 8);
                *p = if (value >> i) & 1 == 1 {
                    *p | mask
                } else {
                    *p & !mask
                };
            }
        }
        Ok(())
    }
}

/// Where a SubDevice's data of one direction sits: (domain, offset, length), if it has any.
fn span(rt: &Runtime, position: u16, dir: Direction) -> Option<(usize, usize, usize)> {
    rt.domains().iter().find_map(|d| {
        let rs: Vec<_> = d
            .regions
            .iter()
            .filter(|r| r.position == position && r.direction == dir)
            .collect();
        let start = rs.iter().map(|r| r.offset).min()?;
        let end = rs.iter().map(|r| r.offset + r.len).max()?;
        Some((d.index, start, end - start))
    })
}

/// The process data layout of the SubDevice at `position`: `outputs` and `inputs` as
/// (domain, offset, length) or None, and `entries` (name, pdo_index, pdo_name, index,
/// subindex, bits, data_type, direction, domain, byte, bit), names from the SII.
pub fn layout<'py>(py: Python<'py>, rt: &Runtime, position: usize) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let p = position as u16;
    d.set_item("outputs", span(rt, p, Direction::Output))?;
    d.set_item("inputs", span(rt, p, Direction::Input))?;
    let entries = PyList::empty(py);
    let info = rt
        .supervisor()
        .states()
        .nth(position)
        .map(|s| s.info.clone());
    if let (Some(cfg), Some(info)) = (rt.supervisor().config(position), info) {
        for sync in &cfg.sync {
            let (sii, dir) = match sync.direction {
                Direction::Output => (&info.rx_pdos, "output"),
                Direction::Input => (&info.tx_pdos, "input"),
            };
            for pdo in &sync.pdos {
                let sii_pdo = sii.iter().find(|x| x.index == pdo.index);
                for e in pdo.entries.iter().filter(|e| e.index != 0) {
                    let Some(loc) = rt.locate(position, e.index, e.subindex) else {
                        continue;
                    };
                    let sii_e = sii_pdo
                        .and_then(|x| {
                            x.entries
                                .iter()
                                .find(|y| y.index == e.index && y.subindex == e.subindex)
                        })
                        .or_else(|| {
                            sii.iter()
                                .flat_map(|x| &x.entries)
                                .find(|y| y.index == e.index && y.subindex == e.subindex)
                        });
                    let ed = PyDict::new(py);
                    ed.set_item("name", sii_e.map(|x| x.name.as_str()).unwrap_or(""))?;
                    ed.set_item("data_type", sii_e.map_or(0, |x| x.data_type))?;
                    ed.set_item("pdo_index", pdo.index)?;
                    ed.set_item("pdo_name", sii_pdo.map(|x| x.name.as_str()).unwrap_or(""))?;
                    ed.set_item("index", e.index)?;
                    ed.set_item("subindex", e.subindex)?;
                    ed.set_item("bits", e.bits)?;
                    ed.set_item("direction", dir)?;
                    ed.set_item("domain", loc.domain)?;
                    ed.set_item("byte", loc.byte)?;
                    ed.set_item("bit", loc.bit)?;
                    entries.append(ed)?;
                }
            }
        }
    }
    d.set_item("entries", entries)?;
    Ok(d)
}
