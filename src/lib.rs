pub use tessera_formats as formats;
