#!/usr/bin/env python3
"""The tool a user would reach for instead of perfbot's maildir follower:
Python's `mailbox.Maildir`, picking up the new mail of a maildir -- every
message of it, those in new/ kept (MaildirMessage.get_subdir).

    perfbot bench --what maildir --count 20000 --maildir /tmp/md
    python3 benches/python_maildir.py /tmp/md [ROUNDS]

Prints the time of one such round. Used for the side-by-side figure in
BENCHMARKS.md.
"""
import mailbox, sys, time
md = mailbox.Maildir(sys.argv[1], create=False)
times = []
for r in range(int(sys.argv[2]) if len(sys.argv) > 2 else 5):
    t = time.perf_counter()
    new = [m for m in md if m.get_subdir() == "new"]
    times.append((time.perf_counter() - t) * 1e3)
times.sort()
print(f"python mailbox.Maildir, {len(md)} messages, {len(new)} new: median {times[len(times)//2]:.1f} ms (least {times[0]:.1f}, most {times[-1]:.1f})")
