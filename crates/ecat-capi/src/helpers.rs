//! Small global helpers: the API version and IEEE 754 values in little-endian process data.

/// `ECRT_VERSION_MAGIC` of this library: API 1.6.
pub const VERSION_MAGIC: u32 = (1 << 8) + 6;

/// The API version this library implements.
#[no_mangle]
pub extern "C" fn ecrt_version_magic() -> u32 {
    VERSION_MAGIC
}

/// Read a little-endian REAL (f32) at `data`.
///
/// # Safety
/// `data` points to 4 readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ecrt_read_real(data: *const std::ffi::c_void) -> f32 {
    let mut b = [0u8; 4];
    // SAFETY: 4 readable bytes (API contract); the copy has no alignment requirement.
    unsafe { std::ptr::copy_nonoverlapping(data as *const u8, b.as_mut_ptr(), 4) };
    f32::from_le_bytes(b)
}

/// Read a little-endian LREAL (f64) at `data`.
///
/// # Safety
/// `data` points to 8 readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ecrt_read_lreal(data: *const std::ffi::c_void) -> f64 {
    let mut b = [0u8; 8];
    // SAFETY: 8 readable bytes (API contract).
    unsafe { std::ptr::copy_nonoverlapping(data as *const u8, b.as_mut_ptr(), 8) };
    f64::from_le_bytes(b)
}

/// Write a little-endian REAL (f32) to `data`.
///
/// # Safety
/// `data` points to 4 writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ecrt_write_real(data: *mut std::ffi::c_void, value: f32) {
    // SAFETY: 4 writable bytes (API contract).
    unsafe { std::ptr::copy_nonoverlapping(value.to_le_bytes().as_ptr(), data as *mut u8, 4) };
}

/// Write a little-endian LREAL (f64) to `data`.
///
/// # Safety
/// `data` points to 8 writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ecrt_write_lreal(data: *mut std::ffi::c_void, value: f64) {
    // SAFETY: 8 writable bytes (API contract).
    unsafe { std::ptr::copy_nonoverlapping(value.to_le_bytes().as_ptr(), data as *mut u8, 8) };
}
