pub use tessera_engine as engine;
pub use tessera_formats as formats;
