//! The MainDevice (being written).
