//! Who is speaking, as far as deciding a case goes: the commit's author or
//! committer, a maintainer (from a MAINTAINERS file or a list), an operator of
//! perfbot, someone else, or a robot. The policy says which roles may move a
//! case by prose and which by `#perfbot` command.

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::model::case::Case;
use crate::model::Address;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Author,
    Committer,
    Maintainer,
    /// Someone who posted a patch in the case's thread (a fix, a revert, a
    /// test patch): their words may move the case to a state that closes
    /// nothing (awaiting a fix or a revert), like the trusted roles'.
    Contributor,
    Operator,
    Other,
    Bot,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Author => "author",
            Role::Committer => "committer",
            Role::Maintainer => "maintainer",
            Role::Contributor => "contributor",
            Role::Operator => "operator",
            Role::Other => "other",
            Role::Bot => "bot",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        [
            Role::Author,
            Role::Committer,
            Role::Maintainer,
            Role::Contributor,
            Role::Operator,
            Role::Other,
            Role::Bot,
        ]
        .into_iter()
        .find(|r| r.as_str() == s)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the DKIM check said about a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// A valid signature by a domain aligned with the From domain: the mail
    /// comes from that domain.
    Aligned(String),
    /// Valid signatures, none by the From domain (a list or a forwarder
    /// re-signed it, or someone signed a forged From with their own key): no
    /// evidence about the author, like an unsigned mail.
    Unaligned(String),
    /// Signed, and no signature verifies (the reason).
    Fail(String),
    /// Not signed (or keys could not be fetched): no evidence either way.
    Unsigned(String),
    /// An aligned signature that verifies but does not cover the mail's
    /// threading headers (the domain, the headers left out): the words are
    /// the sender's, but the thread they answer could have been changed, so
    /// it is no evidence for a decision on this case.
    Uncovered(String),
}

impl Verdict {
    /// For the timeline and logs.
    pub fn describe(&self) -> String {
        match self {
            Verdict::Aligned(d) => format!("pass ({d})"),
            Verdict::Unaligned(d) => format!("pass by {d}, not the From domain: unverified"),
            Verdict::Fail(w) => format!("fail: {w}"),
            Verdict::Unsigned(w) => format!("none: {w}"),
            Verdict::Uncovered(w) => {
                format!("pass ({w} not signed): the thread it answers is unverified")
            }
        }
    }

    /// The sender is who the From header says (an aligned pass).
    pub fn verified(&self) -> bool {
        matches!(self, Verdict::Aligned(_))
    }
}

/// The trust policy, validated from `[trust]`.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub operators: Vec<Address>,
    pub maintainers: HashSet<Address>,
    /// Roles whose prose may move a case.
    pub free_text: Vec<Role>,
    /// Roles whose `#perfbot` commands are obeyed.
    pub commands: Vec<Role>,
    /// Decisions below this confidence go to a human.
    pub min_confidence: f64,
    /// Moves that close nothing (awaiting a fix or revert) may follow anyone.
    pub anyone_moves_open: bool,
    /// People's other addresses (a `.mailmap`).
    pub aliases: Aliases,
    /// A sender with the display name and mailbox name of someone the case
    /// knows, at another domain, is that person (`same_name_addresses`).
    pub same_name: bool,
}

/// People's other addresses, from a `.mailmap` (the kernel keeps one): each
/// address it maps to another, mapped to that one. Two addresses are one
/// person's when they map to the same. Only address-to-address entries count:
/// an entry that needs a name to match as well, or that changes only the
/// name, says nothing about an address.
#[derive(Debug, Clone, Default)]
pub struct Aliases(HashMap<Address, Address>);

impl Aliases {
    /// Read a `.mailmap`; a line that is not one is an error naming it.
    pub fn from_mailmap(text: &[u8]) -> Result<Aliases, String> {
        let mut map = HashMap::new();
        for entry in gix_mailmap::parse(text) {
            let e = entry.map_err(|e| e.to_string())?;
            let (Some(new), None) = (e.new_email(), e.old_name()) else {
                continue;
            };
            let (Some(new), Some(old)) = (
                Address::parse(&new.to_string()),
                Address::parse(&e.old_email().to_string()),
            ) else {
                continue;
            };
            if new != old {
                map.insert(old, new);
            }
        }
        Ok(Aliases(map))
    }

    /// The address `a` stands for.
    pub fn canonical<'a>(&'a self, a: &'a Address) -> &'a Address {
        self.0.get(a).unwrap_or(a)
    }

    /// `a` and `b` are one person's addresses.
    pub fn same(&self, a: &Address, b: &Address) -> bool {
        a == b || self.canonical(a) == self.canonical(b)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Policy {
    pub fn may_decide_by_text(&self, r: Role) -> bool {
        self.free_text.contains(&r)
    }
    pub fn may_command(&self, r: Role) -> bool {
        self.commands.contains(&r)
    }
}

/// Maintainers' addresses from a kernel MAINTAINERS file (`M:` lines).
pub fn maintainers_from_file(text: &str) -> HashSet<Address> {
    text.lines()
        .filter_map(|l| l.strip_prefix("M:"))
        .filter_map(|m| Address::parse(m.trim()))
        .collect()
}

/// The role of `from` (display name `name`) for `case`; a robot is always
/// `Bot`. The strongest role wins: operator, author, committer, the
/// robot's people of an adopted case (as operators), maintainer,
/// contributor.
pub fn role(from: Option<&Address>, name: &str, is_bot: bool, case: &Case, p: &Policy) -> Role {
    if is_bot {
        return Role::Bot;
    }
    let Some(from) = from else {
        return Role::Other;
    };
    let me = |a: &Address| p.aliases.same(a, from);
    // A mailbox the case knows (`Name <addr>`): this sender's by address,
    // by the mailmap, or by name at another domain.
    let is_me = |mailbox: &str| {
        Address::parse(mailbox).is_some_and(|a| me(&a))
            || (p.same_name && same_name_elsewhere(mailbox, name, from))
    };
    // The commit's people as the report named them: the case may keep a
    // bare address whose display name only its To or Cc has, and a match
    // by name needs it.
    let named = |who: &str| -> String {
        let addr = Address::parse(who);
        case.to
            .iter()
            .chain(&case.cc)
            .find(|m| addr.is_some() && Address::parse(m) == addr && !display_name(m).is_empty())
            .cloned()
            .unwrap_or_else(|| who.to_string())
    };
    let is = |a: &Option<String>| a.as_deref().is_some_and(|w| is_me(&named(w)));
    let listed = |set: &HashSet<Address>| {
        set.contains(from)
            || (!p.aliases.is_empty()
                && (set.contains(p.aliases.canonical(from)) || set.iter().any(me)))
    };
    if p.operators.iter().any(me) {
        Role::Operator
    } else if is(&case.author) {
        Role::Author
    } else if is(&case.committer) {
        Role::Committer
    } else if case.robot_people.iter().any(|c| is_me(c)) {
        // The robot's own people, on its report's thread: they test and
        // report for it, as perfbot's operators do for perfbot.
        Role::Operator
    } else if listed(&p.maintainers) || case.cc.iter().chain(&case.to).any(|c| is_me(c)) {
        // The report was copied to them by name: the robot copies the
        // maintainers and reviewers of the code (get_maintainer.pl), so they
        // speak for it as a MAINTAINERS file would say.
        Role::Maintainer
    } else if case.contributors.iter().any(|c| is_me(c)) {
        Role::Contributor
    } else {
        Role::Other
    }
}

/// `known` (`Name <addr>`) names the sender `name <from>` at another domain:
/// the same display name (of two words at least, in any order and case) and
/// the same mailbox before the `@`. Developers answer from another address
/// than the commit's (`fdmanana@kernel.org` for `fdmanana@suse.com`,
/// `dsterba@suse.cz` for `dsterba@suse.com`). A sender who gives no display
/// name (some clients and gateways send a bare address, or the address as
/// its name) is matched by the mailbox instead, where it spells the known
/// name (`spells_name`): the same evidence a display name gives, since both
/// are the sender's to write.
pub fn same_name_elsewhere(known: &str, name: &str, from: &Address) -> bool {
    let Some(addr) = Address::parse(known) else {
        return false;
    };
    let (Some((l1, d1)), Some((l2, d2))) = (
        addr.as_str().rsplit_once('@'),
        from.as_str().rsplit_once('@'),
    ) else {
        return false;
    };
    if l1 != l2 || l1.len() < 2 || d1 == d2 {
        return false;
    }
    let theirs = words(display_name(known));
    // Some clients write the address for the name ("a@b" <a@b>): no name.
    let name = name.trim().trim_matches(|c| c == '"' || c == '\'');
    let bare = name.is_empty() || (name.contains('@') && !name.contains(char::is_whitespace));
    theirs.len() >= 2
        && match bare {
            true => spells_name(l2, &theirs),
            false => theirs == words(name),
        }
}

/// The mailbox `local` spells a person's name (`words`, lower case): each
/// word of the name, whole or as its initial, in some order, with one whole
/// word at least (`jeffxu`, `roberto.sassu`, `wqu` for Qu Wenruo), and at
/// most one letter besides for a middle name the display name leaves out
/// (`fdmanana` for Filipe Manana, `dan.j.williams`). Dots, dashes and
/// underscores between them do not count.
fn spells_name(local: &str, words: &[String]) -> bool {
    let local: String = local
        .chars()
        .filter(|c| !matches!(c, '.' | '-' | '_'))
        .flat_map(char::to_lowercase)
        .collect();
    let words: Vec<String> = words
        .iter()
        .map(|w| w.chars().filter(|c| c.is_alphanumeric()).collect())
        .filter(|w: &String| !w.is_empty())
        .collect();
    // Each step of `spelled` uses up a word or the one extra letter, so a
    // name of four words at most bounds its search whatever the mailbox.
    (2..=4).contains(&words.len()) && spelled(&local, &words, Spelling::default())
}

/// What a spelling has used so far (`spells_name`): the words (a bit
/// each), whether one of them whole, whether the extra letter.
#[derive(Clone, Copy, Default)]
struct Spelling {
    words: u8,
    whole_word: bool,
    extra_letter: bool,
}

/// `local` is the `words` not used yet, each whole or as its initial, in
/// some order, plus at most one letter that is none of them.
fn spelled(local: &str, words: &[String], so_far: Spelling) -> bool {
    if local.is_empty() {
        return so_far.words.count_ones() as usize == words.len() && so_far.whole_word;
    }
    let by_word = (words.iter().enumerate())
        .filter(|&(i, _)| so_far.words & (1 << i) == 0)
        .any(|(i, w)| {
            let used = Spelling {
                words: so_far.words | (1 << i),
                ..so_far
            };
            let whole = local.strip_prefix(w.as_str()).is_some_and(|rest| {
                let s = Spelling {
                    whole_word: true,
                    ..used
                };
                spelled(rest, words, s)
            });
            let initial = w.chars().next().and_then(|c| local.strip_prefix(c));
            whole || initial.is_some_and(|rest| spelled(rest, words, used))
        });
    let extra = !so_far.extra_letter && !local.starts_with(|c: char| c.is_ascii_digit()) && {
        let rest = &local[local.chars().next().map_or(0, char::len_utf8)..];
        let s = Spelling {
            extra_letter: true,
            ..so_far
        };
        spelled(rest, words, s)
    };
    by_word || extra
}

/// The words of a display name that tell one person from another, sorted:
/// lower case, without accents (a client or a commit may leave them out:
/// "Mickael Salaun" for "Mickaël Salaün"), without middle initials ("Paul
/// E. McKenney" signs mail as "Paul McKenney") and without an aside in
/// parentheses.
fn words(name: &str) -> Vec<String> {
    use unicode_normalization::{char::is_combining_mark, UnicodeNormalization};
    let mut w: Vec<String> = without_asides(name)
        .nfkd()
        .filter(|c| !is_combining_mark(*c))
        .collect::<String>()
        .split(|c: char| c.is_whitespace() || c == ',')
        .map(|w| {
            w.trim_matches(|c: char| matches!(c, '"' | '\'' | '.'))
                .to_lowercase()
        })
        .filter(|w| w.chars().count() > 1)
        .collect();
    w.sort();
    w
}

/// A display name without what it says in parentheses: an employer, as
/// the kernel's sign-offs and the robot's Cc write it ("Matthew Wilcox
/// (Oracle)", "Mike Rapoport (Microsoft)"), is no part of the name, and the
/// same person's replies often leave it out. Only a closed aside goes: what
/// follows a `(` that nothing closes stays part of the name ("A (B" and
/// "A (B Mallory" are two names).
fn without_asides(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    // Where in `out` each open parenthesis stood.
    let mut open: Vec<usize> = Vec::new();
    for c in name.chars() {
        match c {
            '(' => open.push(out.len()),
            ')' => {
                if let Some(at) = open.pop() {
                    out.truncate(at);
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// The display name of `Name <addr>` (empty for a bare address).
fn display_name(mailbox: &str) -> &str {
    match mailbox.rfind('<') {
        Some(i) => mailbox[..i].trim(),
        None => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maintainers_file() {
        let m = maintainers_from_file(
            "XFS FILESYSTEM\nM:\tCarlos Maiolino <cem@kernel.org>\nL:\tlinux-xfs@vger.kernel.org\nS:\tSupported\nF:\tfs/xfs/\n\nMM\nM:\tAndrew Morton <akpm@linux-foundation.org>\n",
        );
        assert!(m.contains(&Address::parse("cem@kernel.org").unwrap()));
        assert!(m.contains(&Address::parse("akpm@linux-foundation.org").unwrap()));
        assert!(!m.contains(&Address::parse("linux-xfs@vger.kernel.org").unwrap()));
    }

    fn a(s: &str) -> Address {
        Address::parse(s).unwrap()
    }

    /// `.mailmap` lines: which addresses become one person's.
    #[test]
    fn mailmap_table() {
        let map = Aliases::from_mailmap(
            b"# the kernel's style
              Filipe Manana <fdmanana@kernel.org> <fdmanana@suse.com>
              <dave@fromorbit.com> <DChinner@RedHat.com>
              Only A Name <name@example.org>
              Proper <p@example.org> Commit Name <c@example.org>

",
        )
        .unwrap();
        let table = [
            ("fdmanana@suse.com", "fdmanana@kernel.org", true),
            ("fdmanana@kernel.org", "fdmanana@suse.com", true),
            ("dchinner@redhat.com", "dave@fromorbit.com", true),
            ("name@example.org", "other@example.org", false),
            // Needs the commit name to match as well: not an address mapping.
            ("c@example.org", "p@example.org", false),
            ("x@example.org", "x@example.org", true),
        ];
        for (x, y, same) in table {
            assert_eq!(map.same(&a(x), &a(y)), same, "{x} {y}");
        }
        let err = Aliases::from_mailmap(
            b"good <a@b> <c@d>
no address here
",
        )
        .unwrap_err();
        assert!(err.contains("Line 2"), "{err}");
    }

    /// The report went to one address; its author answers from another the
    /// mailmap knows: the same role.
    #[test]
    fn another_address_of_the_same_person_has_their_role() {
        let mut case = Case::sample(
            "aaaaaaaaaaaa",
            crate::model::case::CaseState::Reported,
            chrono::Utc::now(),
        );
        case.to = vec!["Filipe Manana <fdmanana@suse.com>".into()];
        case.author = Some("dave@fromorbit.com".into());
        let from = a("fdmanana@kernel.org");
        let plain = Policy::default();
        assert_eq!(
            role(Some(&from), "Filipe Manana", false, &case, &plain),
            Role::Other
        );
        let mapped = Policy {
            aliases: Aliases::from_mailmap(
                b"Filipe Manana <fdmanana@kernel.org> <fdmanana@suse.com>
                  <dave@fromorbit.com> <dchinner@redhat.com>
",
            )
            .unwrap(),
            ..Policy::default()
        };
        assert_eq!(
            role(Some(&from), "Filipe Manana", false, &case, &mapped),
            Role::Maintainer
        );
        assert_eq!(
            role(Some(&a("dchinner@redhat.com")), "", false, &case, &mapped),
            Role::Author
        );
        assert_eq!(
            role(Some(&a("someone@else.org")), "", false, &case, &mapped),
            Role::Other
        );
    }

    /// An adopted case's robot people are read as operators, below the
    /// commit's author and committer and above the report's Cc:
    /// `(sender, role)`.
    #[test]
    fn the_robots_people_speak_as_operators() {
        let mut case = Case::sample(
            "aaaaaaaaaaaa",
            crate::model::case::CaseState::Reported,
            chrono::Utc::now(),
        );
        case.author = Some("Dan Williams <dan.j.williams@intel.com>".into());
        case.cc = vec![
            "<feng.tang@intel.com>".into(),
            "Jan Kara <jack@suse.cz>".into(),
        ];
        case.robot_people = vec![
            "oliver.sang@intel.com".into(),
            "feng.tang@intel.com".into(),
            // Named by the operators, but the commit's author here.
            "dan.j.williams@intel.com".into(),
        ];
        let p = Policy::default();
        for (from, want) in [
            ("oliver.sang@intel.com", Role::Operator),
            ("feng.tang@intel.com", Role::Operator),
            ("dan.j.williams@intel.com", Role::Author),
            ("jack@suse.cz", Role::Maintainer),
            ("aaron.lu@intel.com", Role::Other),
        ] {
            assert_eq!(role(Some(&a(from)), "", false, &case, &p), want, "{from}");
        }
    }

    /// Who is the same person at another address, by display name and
    /// mailbox name: `(known, from name, from address, same person)`.
    #[test]
    fn same_name_elsewhere_table() {
        for (known, name, from, same) in [
            (
                "Filipe Manana <fdmanana@suse.com>",
                "Filipe Manana",
                "fdmanana@kernel.org",
                true,
            ),
            (
                "David Sterba <dsterba@suse.com>",
                "David Sterba",
                "dsterba@suse.cz",
                true,
            ),
            (
                "\"Sterba, David\" <dsterba@suse.com>",
                "david sterba",
                "DSterba@suse.cz",
                true,
            ),
            // The same address is not "another" one (the caller matched it).
            (
                "David Sterba <dsterba@suse.com>",
                "David Sterba",
                "dsterba@suse.com",
                false,
            ),
            // Another mailbox name, another name, one word, no name.
            (
                "Qu Wenruo <wqu@suse.com>",
                "Qu Wenruo",
                "quwenruo.btrfs@gmx.com",
                false,
            ),
            (
                "David Sterba <dsterba@suse.com>",
                "David Howells",
                "dsterba@evil.example",
                false,
            ),
            ("root <root@a.example>", "root", "root@b.example", false),
            ("dsterba@suse.com", "David Sterba", "dsterba@suse.cz", false),
            // No display name: the mailbox must spell the known name.
            (
                "David Sterba <dsterba@suse.com>",
                "",
                "dsterba@suse.cz",
                true,
            ),
            (
                "Jeff Xu <jeffxu@chromium.org>",
                "",
                "jeffxu@google.com",
                true,
            ),
            (
                "Roberto Sassu <roberto.sassu@huawei.com>",
                "",
                "Roberto.Sassu@huaweicloud.com",
                true,
            ),
            ("Qu Wenruo <wqu@suse.com>", "", "wqu@gmx.com", true),
            (
                "Filipe Manana <fdmanana@suse.com>",
                "",
                "fdmanana@kernel.org",
                true,
            ),
            (
                "Dan Williams <dan.j.williams@intel.com>",
                "",
                "dan.j.williams@example.org",
                true,
            ),
            // Two letters besides the name, a word left out, initials alone.
            (
                "Filipe Manana <fxdmanana@suse.com>",
                "",
                "fxdmanana@kernel.org",
                false,
            ),
            ("Jan Kara <kara@suse.cz>", "", "kara@suse.com", false),
            ("Jan Kara <jk@suse.cz>", "", "jk@suse.com", false),
            (
                "Jan Kara <kara.jan@suse.cz>",
                " ",
                "kara.jan@suse.com",
                true,
            ),
            ("David Sterba <ds@suse.com>", "", "ds@evil.example", false),
            ("Jan Kara <jack@suse.cz>", "", "jack@example.org", false),
            // The address written for the name is no name either.
            (
                "Filipe Manana <fdmanana@suse.com>",
                "'fdmanana@kernel.org'",
                "fdmanana@kernel.org",
                true,
            ),
            (
                "Jan Kara <jack@suse.cz>",
                "jack@suse.com",
                "jack@suse.com",
                false,
            ),
            (
                "Jeff Xu <jeffxu@chromium.org>",
                "",
                "jeffxu@chromium.org",
                false,
            ),
            (
                "Jeff Xu <jeffxu@chromium.org>",
                "",
                "jeff@google.com",
                false,
            ),
            ("jeffxu@chromium.org", "", "jeffxu@google.com", false),
            ("not an address", "David Sterba", "dsterba@suse.cz", false),
            // Accents and middle initials, on either side.
            (
                "Mickaël Salaün <mic@digikod.net>",
                "Mickael Salaun",
                "mic@linux.microsoft.example",
                true,
            ),
            (
                "Paul E. McKenney <paulmck@kernel.org>",
                "Paul McKenney",
                "paulmck@meta.example",
                true,
            ),
            (
                "Filipe Manana <fdmanana@suse.com>",
                "Filipe D Manana",
                "fdmanana@kernel.org",
                true,
            ),
            // Initials alone are no name.
            ("J. K. <jk@a.example>", "J. K.", "jk@b.example", false),
            // An employer in parentheses is no part of the name.
            (
                "\"Matthew Wilcox (Oracle)\" <willy@infradead.org>",
                "Matthew Wilcox",
                "willy@oracle.example",
                true,
            ),
            (
                "Mike Rapoport <rppt@kernel.org>",
                "Mike Rapoport (Microsoft)",
                "rppt@microsoft.example",
                true,
            ),
            (
                "Mike Rapoport <rppt@kernel.org>",
                "(Mike Rapoport)",
                "rppt@microsoft.example",
                false,
            ),
            // Only a closed aside goes: an open one keeps what follows.
            (
                "\"Mike Rapoport (IBM\" <rppt@kernel.org>",
                "Mike Rapoport (IBM Mallory",
                "rppt@microsoft.example",
                false,
            ),
            (
                "\"Mike Rapoport (\" <rppt@kernel.org>",
                "Mike Rapoport ( Mallory",
                "rppt@microsoft.example",
                false,
            ),
            (
                "\"Mike (Acme (EU)) Rapoport\" <rppt@kernel.org>",
                "Mike Rapoport",
                "rppt@microsoft.example",
                true,
            ),
        ] {
            assert_eq!(
                same_name_elsewhere(known, name, &a(from)),
                same,
                "{known} / {name} <{from}>"
            );
        }
    }

    /// With `same_name`, the author answering from another domain is the
    /// author, a maintainer copied on the report is a maintainer; without
    /// it (decisions need DKIM: anyone signs for a domain of their own),
    /// both are strangers.
    #[test]
    fn another_domain_by_name_has_the_role_only_where_allowed() {
        let mut case = Case::sample(
            "aaaaaaaaaaaa",
            crate::model::case::CaseState::Reported,
            chrono::Utc::now(),
        );
        case.author = Some("Filipe Manana <fdmanana@suse.com>".into());
        case.cc = vec!["David Sterba <dsterba@suse.com>".into()];
        let by_name = Policy {
            same_name: true,
            ..Policy::default()
        };
        for (p, author, maintainer) in [
            (&by_name, Role::Author, Role::Maintainer),
            (&Policy::default(), Role::Other, Role::Other),
        ] {
            let filipe = a("fdmanana@kernel.org");
            let david = a("dsterba@suse.cz");
            assert_eq!(
                role(Some(&filipe), "Filipe Manana", false, &case, p),
                author
            );
            assert_eq!(
                role(Some(&david), "David Sterba", false, &case, p),
                maintainer
            );
            assert_eq!(role(Some(&david), "Mallory", false, &case, p), Role::Other);
        }
        // The case keeps the author's bare address (as reports are read);
        // the report's To has the name that the match needs.
        case.author = Some("jeffxu@chromium.org".into());
        case.to = vec!["Jeff Xu <jeffxu@chromium.org>".into()];
        let jeff = a("jeffxu@google.com");
        assert_eq!(
            role(Some(&jeff), "Jeff Xu", false, &case, &by_name),
            Role::Author
        );
        assert_eq!(
            role(Some(&jeff), "Jeff Xu", false, &case, &Policy::default()),
            Role::Other
        );
    }

    proptest::proptest! {
        /// A mailbox made of a name's words, each whole or as its initial
        /// (one whole at least), in any order, with separators, spells it.
        #[test]
        fn a_mailbox_made_of_the_name_spells_it(
            words in proptest::collection::vec("[a-z]{2,8}", 2..=4),
            whole in proptest::collection::vec(proptest::bool::ANY, 4),
            order in proptest::strategy::Strategy::prop_shuffle(
                proptest::strategy::Just(vec![0usize, 1, 2, 3])
            ),
            sep in "[._-]?",
        ) {
            let order: Vec<usize> = order.into_iter().filter(|&i| i < words.len()).collect();
            let first_whole = order[0];
            let parts: Vec<String> = order
                .iter()
                .map(|&i| match whole[i] || i == first_whole {
                    true => words[i].clone(),
                    false => words[i][..1].to_string(),
                })
                .collect();
            proptest::prop_assert!(spells_name(&parts.join(&sep), &words));
        }

        /// Whatever the mailbox and the name, the answer comes at once, and
        /// a yes uses each of at most four words once, with one letter more.
        #[test]
        fn any_mailbox_and_name_is_answered(
            local in "[a-c._-]{0,60}",
            words in proptest::collection::vec("[a-c]{1,3}", 0..8),
        ) {
            if spells_name(&local, &words) {
                let letters = local.chars().filter(char::is_ascii_alphabetic).count();
                let most: usize = words.iter().map(String::len).sum::<usize>() + 1;
                proptest::prop_assert!((2..=4).contains(&words.len()));
                proptest::prop_assert!(letters <= most, "{local} {words:?}");
            }
        }
    }
}
