//! `schedule`: see [`tessera_fuzz::schedule`] for the property.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(failure) = tessera_fuzz::schedule::check(data) {
        panic!("{failure}");
    }
});
