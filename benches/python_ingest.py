#!/usr/bin/env python3
"""The tool a user would reach for instead of `perfbot ingest --mbox`: Python's
`mailbox` and `email` modules, doing the same job on the same mbox -- read every
message, take its Message-ID, In-Reply-To, References and Subject, and keep
those that belong to a known thread (whose Message-IDs are given).

    python3 benches/python_ingest.py MBOX KNOWN_ID...

Prints messages read, matched, and MB/s. Used for the side-by-side figure in
BENCHMARKS.md (`perfbot bench --what ingest --mbox MBOX` writes the mbox).
"""
import email.policy
import mailbox
import os
import sys
import time


def ids(value):
    return {p.strip("<>") for p in str(value or "").split() if "@" in p}


def main():
    path, known = sys.argv[1], set(sys.argv[2:])
    size = os.path.getsize(path)
    t0 = time.perf_counter()
    read = matched = 0
    # The stdlib's fast path: headers parsed with the compat32 policy.
    box = mailbox.mbox(path, factory=None, create=False)
    for key in box.iterkeys():
        msg = box.get_message(key)
        read += 1
        mid = ids(msg.get("Message-ID"))
        refs = ids(msg.get("In-Reply-To")) | ids(msg.get("References"))
        subject = str(msg.get("Subject") or "")
        if mid & known or refs & known:
            matched += 1
            known |= mid
            msg.get_payload(decode=True)
        del subject
    took = time.perf_counter() - t0
    print(f"python mailbox+email: read {read}, matched {matched}, "
          f"{took:.2f} s, {size / 1e6 / took:.1f} MB/s")


if __name__ == "__main__":
    main()
