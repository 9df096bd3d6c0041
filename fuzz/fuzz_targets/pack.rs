//! `pack`: see [`tessera_fuzz::pack`] for the property.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(failure) = tessera_fuzz::pack::check(data) {
        panic!("{failure}");
    }
});
