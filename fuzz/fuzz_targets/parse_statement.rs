//! `parse_statement`: see [`tessera_fuzz::text`] for the property.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(failure) = tessera_fuzz::text::statement(data) {
        panic!("{failure}");
    }
});
