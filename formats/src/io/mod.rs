//! Reading and writing Matrix Market and FROSTT files.
