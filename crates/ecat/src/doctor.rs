//! Host checks (in progress).
