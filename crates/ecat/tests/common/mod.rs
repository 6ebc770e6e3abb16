#![allow(dead_code)]
pub mod counting;
pub mod sim;
