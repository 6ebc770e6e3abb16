//! The virtual EtherCAT network (being written).
