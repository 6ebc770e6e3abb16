#![allow(dead_code)]
pub mod counting;
pub mod dc;
pub mod hotconnect;
pub mod sim;
