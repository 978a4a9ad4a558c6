//! What a reply says, in the classifier's vocabulary.

use std::fmt;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Intent {
    NotARegression,
    WillRevert,
    FixPosted,
    Investigating,
    Question,
    WontFix,
    Duplicate,
    ThanksOnly,
    Other,
}

impl Intent {
    pub const ALL: [Intent; 9] = [
        Intent::NotARegression,
        Intent::WillRevert,
        Intent::FixPosted,
        Intent::Investigating,
        Intent::Question,
        Intent::WontFix,
        Intent::Duplicate,
        Intent::ThanksOnly,
        Intent::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Intent::NotARegression => "not-a-regression",
            Intent::WillRevert => "will-revert",
            Intent::FixPosted => "fix-posted",
            Intent::Investigating => "investigating",
            Intent::Question => "question",
            Intent::WontFix => "wont-fix",
            Intent::Duplicate => "duplicate",
            Intent::ThanksOnly => "thanks-only",
            Intent::Other => "other",
        }
    }

    pub fn parse(s: &str) -> Option<Intent> {
        Self::ALL.into_iter().find(|i| i.as_str() == s)
    }

    /// Intents that decide a case's fate; reading one where the replier did
    /// not decide is the one mistake perfbot must never make.
    pub fn is_decisive(self) -> bool {
        matches!(
            self,
            Intent::NotARegression
                | Intent::WillRevert
                | Intent::FixPosted
                | Intent::WontFix
                | Intent::Duplicate
        )
    }
}

impl fmt::Display for Intent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
