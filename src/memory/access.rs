//! Tenant isolation: every store call carries the account it acts for,
//! and touches nothing of another account (no cross-account reads in v1
//! of the directory spec).

use super::uri::{account_prefix, NodeUri, ACCOUNTS_ROOT};
use super::MemoryError;

/// Who a store call acts for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestContext {
    pub account_id: String,
}

impl RequestContext {
    pub fn new(account_id: &str) -> Self {
        Self {
            account_id: account_id.to_string(),
        }
    }

    /// A read or write of `uri` is allowed only inside the caller's account.
    pub fn check(&self, uri: &NodeUri) -> Result<(), MemoryError> {
        self.check_account(&uri.account)
    }

    pub fn check_account(&self, account: &str) -> Result<(), MemoryError> {
        match account == self.account_id {
            true => Ok(()),
            false => Err(MemoryError::Denied {
                account: account.to_string(),
            }),
        }
    }

    /// A listing is allowed only under the caller's own account prefix.
    pub fn check_prefix(&self, prefix: &str) -> Result<(), MemoryError> {
        let own = account_prefix(&self.account_id);
        match prefix.starts_with(&own) {
            true => Ok(()),
            false => Err(MemoryError::Denied {
                account: prefix
                    .strip_prefix(ACCOUNTS_ROOT)
                    .and_then(|p| p.split('/').next())
                    .unwrap_or(prefix)
                    .to_string(),
            }),
        }
    }
}
