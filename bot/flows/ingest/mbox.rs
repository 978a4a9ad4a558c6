//! Splitting an mbox into its messages, without copying them.
//!
//! mail-parser has an mbox reader, but it reads line by line into a fresh
//! buffer per message: a third of `ingest --mbox`'s time went there. This one
//! reads the file in large chunks and hands out each message as a slice of the
//! chunk; only the rare message with `>From ` lines is copied, to undo the
//! mboxrd quoting (the same rule as mail-parser's reader: a line that starts
//! with `From ` begins a message; one `>` is taken off `>…>From ` lines).

use std::borrow::Cow;
use std::io::Read;

/// Bytes read per chunk (a message larger than this grows the buffer).
const CHUNK: usize = 256 << 10;

/// What an mbox holds, in order: messages, and those too large to read.
pub enum Item<'a> {
    Message(MboxMessage<'a>),
    /// A message larger than the cap given to `for_each`: its bytes were
    /// passed over, never held whole.
    TooLarge(TooLarge),
}

/// A message passed over for its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge {
    /// Where its `From ` line starts in the (decompressed) stream.
    pub offset: u64,
    /// Its size, `From ` line included.
    pub len: u64,
}

/// One message of an mbox, as stored: mboxrd quoting (`>From `) still in
/// place (`unquote` undoes it; routing never needs to, since headers cannot
/// start with `>`).
pub struct MboxMessage<'a> {
    /// The message, `From ` line removed.
    pub raw: &'a [u8],
    /// Where its `From ` line starts in the (decompressed) stream.
    pub offset: u64,
}

/// Undo mboxrd quoting: `>From ` → `From `, `>>From ` → `>From `, at line starts.
pub fn unquote(m: &[u8]) -> Cow<'_, [u8]> {
    let quoted = |line: &[u8]| {
        let n = line.iter().take_while(|&&c| c == b'>').count();
        n > 0 && line[n..].starts_with(b"From ")
    };
    let has = quoted(m) || memchr::memmem::find_iter(m, b"\n>").any(|i| quoted(&m[i + 1..]));
    if !has {
        return Cow::Borrowed(m);
    }
    let mut out = Vec::with_capacity(m.len());
    for line in m.split_inclusive(|&c| c == b'\n') {
        if quoted(line) {
            out.extend_from_slice(&line[1..]);
        } else {
            out.extend_from_slice(line);
        }
    }
    Cow::Owned(out)
}

/// Messages read ahead: `data` holds whole messages, each starting (with its
/// `From ` line) at one of `starts`, in order.
struct Batch {
    data: Vec<u8>,
    /// Start of each message in `data`.
    starts: Vec<usize>,
    /// Stream offset of `data[0]`.
    base: u64,
}

/// What the reader thread holds between reads: bytes read and not yet
/// handed on, and the message starts found in them.
struct Splitter {
    finder: memchr::memmem::Finder<'static>,
    data: Vec<u8>,
    /// Stream offset of `data[0]`.
    base: u64,
    /// How far `data` was searched for boundaries already.
    searched: usize,
    /// Start of each message found in `data` (the last one may be cut).
    starts: Vec<usize>,
    /// A message may grow to this many bytes before it is passed over.
    cap: usize,
    /// Passing over a message too large to hold: where it started. `data`
    /// then holds only the last few bytes read, where a boundary may start.
    skipping: Option<u64>,
}

/// Bytes kept from one read for the next, where `\nFrom ` may straddle them.
const STRADDLE: usize = 5;

impl Splitter {
    fn new(cap: usize) -> Splitter {
        Splitter {
            finder: memchr::memmem::Finder::new(b"\nFrom "),
            data: Vec::with_capacity(2 * CHUNK),
            base: 0,
            searched: 0,
            starts: Vec::new(),
            cap,
            skipping: None,
        }
    }

    /// Forget what is read before the last `keep` bytes.
    fn keep_last(&mut self, keep: usize) {
        let cut = self.data.len() - keep.min(self.data.len());
        self.base += cut as u64;
        self.data.drain(..cut);
        self.searched = 0;
    }

    /// The one message in `data`, not whole yet, is larger than the cap:
    /// pass over it, so that memory stays bounded by the cap, not by what
    /// the file holds.
    fn start_skipping(&mut self) {
        let start = self.starts.pop().expect("the message being read");
        self.skipping = Some(self.base + start as u64);
        self.keep_last(STRADDLE);
    }

    /// While passing over a message: the message, once the next one starts
    /// (`data` then starts with it) or the stream ends. `None` while it goes on.
    fn skip_to_next(&mut self, eof: bool) -> Option<TooLarge> {
        let offset = self.skipping?;
        let end = match self.finder.find(&self.data) {
            Some(i) => i + 1,
            None if eof => self.data.len(),
            None => {
                self.keep_last(STRADDLE);
                return None;
            }
        };
        self.keep_last(self.data.len() - end);
        if !self.data.is_empty() {
            self.starts.push(0);
        }
        self.skipping = None;
        Some(TooLarge {
            offset,
            len: self.base - offset,
        })
    }

    /// `data` starts the stream with a `From ` line. Only there does a
    /// `From ` need no newline before it: the bytes kept while looking for
    /// the first one start wherever the cut fell, mid-line.
    fn at_stream_start(&self) -> bool {
        self.base == 0 && self.data.starts_with(b"From ")
    }

    /// Find the first `From ` line: anything before it is not mail. False
    /// while there is none yet; then only a few bytes are kept, for a
    /// boundary may straddle reads.
    fn first_start(&mut self) -> bool {
        match (self.at_stream_start(), self.finder.find(&self.data)) {
            (true, _) => self.starts.push(0),
            (false, Some(i)) => self.starts.push(i + 1),
            (false, None) => {
                let keep = self.data.len().min(6);
                self.base += (self.data.len() - keep) as u64;
                self.data.drain(..self.data.len() - keep);
                return false;
            }
        }
        self.searched = self.starts[0];
        true
    }

    /// Find the starts in what was read since the last search.
    fn scan(&mut self, eof: bool) {
        while let Some(i) = self.finder.find(&self.data[self.searched + 1..]) {
            let at = self.searched + 1 + i + 1;
            self.starts.push(at);
            self.searched = at;
        }
        if !eof {
            // Search again from a little before the end next time: a
            // boundary may straddle this read and the next.
            self.searched = self
                .data
                .len()
                .saturating_sub(6)
                .max(*self.starts.last().expect("one start"));
        }
    }

    /// The whole messages as a batch; the last one, complete only at the
    /// end of the stream, is kept in `next` (a buffer given back), which
    /// becomes `data`.
    fn batch(&mut self, eof: bool, mut next: Vec<u8>) -> Batch {
        let cut = if eof {
            self.data.len()
        } else {
            *self.starts.last().expect("checked")
        };
        next.clear();
        next.reserve(2 * CHUNK);
        next.extend_from_slice(&self.data[cut..]);
        self.data.truncate(cut);
        let mut done = std::mem::take(&mut self.starts);
        if !eof {
            done.pop();
            self.starts.push(0);
            self.searched -= cut;
        }
        let batch = Batch {
            data: std::mem::replace(&mut self.data, next),
            starts: done,
            base: self.base,
        };
        self.base += cut as u64;
        batch
    }

    /// On a read error: the whole messages in `data` (each ends where the
    /// next starts) as a batch; the one the damage cut is lost with the rest
    /// of the stream. `None` when no message is whole.
    fn before_damage(&mut self) -> Option<Batch> {
        let first = match self.starts.first() {
            Some(&s) => s,
            None => self
                .at_stream_start()
                .then_some(0)
                .or_else(|| self.finder.find(&self.data).map(|i| i + 1))?,
        };
        let mut done = vec![first];
        let mut at = first;
        while let Some(i) = self.finder.find(&self.data[at + 1..]) {
            at = at + 1 + i + 1;
            done.push(at);
        }
        let cut = done.pop().expect("one start");
        if done.is_empty() {
            return None;
        }
        self.data.truncate(cut);
        Some(Batch {
            data: std::mem::take(&mut self.data),
            starts: done,
            base: self.base,
        })
    }
}

/// What the reading thread hands on.
enum Piece {
    Batch(Batch),
    TooLarge(TooLarge),
}

/// Read `r` on a thread of its own and cut it into batches of whole messages:
/// the kernel's copy, gzip's inflate and the search for `From ` lines all
/// happen there, beside the work on the batch before.
///
/// Buffers come back through `free` once their messages are handled, so the
/// same few are reused: memory stays flat however large the file.
fn reader<R: Read + Send + 'static>(
    mut r: R,
    cap: usize,
    free: std::sync::mpsc::Receiver<Vec<u8>>,
) -> std::sync::mpsc::Receiver<std::io::Result<Piece>> {
    let (tx, rx) = std::sync::mpsc::sync_channel(2);
    std::thread::Builder::new()
        .name("mbox-read".into())
        .spawn(move || {
            let mut s = Splitter::new(cap);
            loop {
                // `read_to_end` fills spare capacity without zeroing it first;
                // on an error, what it read before is in `data`.
                let read = (&mut r).take(CHUNK as u64).read_to_end(&mut s.data);
                if s.skipping.is_some() {
                    match s.skip_to_next(matches!(read, Ok(0))) {
                        Some(t) if tx.send(Ok(Piece::TooLarge(t))).is_err() => return,
                        Some(_) => {}
                        None if read.is_ok() => continue,
                        // Cut by the damage: lost with the rest.
                        None => {}
                    }
                }
                let eof = match read {
                    Ok(n) => n == 0,
                    Err(e) => {
                        // The whole messages before the damage still count.
                        if let Some(b) = s.skipping.is_none().then(|| s.before_damage()).flatten() {
                            let _ = tx.send(Ok(Piece::Batch(b)));
                        }
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                if s.starts.is_empty() && !s.first_start() {
                    if eof {
                        // No message: an empty batch says how far the
                        // stream went, all of it before any `From ` line.
                        let _ = tx.send(Ok(Piece::Batch(Batch {
                            base: s.base + s.data.len() as u64,
                            data: Vec::new(),
                            starts: Vec::new(),
                        })));
                        return;
                    }
                    continue;
                }
                s.scan(eof);
                if !eof && s.starts.len() < 2 {
                    // One message larger than a chunk: read on, or pass
                    // over it once it is larger than the cap.
                    if s.data.len() - s.starts[0] > s.cap {
                        s.start_skipping();
                    }
                    continue;
                }
                let batch = s.batch(eof, free.try_recv().unwrap_or_default());
                if tx.send(Ok(Piece::Batch(batch))).is_err() || eof {
                    return;
                }
            }
        })
        .expect("a thread to read ahead");
    rx
}

/// Call `f` with every message of the mbox read from `r`, in order; a
/// message over `cap` bytes (`From ` line included) is never held whole, and
/// comes as `Item::TooLarge`. Stops at the first error of `f` (returned as
/// is) or of the reader. Returns how many bytes came before the first
/// `From ` line: not mail, so not read (all of the stream when it has no
/// `From ` line at all).
pub fn for_each<R: Read + Send + 'static, E: From<std::io::Error>>(
    r: R,
    cap: usize,
    mut f: impl FnMut(Item<'_>) -> Result<(), E>,
) -> Result<u64, E> {
    let (give_back, free) = std::sync::mpsc::channel();
    let mut before_first = None;
    for piece in reader(r, cap, free) {
        let b = match piece? {
            Piece::Batch(b) => b,
            Piece::TooLarge(t) => {
                before_first.get_or_insert(t.offset);
                f(Item::TooLarge(t))?;
                continue;
            }
        };
        before_first.get_or_insert(b.base + b.starts.first().copied().unwrap_or(0) as u64);
        for (k, &start) in b.starts.iter().enumerate() {
            let end = b.starts.get(k + 1).copied().unwrap_or(b.data.len());
            let m = &b.data[start..end];
            let offset = b.base + start as u64;
            // One that grew past the cap within the last read is whole
            // here: over the cap all the same.
            if m.len() > cap {
                let len = m.len() as u64;
                f(Item::TooLarge(TooLarge { offset, len }))?;
                continue;
            }
            // The `From ` line is not part of the message.
            let body = memchr::memchr(b'\n', m).map_or(m.len(), |i| i + 1);
            f(Item::Message(MboxMessage {
                raw: &m[body..],
                offset,
            }))?;
        }
        let _ = give_back.send(b.data);
    }
    Ok(before_first.unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(data: &[u8], chunk_reader: bool) -> Vec<(Vec<u8>, u64)> {
        split_noting(data, chunk_reader).0
    }

    /// The messages, and the bytes before the first one.
    pub(super) fn split_noting(data: &[u8], chunk_reader: bool) -> (Vec<(Vec<u8>, u64)>, u64) {
        let mut out = Vec::new();
        let r: Box<dyn Read + Send> = if chunk_reader {
            // One byte per read, which the reader gathers into chunks all
            // the same (a read ends only at a chunk's size or the stream's
            // end): boundaries across reads need a stream over a chunk.
            struct Slow<'a>(&'a [u8]);
            impl Read for Slow<'_> {
                fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
                    if self.0.is_empty() || b.is_empty() {
                        return Ok(0);
                    }
                    b[0] = self.0[0];
                    self.0 = &self.0[1..];
                    Ok(1)
                }
            }
            Box::new(Slow(Box::leak(data.to_vec().into_boxed_slice())))
        } else {
            Box::new(std::io::Cursor::new(data.to_vec()))
        };
        let before = for_each::<_, std::io::Error>(r, usize::MAX, |m| {
            if let Item::Message(m) = m {
                out.push((unquote(m.raw).into_owned(), m.offset));
            }
            Ok(())
        })
        .unwrap();
        (out, before)
    }

    /// What comes before the first `From ` line is counted, never read as
    /// mail: a file with no `From ` line is all of it.
    #[test]
    fn bytes_before_the_first_message() {
        let long = "not mail\n".repeat(100_000);
        for (data, messages, before) in [
            ("", 0, 0),
            ("From a\nx\n", 1, 0),
            ("junk\nFrom a\nx\nFrom b\ny\n", 2, 5),
            ("root:x:0:0:root:/root:/bin/bash\n", 0, 32),
            ("Subject: one message\n\nno From line\n", 0, 35),
            // A `From ` mid-line is no message, where the search for the
            // first one keeps the last bytes read as well (found by
            // `any_bytes_are_accounted_for`).
            ("\0From \n", 0, 7),
            ("see From x", 0, 10),
            ("see From x\nFrom a\nx\n", 1, 11),
            (long.as_str(), 0, long.len() as u64),
        ] {
            for slow in [false, true] {
                if slow && data.len() > 1000 {
                    continue;
                }
                let (got, skipped) = split_noting(data.as_bytes(), slow);
                assert_eq!(
                    (got.len(), skipped),
                    (messages, before),
                    "{slow} {:.40}",
                    data
                );
            }
        }
        let mut big = long.clone();
        big.push_str("From a\nx\n");
        let (got, skipped) = split_noting(big.as_bytes(), false);
        assert_eq!((got.len(), skipped), (1, long.len() as u64));
    }

    /// What a read error leaves: the whole messages before the one it cut.
    #[test]
    fn whole_messages_before_damage() {
        let three = "From a\nx\nFrom b\ny\nFrom c\nz";
        let (b, c) = (three.find("From b").unwrap(), three.find("From c").unwrap());
        type Whole = Option<(Vec<usize>, usize)>;
        let table: [(&str, &[usize], Whole); 6] = [
            (three, &[], Some((vec![0, b], c))),
            // Searched already: the starts found count from the first.
            (three, &[b], Some((vec![b], c))),
            // Text before the first `From ` line is not mail.
            ("junk\nFrom a\nx\nFrom b\n", &[], Some((vec![5], 14))),
            // One message, cut: nothing whole.
            ("From a\nonly", &[], None),
            ("no mail here", &[], None),
            ("", &[], None),
        ];
        for (data, starts, want) in table {
            let mut s = Splitter::new(usize::MAX);
            s.data.extend_from_slice(data.as_bytes());
            s.starts.extend_from_slice(starts);
            // The batch is the whole messages, cut where the damaged one starts.
            let got = s.before_damage().map(|b| (b.starts, b.data.len()));
            assert_eq!(got, want, "{data:?} {starts:?}");
        }
    }

    #[test]
    fn messages_offsets_and_quoting() {
        let data = b"From a@b Mon Jan  1 00:00:00 2024\nSubject: one\n\nbody\n>From here\n>>From there\n\nFrom c@d Mon Jan  1 00:00:01 2024\nSubject: two\n\nFromage is not a From line\n";
        for slow in [false, true] {
            let got = split(data, slow);
            assert_eq!(got.len(), 2);
            assert_eq!(
                got[0].0,
                b"Subject: one\n\nbody\nFrom here\n>From there\n\n".to_vec()
            );
            assert_eq!(got[0].1, 0);
            assert_eq!(
                got[1].0,
                b"Subject: two\n\nFromage is not a From line\n".to_vec()
            );
            assert_eq!(got[1].1, 78);
        }
        assert!(split(b"", false).is_empty());
        assert!(split(b"no mbox at all\n", false).is_empty());
    }

    #[test]
    fn same_messages_as_mail_parser() {
        let mut data = Vec::new();
        // Messages of many sizes (one larger than a chunk) across ~13 MB, so
        // that boundaries fall everywhere relative to the reads.
        for i in 0..400 {
            let body = if i == 200 {
                "x".repeat(CHUNK + 12345)
            } else {
                "y".repeat((i * 7919) % 60_000)
            };
            data.extend_from_slice(
                format!(
                    "From x@y Mon Jan  1 00:00:00 2024\nMessage-ID: <{i}@x>\n\n{body}\n>From q\n\n"
                )
                .as_bytes(),
            );
        }
        for i in 0..50 {
            data.extend_from_slice(
                format!("From x@y Mon Jan  1 00:00:00 2024\nMessage-ID: <{i}@x>\n\nline {i}\n>From quoted\n\n").as_bytes(),
            );
        }
        let ours: Vec<Vec<u8>> = split(&data, false).into_iter().map(|(m, _)| m).collect();
        let theirs: Vec<Vec<u8>> =
            mail_parser::mailbox::mbox::MessageIterator::new(std::io::BufReader::new(&data[..]))
                .map(|m| m.unwrap().contents().to_vec())
                .collect();
        assert_eq!(ours, theirs);
    }
}

/// Messages over the cap, in every place relative to the reads and the
/// damage: the same items as an uncapped reading, with those over the cap
/// passed over, and never more held than the cap and a few reads.
#[cfg(test)]
mod cap_tests {
    use super::*;

    /// A stream that fails after `fail_at` bytes (if given).
    struct Damaged {
        data: Vec<u8>,
        at: usize,
        fail_at: Option<usize>,
    }

    impl Read for Damaged {
        fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
            let end = self.fail_at.unwrap_or(self.data.len()).min(self.data.len());
            if self.at == end && self.fail_at.is_some_and(|f| f <= self.data.len()) {
                return Err(std::io::Error::other("bad sector"));
            }
            let n = b.len().min(end - self.at);
            b[..n].copy_from_slice(&self.data[self.at..end][..n]);
            self.at += n;
            Ok(n)
        }
    }

    /// (offset, size with the `From ` line, body if read).
    type Seen = (u64, u64, Option<Vec<u8>>);

    /// What `for_each` hands on, and how it ended: the bytes before the
    /// first message, or the read error.
    fn read_all(
        data: &[u8],
        cap: usize,
        fail_at: Option<usize>,
    ) -> (Vec<Seen>, std::io::Result<u64>) {
        let mut seen = Vec::new();
        let r = Damaged {
            data: data.to_vec(),
            at: 0,
            fail_at,
        };
        let result = for_each::<_, std::io::Error>(r, cap, |item| {
            seen.push(match item {
                Item::Message(m) => (m.offset, 0, Some(m.raw.to_vec())),
                Item::TooLarge(t) => (t.offset, t.len, None),
            });
            Ok(())
        });
        (seen, result)
    }

    /// (offset, size with the `From ` line, body).
    type Part = (u64, u64, Vec<u8>);

    /// An mbox of messages with these body sizes; each message's offset
    /// and size (`From ` line included).
    fn mbox(bodies: &[usize]) -> (Vec<u8>, Vec<Part>) {
        let mut data = Vec::new();
        let mut parts = Vec::new();
        for (i, &n) in bodies.iter().enumerate() {
            let start = data.len();
            data.extend_from_slice(b"From x@y Mon Jan  1 00:00:00 2024\n");
            let body_at = data.len();
            data.extend_from_slice(format!("Message-ID: <{i}@x>\n\n").as_bytes());
            data.extend((0..n).map(|k| if k % 80 == 79 { b'\n' } else { b'x' }));
            data.push(b'\n');
            parts.push((
                start as u64,
                (data.len() - start) as u64,
                data[body_at..].to_vec(),
            ));
        }
        (data, parts)
    }

    fn check(bodies: &[usize], cap: usize, fail_at: Option<usize>) {
        let (data, parts) = mbox(bodies);
        let whole = |k: usize| match (fail_at, parts.get(k + 1)) {
            (None, _) => true,
            // A message is whole once the next one's `\nFrom ` was read.
            (Some(f), Some(next)) => next.0 as usize + 5 <= f,
            (Some(f), None) => f > data.len(),
        };
        let want: Vec<Seen> = parts
            .iter()
            .enumerate()
            .take_while(|(k, _)| whole(*k))
            .map(|(_, (offset, len, body))| {
                if *len as usize > cap {
                    (*offset, *len, None)
                } else {
                    (*offset, 0, Some(body.clone()))
                }
            })
            .collect();
        let (got, result) = read_all(&data, cap, fail_at);
        let failed = result.is_err();
        let summary = |v: &[Seen]| -> Vec<(u64, u64, Option<usize>)> {
            v.iter()
                .map(|(o, l, b)| (*o, *l, b.as_ref().map(Vec::len)))
                .collect()
        };
        assert_eq!(
            summary(&got),
            summary(&want),
            "bodies {bodies:?} cap {cap} fail at {fail_at:?}"
        );
        assert_eq!(got, want);
        assert_eq!(failed, fail_at.is_some_and(|f| f <= data.len()));
    }

    #[test]
    fn messages_over_the_cap_are_passed_over() {
        let big = 3 * CHUNK + 17;
        let table: &[(&[usize], usize)] = &[
            // Within one read: found over the cap once whole.
            (&[10, 500, 10], 300),
            // Larger than reads: passed over while read.
            (&[10, big, 10], CHUNK / 2),
            (&[big], CHUNK),
            (&[big, big, 5], 1000),
            (&[big, 5, big], big + 100),
            // Cap 0: every message over it.
            (&[1, big, 2], 0),
            // Exactly at the cap is read; a byte over, not.
            (&[0, CHUNK + 3], 34 + 19 + CHUNK + 3 + 1),
            (&[0, CHUNK + 3], 34 + 19 + CHUNK + 3),
        ];
        for &(bodies, cap) in table {
            check(bodies, cap, None);
        }
    }

    /// Any bytes: every byte of the stream is accounted for. Reading
    /// stops nowhere early; the bytes before the first message are the
    /// count returned; each message starts at a `From ` at a line start and
    /// runs to the next one (its `From ` line, then `raw` as a slice of the
    /// stream, then at most the newline before the next `From `), with no
    /// `From ` line start inside it; a message passed over spans exactly
    /// its bytes.
    fn accounts_for_every_byte(data: &[u8], cap: usize) {
        let (seen, result) = read_all(data, cap, None);
        let skipped = result.expect("an in-memory stream reads");
        let items: Vec<(usize, usize, Option<Vec<u8>>)> = seen
            .into_iter()
            .map(|(o, l, raw)| (o as usize, l as usize, raw))
            .collect();
        let starts: Vec<usize> = items.iter().map(|i| i.0).collect();
        let first = starts.first().copied().unwrap_or(data.len());
        assert_eq!(skipped as usize, first, "bytes before the first message");
        let line_start = |at: usize| at == 0 || data[at - 1] == b'\n';
        let is_from = |at: usize| line_start(at) && data[at..].starts_with(b"From ");
        assert!(!(0..first).any(is_from), "a message before the first one");
        for (k, (offset, len, raw)) in items.iter().enumerate() {
            let end = starts.get(k + 1).copied().unwrap_or(data.len());
            assert!(
                is_from(*offset),
                "item {k} at {offset} is no `From ` line start"
            );
            assert!(!(offset + 1..end).any(is_from), "a message inside item {k}");
            match raw {
                None => assert_eq!(offset + len, end, "item {k} passed over"),
                Some(raw) => {
                    assert!(end - offset <= cap, "item {k} over the cap read");
                    let from_line = data[*offset..end]
                        .iter()
                        .position(|&c| c == b'\n')
                        .map_or(end - offset, |i| i + 1);
                    let body = &data[offset + from_line..end];
                    assert!(body.starts_with(raw), "item {k}: raw is not its bytes");
                    assert!(body.len() - raw.len() <= 1, "item {k}: bytes left out");
                }
            }
        }
    }

    fn soup() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let piece = prop_oneof![
            Just(b"From x@y Mon Jan  1 00:00:00 2024\n".to_vec()),
            Just(b"From ".to_vec()),
            Just(b">From ".to_vec()),
            Just(b"From:".to_vec()),
            Just(b"\n".to_vec()),
            Just(b"\r\n".to_vec()),
            Just(b"\n\n".to_vec()),
            proptest::collection::vec(any::<u8>(), 0..40),
            (0usize..3000).prop_map(|n| vec![b'x'; n]),
            // Near a read's size: boundaries fall across two reads.
            (CHUNK - 40..CHUNK + 40).prop_map(|n| vec![b'x'; n]),
        ];
        proptest::collection::vec(piece, 0..30).prop_map(|v| v.concat())
    }

    /// mboxrd quoting as a writer does it: one more `>` on every line
    /// that starts with `>`s and `From `.
    fn quote(m: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for line in m.split_inclusive(|&c| c == b'\n') {
            let n = line.iter().take_while(|&&c| c == b'>').count();
            if line[n..].starts_with(b"From ") {
                out.push(b'>');
            }
            out.extend_from_slice(line);
        }
        out
    }

    proptest::proptest! {
        /// A message quoted as mboxrd writers quote it reads back as it was.
        #[test]
        fn quoting_is_undone(lines in proptest::collection::vec(
            "(>{0,3}From |>{1,2}|From|x|\\r)?[a-z ]{0,6}", 0..12)) {
            let m = lines.join("\n");
            let quoted = quote(m.as_bytes());
            proptest::prop_assert_eq!(&unquote(&quoted)[..], m.as_bytes());
        }

        /// Messages written to an mbox as mboxrd writers write them (a
        /// `From ` line, the quoted message, a blank line) come back one
        /// for one, each as it was written.
        #[test]
        fn messages_written_come_back(messages in proptest::collection::vec(
            proptest::collection::vec("(>{0,2}From |From|x)?[a-z ]{0,6}", 0..8), 0..6)) {
            let messages: Vec<String> = messages.iter().map(|l| l.join("\n")).collect();
            let mut file = Vec::new();
            for m in &messages {
                file.extend_from_slice(b"From x@y Mon Jan  1 00:00:00 2024\n");
                file.extend_from_slice(&quote(m.as_bytes()));
                file.extend_from_slice(b"\n");
            }
            let back: Vec<String> = super::tests::split_noting(&file, false)
                .0
                .into_iter()
                .map(|(m, _)| String::from_utf8(m).expect("utf-8"))
                .collect();
            let want: Vec<String> = messages.iter().map(|m| format!("{m}\n")).collect();
            proptest::prop_assert_eq!(back, want);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        #[test]
        fn any_bytes_are_accounted_for(
            data in soup(),
            cap in proptest::prop_oneof![0usize..4000, 0usize..(3 * CHUNK)],
        ) {
            accounts_for_every_byte(&data, cap);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        #[test]
        fn any_sizes_caps_and_damage(
            bodies in proptest::collection::vec(
                proptest::prop_oneof![0usize..2_000, 0usize..(3 * CHUNK)], 1..6),
            cap in proptest::prop_oneof![0usize..3_000, 0usize..(2 * CHUNK)],
            fail in proptest::option::of(0.0f64..1.0),
        ) {
            let total: usize = mbox(&bodies).0.len();
            check(&bodies, cap, fail.map(|f| (f * total as f64) as usize));
        }
    }
}
