//! `read_tns`: see [`tessera_fuzz::text`] for the property.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(failure) = tessera_fuzz::text::tns(data) {
        panic!("{failure}");
    }
});
