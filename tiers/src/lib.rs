//! Compiled tiers (Cranelift, OpenCL) of tessera; they translate the engine's bytecode.
