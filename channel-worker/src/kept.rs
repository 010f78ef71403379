//! The account an object serves and its state (a channel's own `Account`
//! type), kept in memory and in the `account` table (`tables`), saved on
//! every change.

use crate::tables::Tables;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;

pub struct Kept<T> {
    account: RefCell<Option<(String, T)>>,
}

impl<T: Clone + Default + Serialize + for<'de> Deserialize<'de>> Kept<T> {
    /// What the tables hold (nothing before the account's first start).
    pub fn load(tables: Option<&Tables>) -> Self {
        let account = tables.and_then(|t| t.load().ok().flatten());
        Self {
            account: RefCell::new(account),
        }
    }

    /// The account's id and state, once started.
    pub fn get(&self) -> Option<(String, T)> {
        self.account.borrow().clone()
    }

    pub fn current(&self) -> Option<T> {
        self.account.borrow().as_ref().map(|(_, a)| a.clone())
    }

    pub fn id(&self) -> Option<String> {
        self.account.borrow().as_ref().map(|(id, _)| id.clone())
    }

    pub fn save(
        &self,
        tables: Option<&Tables>,
        account_id: &str,
        account: T,
    ) -> worker::Result<()> {
        if let Some(tables) = tables {
            tables.save(account_id, &account)?;
        }
        *self.account.borrow_mut() = Some((account_id.to_string(), account));
        Ok(())
    }

    /// Changes the account's state, when there is one, and saves it.
    pub fn update(
        &self,
        tables: Option<&Tables>,
        change: impl FnOnce(&mut T),
    ) -> worker::Result<()> {
        match self.get() {
            Some((id, mut account)) => {
                change(&mut account);
                self.save(tables, &id, account)
            }
            None => Ok(()),
        }
    }
}
