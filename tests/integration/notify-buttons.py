#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# notify-buttons.py COUNT < IMAGE.ppm - where a notification server drew a
# row of COUNT buttons: prints "X Y" for each button's centre, left to
# right, in the image's pixels; exits 1 if there is no such row.
#
# A screenshot of the notification's window is what a person sees: its
# background is its most common colour, and a button is a run of at least
# MIN_WIDTH pixels that are not background (its own fill, its frame and its
# label), separated from the next by background.  Text and the icon make
# shorter runs.  The row is the tallest band of consecutive pixel rows that
# each hold exactly COUNT such runs, and the centre of its middle row is
# where to click.
import sys
from collections import Counter

MIN_WIDTH = 60
MIN_HEIGHT = 10


def read_ppm(data):
    """An 8-bit binary PPM (P6): width, height, RGB bytes."""
    fields, pos = [], 0
    while len(fields) < 4:
        if pos >= len(data):
            raise ValueError("not a PPM image (cut short)")
        if data[pos:pos + 1].isspace():
            pos += 1
        elif data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos) + 1
        else:
            end = pos
            while end < len(data) and not data[end:end + 1].isspace():
                end += 1
            fields.append(data[pos:end])
            pos = end
    if fields[0] != b"P6" or fields[3] != b"255":
        raise ValueError("not an 8-bit P6 image (import it with -depth 8)")
    w, h = int(fields[1]), int(fields[2])
    px = data[pos + 1:pos + 1 + 3 * w * h]
    if len(px) != 3 * w * h:
        raise ValueError("not a PPM image (cut short)")
    return w, h, px


def runs(row, w, bg):
    out, start = [], None
    pixels = list(zip(row[0::3], row[1::3], row[2::3])) + [bg]
    for x in range(w + 1):
        other = pixels[x] != bg
        if other and start is None:
            start = x
        elif not other and start is not None:
            if x - start >= MIN_WIDTH:
                out.append((start, x))
            start = None
    return out


def main():
    want = int(sys.argv[1])
    try:
        w, h, px = read_ppm(sys.stdin.buffer.read())
    except ValueError as e:
        sys.exit("notify-buttons: %s" % e)
    rows = [px[3 * w * y:3 * w * (y + 1)] for y in range(h)]
    bg = Counter(p for r in rows[::2] for p in zip(r[0::6], r[1::6], r[2::6])).most_common(1)[0][0]
    found = [runs(r, w, bg) for r in rows]
    best, start = None, None
    for y in range(h + 1):
        if y < h and len(found[y]) == want:
            start = y if start is None else start
            continue
        if start is not None and (best is None or y - start > best[1] - best[0]):
            best = (start, y)
        start = None
    if best is None or best[1] - best[0] < MIN_HEIGHT:
        sys.exit("notify-buttons: no row of %d buttons" % want)
    mid = (best[0] + best[1]) // 2
    for a, b in found[mid]:
        print((a + b) // 2, mid)


main()
