//! Limits and the Le Cam / total-variation layer (Part III): certified TV bounds, and the
//! transfers that turn a TV budget into a certified privacy-curve enclosure.

pub mod tv;
