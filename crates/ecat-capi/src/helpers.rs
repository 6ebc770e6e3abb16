//! Small global helpers: the API version and IEEE 754 values in little-endian process data.

/// `ECRT_VERSION_MAGIC` of this library: API 1.6.
pub const VERSION_MAGIC: u32 = (1 << 8) + 6;

/// The API version this library implements.
#[no_mangle]
pub extern "C" fn ecrt_version_magic() -> u32 {
    VERSION_MAGIC
}

/// The log line of a NULL pointer handed to a REAL/LREAL helper (which then reads 0 or
/// writes nothing: IgH's helpers would crash).
#[cold]
#[inline(never)]
fn null_data(f: &str) {
    crate::log!("{f}: data is NULL");
}

/// `N` bytes at `data`, or zeros (logged) when it is NULL.
///
/// # Safety
/// `data` is NULL or points to `N` readable bytes.
unsafe fn load<const N: usize>(f: &str, data: *const std::ffi::c_void) -> [u8; N] {
    let mut b = [0u8; N];
    if data.is_null() {
        null_data(f);
    } else {
        // SAFETY: N readable bytes (API contract); the copy has no alignment requirement.
        unsafe { std::ptr::copy_nonoverlapping(data as *const u8, b.as_mut_ptr(), N) };
    }
    b
}

/// Write `b` to `data`, or nothing (logged) when it is NULL.
///
/// # Safety
/// `data` is NULL or points to `N` writable bytes.
unsafe fn store<const N: usize>(f: &str, data: *mut std::ffi::c_void, b: [u8; N]) {
    if data.is_null() {
        null_data(f);
        return;
    }
    // SAFETY: N writable bytes (API contract).
    unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), data as *mut u8, N) };
}

/// Read a little-endian REAL (f32) at `data` (0 for NULL).
///
/// # Safety
/// `data` is NULL or points to 4 readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ecrt_read_real(data: *const std::ffi::c_void) -> f32 {
    // SAFETY: forwarded contract.
    f32::from_le_bytes(unsafe { load("ecrt_read_real", data) })
}

/// Read a little-endian LREAL (f64) at `data` (0 for NULL).
///
/// # Safety
/// `data` is NULL or points to 8 readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ecrt_read_lreal(data: *const std::ffi::c_void) -> f64 {
    // SAFETY: forwarded contract.
    f64::from_le_bytes(unsafe { load("ecrt_read_lreal", data) })
}

/// Write a little-endian REAL (f32) to `data` (nothing for NULL).
///
/// # Safety
/// `data` is NULL or points to 4 writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ecrt_write_real(data: *mut std::ffi::c_void, value: f32) {
    // SAFETY: forwarded contract.
    unsafe { store("ecrt_write_real", data, value.to_le_bytes()) }
}

/// Write a little-endian LREAL (f64) to `data` (nothing for NULL).
///
/// # Safety
/// `data` is NULL or points to 8 writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ecrt_write_lreal(data: *mut std::ffi::c_void, value: f64) {
    // SAFETY: forwarded contract.
    unsafe { store("ecrt_write_lreal", data, value.to_le_bytes()) }
}
