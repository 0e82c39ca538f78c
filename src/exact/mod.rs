//! The exact layer (Part I §4, §8): histogram laws, the neighbouring pair through the shift
//! identities, privacy curves and divergences — every value a certified enclosure.

pub mod background;
pub mod binary;
pub mod blocks;
pub mod canonical;
pub mod curve;
pub mod divergence;
pub mod group;
pub mod histogram;
pub mod law;
pub mod nonneg;
pub mod ordered;
pub mod pair;
pub mod ratio_sum;
pub mod window;
