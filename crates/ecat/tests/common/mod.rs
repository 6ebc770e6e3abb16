pub mod counting;
