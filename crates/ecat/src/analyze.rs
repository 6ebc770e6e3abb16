//! Capture analysis (in progress).
