#!/usr/bin/env python3
"""Damaged trace files for the reader tests: truncations, bit flips and crafted frames.
usage: mutate.py GOOD_FILE OUTDIR   (writes OUTDIR/<name>.rtrace, prints one name per line)"""
import os, random, struct, subprocess, sys

good, out = sys.argv[1], sys.argv[2]
data = open(good, 'rb').read()
rnd = random.Random(1234)
names = []

def put(name, b):
    with open(os.path.join(out, name + '.rtrace'), 'wb') as f:
        f.write(b)
    names.append(name)

def fnv1a(b):
    h = 2166136261
    for x in b:
        h ^= x
        h = (h * 16777619) & 0xffffffff
    return h

put('empty', b'')
put('magic-only', data[:8])
put('preamble-only', data[:16])
put('garbage', bytes(rnd.getrandbits(8) for _ in range(4096)))
put('text', b'hello, this is not a trace\n' * 10)
put('major2', data[:8] + struct.pack('<H', 2) + data[10:])
put('huge-header', data[:12] + struct.pack('<I', 0xfffffff0) + data[16:])
hdr_len = struct.unpack_from('<I', data, 12)[0]
first_frame = 16 + hdr_len
put('header-short', data[:16 + hdr_len // 2])
# frame header fields: magic, compressed, raw, checksum, seq
for name, off, val in [('frame-huge-compressed', 4, 0xfffffff0), ('frame-huge-raw', 8, 0xfffffff0),
                       ('frame-zero-raw', 8, 0), ('frame-raw-mismatch', 8, 24), ('frame-bad-magic', 0, 0x12345678)]:
    b = bytearray(data)
    struct.pack_into('<I', b, first_frame + off, val)
    put(name, bytes(b))
# truncations at spread-out points, never exactly at a frame boundary (that is a whole, shorter file)
boundaries, off = {first_frame}, first_frame
while off + 24 <= len(data):
    off += 24 + struct.unpack_from('<I', data, off + 4)[0]
    boundaries.add(off)
for i in range(24):
    cut = 1 + (len(data) - 2) * i // 23
    if cut in boundaries:
        cut -= 1
    put('trunc-%d' % cut, data[:cut])
# single bit flips
# (the header has no checksum: a flip there may be harmless, so those are named hflip-)
for i in range(60):
    pos = rnd.randrange(len(data))
    b = bytearray(data)
    b[pos] ^= 1 << rnd.randrange(8)
    put('%s-%d-%d' % ('hflip' if pos < first_frame else 'flip', i, pos), bytes(b))

# Crafted frames with valid checksums around hostile payloads.
def frame(payload, seq=0):
    z = subprocess.run(['zstd', '-q', '-c', '-'], input=payload, stdout=subprocess.PIPE, check=True).stdout
    return struct.pack('<IIIIQ', 0x52464d31, len(z), len(payload), fnv1a(z), seq) + z

def chunk(events, tid=7, flags=1, nbytes=None):
    return struct.pack('<IIII', 0x4b484331, tid, len(events) if nbytes is None else nbytes, flags) + events

def ev(kind, size, ts=1000, aux=0, body=b''):
    b = struct.pack('<QHHI', ts, kind, size, aux) + body
    return b + b'\0' * max(0, size - len(b))

pre = data[:first_frame]
STRING, MARK = 1, 9
put('craft-chunk-too-long', pre + frame(chunk(ev(MARK, 32), nbytes=4096)))
put('craft-chunk-odd', pre + frame(chunk(ev(MARK, 32), nbytes=20)[:36] + b'\0' * 4))
put('craft-event-size0', pre + frame(chunk(ev(MARK, 32)[:10] + b'\0\0' + ev(MARK, 32)[12:])))
put('craft-event-size-odd', pre + frame(chunk(ev(MARK, 12) + b'\0' * 20)))
put('craft-event-too-small', pre + frame(chunk(ev(MARK, 16))))
put('craft-string-len', pre + frame(chunk(ev(STRING, 32, body=struct.pack('<II', 5, 0xffffff)), tid=0)))
put('craft-string-id', pre + frame(chunk(ev(STRING, 32, body=struct.pack('<II', 0xfffffff0, 3) + b'abc'), tid=0)))
put('craft-flags', pre + frame(chunk(ev(MARK, 32), flags=0x80)))
put('craft-unknown-kind', pre + frame(chunk(ev(60000, 24) + ev(MARK, 32))))
put('craft-mark-bad-string', pre + frame(chunk(ev(MARK, 32, body=struct.pack('<QII', 1, 99999, 0)))))
put('craft-seq-gap', pre + frame(chunk(ev(MARK, 32)), seq=5))
for n in names:
    print(n)
