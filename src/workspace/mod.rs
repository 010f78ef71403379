//! The agent workspace in R2: key layout, path rules, the virtual
//! `skills/` view, and the templates written on an agent's first start.

pub mod load;
pub mod methods;
pub mod paths;
pub mod templates;
