//! Where each mailbox was read up to: (mailbox, UIDVALIDITY, last UID); and
//! named cursors (the last commit read of a public-inbox repository).

use serde::{Deserialize, Serialize};

use super::{decode, encode, Store, StoreError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    pub uid_validity: u32,
    pub last_uid: u32,
}

impl Store {
    /// The cursor of a mailbox (`imap://user@host/INBOX`), if it was read before.
    pub fn cursor(&self, mailbox: &str) -> Result<Option<Cursor>, StoreError> {
        match self.cursors.get(mailbox)? {
            Some(v) => Ok(Some(decode("cursors", mailbox.as_bytes(), &v)?)),
            None => Ok(None),
        }
    }

    /// Move the cursor, durably (after the messages up to it are recorded).
    pub fn set_cursor(&self, mailbox: &str, c: Cursor) -> Result<(), StoreError> {
        self.cursors.insert(mailbox, encode(&c))?;
        self.flush()
    }

    /// A cursor that is a name, such as the last commit read of a
    /// public-inbox repository (key `public-inbox:<path>`).
    pub fn text_cursor(&self, key: &str) -> Result<Option<String>, StoreError> {
        match self.cursors.get(key)? {
            Some(v) => Ok(Some(decode("cursors", key.as_bytes(), &v)?)),
            None => Ok(None),
        }
    }

    /// Move a named cursor, durably.
    pub fn set_text_cursor(&self, key: &str, value: &str) -> Result<(), StoreError> {
        self.cursors.insert(key, encode(&value))?;
        self.flush()
    }
}
