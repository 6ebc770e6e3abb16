#![allow(dead_code)]
pub mod counting;
pub mod hotconnect;
pub mod sim;
