//! Limits and the Le Cam / total-variation layer (Part III): certified TV bounds, and the
//! transfers that turn a TV budget into a certified privacy-curve enclosure; and the limit
//! experiments themselves (Poisson, Skellam, compound-Poisson and Gaussian shifts) as certified
//! pairs.

pub mod berry_esseen;
pub mod experiment;
pub mod gaussian;
pub mod geometry;
pub mod lattice;
pub mod sequence;
pub mod study;
pub mod tv;
