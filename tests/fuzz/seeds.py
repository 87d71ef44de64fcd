#!/usr/bin/env python3
"""Write the binary seed inputs of tests/fuzz/corpus/{mad,umad} (the text
seeds of topo/ and ctl/ are written by hand). Run from tests/fuzz/ after
changing a target's input format; the outputs are committed."""
import struct

def mad(cls, method, attr, mod=0, hops=0, path=(), version=1, tid=0x1234, data=b""):
    m = bytearray(256)
    m[0], m[1], m[2], m[3] = 1, cls, version, method
    m[7] = hops
    m[8:16] = struct.pack(">Q", tid)
    m[16:18] = struct.pack(">H", attr)
    m[20:24] = struct.pack(">I", mod)
    if cls == 0x81:
        m[32:36] = b"\xff\xff\xff\xff"
        for i, p in enumerate(path):
            m[128 + 1 + i] = p
    m[64:64 + len(data)] = data
    return bytes(m)

def umad_hdr(agent, timeout_ms, retries, lid, qpn=0, qkey=0):
    h = struct.pack("<IIIII", agent, 0, timeout_ms, retries, 0)
    h += struct.pack(">IIH", qpn, qkey, lid) + bytes(2 + 4 + 16)
    h += struct.pack(">I", 0) + struct.pack("<H", 0) + bytes(6)
    assert len(h) == 64
    return h

def reg_req(cls, version, rmpp=0, methods=0, qpn=0):
    return struct.pack("<I4I", 0, methods, 0, 0, 0) + bytes([qpn, cls, version, 0, 0, 0, rmpp])

def write(path, data):
    with open(path, "wb") as f:
        f.write(data)

# fuzz_mad: byte 0 picks the DLID (0 -> permissive, directed route).
write("corpus/mad/dr-nodeinfo", b"\x00" + mad(0x81, 1, 0x0011, hops=2, path=(1, 1)))
write("corpus/mad/lr-portinfo", b"\x01" + mad(0x01, 1, 0x0015, mod=1))
write("corpus/mad/dr-portinfo-set", b"\x00" + mad(0x81, 2, 0x0015, mod=1, hops=1, path=(1,)))
write("corpus/mad/pma-portcounters", b"\x02" + mad(0x04, 1, 0x0012, data=b"\x00\x01"))
write("corpus/mad/pma-bad-pkey", b"\x82" + mad(0x04, 1, 0x0012, data=b"\x00\x01"))

# fuzz_umad: ops (low 3 bits) on file (bit 3), with operands.
def op_write(hdr, payload, file=0):
    data = hdr + payload
    return bytes([3 | file << 3]) + struct.pack("<H", len(data)) + data

dr = mad(0x81, 1, 0x0011, hops=1, path=(1,))
seq = bytes([0]) + reg_req(0x81, 1)
seq += op_write(umad_hdr(0, 100, 1, 0xffff), dr)
seq += bytes([5, 10]) + bytes([4]) + struct.pack("<H", 320)
write("corpus/umad/dr-nodeinfo", seq)

sa = bytearray(mad(0x03, 0x12, 0x0011, version=2))  # SA GetTable NodeRecord
sa[36] = 1; sa[37] = 0x04 | 0x01  # RMPP version 1, active, DATA... left for the fuzzer
seq = bytes([0]) + reg_req(0x03, 2, rmpp=1)
seq += bytes([8]) + reg_req(0x03, 2, rmpp=1, methods=1 << 0x12)
seq += op_write(umad_hdr(0, 200, 2, 1, qpn=1, qkey=0x80010000), bytes(sa) + bytes(1000))
seq += bytes([5, 1]) + bytes([12]) + struct.pack("<H", 100) + bytes([12]) + struct.pack("<H", 2000)
write("corpus/umad/rmpp-loopback", seq)

seq = bytes([7, 7, 2 | 0x10]) + struct.pack("<I", 0) + bytes([6, 14])
write("corpus/umad/issm-close-reopen", seq)

# fuzz_fast: records of kind, 16-bit length, bytes (fuzz_fast.c).
def rec(kind, data=b""):
    return bytes([kind]) + struct.pack("<H", len(data)) + data

def req(op, arg=0, payload=b"", flags=0, tag=0):
    return struct.pack("=IIIIQ", 1, op, flags, tag, arg) + payload

OPEN, WRITE, IOCTL, SYNC, ATTACH, HOST, SYSLIST, SYSREAD, ADOPT, PING, SLOT, RING, CTL, PUSH = \
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14
REGISTER_AGENT, ENABLE_PKEY = 0xc01c1b01, 0x1b03
smp = umad_hdr(0, 100, 1, 0xffff) + mad(0x81, 1, 0x0011, hops=1, path=(1,))
seq = rec(0, req(OPEN, 2, b"umad0")) + rec(0, req(SLOT))
seq += rec(0, req(IOCTL, ENABLE_PKEY)) + rec(0, req(IOCTL, REGISTER_AGENT, reg_req(0x81, 1)))
seq += rec(0, req(WRITE, len(smp), smp, tag=7))
# The same write in the slot: req at 16, in_len at 40, in[] at 128.
seq += rec(4 | 8 | 16, struct.pack("<H", 16) + req(WRITE, len(smp)) + struct.pack("<I", len(smp)))
seq += rec(4, struct.pack("<H", 128) + smp)
seq += rec(1 | 2 << 3, req(ATTACH)) + rec(2) + rec(1 | 2 << 3, req(ATTACH))
seq += rec(3) + rec(1 | 0 << 3, req(WRITE, 500, flags=1)) + rec(0, req(PUSH)) + rec(5)
seq += rec(0, req(SYNC))
write("corpus/fast/umad-slot-attach", seq)

seq = rec(0, req(SYSLIST, 1)) + rec(0, req(SYSREAD, 0, b"infiniband/ibemu0/ports/1/state"))
seq += rec(2) + rec(0, req(OPEN, 2, b"infiniband_verbs/uverbs0/ibemu_cmd"))
seq += rec(2) + rec(0, req(OPEN, 0x800, b"issm0")) + rec(2) + rec(0, req(OPEN, 0x800, b"issm0"))
seq += rec(2) + rec(1 | 1 << 3, req(HOST, 0, b"x\0host2\0")) + rec(0, req(ADOPT))
seq += rec(1 | 3 << 3, req(ADOPT)) + rec(0, req(PING, 5)) + rec(0, req(CTL)) + rec(6)
write("corpus/fast/sysfs-issm-verbs-host", seq)

seq = rec(0, req(OPEN, 2, b"umad0")) + rec(0, req(SLOT)) + rec(7, b"\0\0")
seq += rec(4 | 8 | 16, struct.pack("<H", 16) + req(IOCTL, ENABLE_PKEY))
seq += rec(1 | 1 << 3, req(ATTACH)) + rec(1 | 1 << 3, req(WRITE, 10, flags=1))
write("corpus/fast/slot-shrunk-two-fds", seq)

# fuzz_verbs: op byte (low 3 bits the operation, bit 3 the context).
def qp(ctx, what, b0=0, b1=1, b2=1, b3=1):
    return bytes([0 | ctx << 3 | what << 4, b0, b1, b2, b3])

def pkt(ctx, opcode, dlid, payload=b"", two=False):
    pick = bytes([opcode, 2, dlid, 0, 0, 0, 1, 1])
    body = pick + struct.pack("<H", len(payload)) + struct.pack("<IIQ", 0, 0, 0) + payload
    return bytes([2 | ctx << 3 | (0x10 if two else 0)]) + body + (body if two else b"")

seq = qp(0, 0, b1=1) + qp(1, 0, b1=1) + qp(0, 1) + qp(1, 1)
for lid in range(1, 7):
    seq += pkt(0, 0x04, lid, b"hello")      # RC SEND ONLY to every LID
seq += bytes([3 | 1 << 3]) + struct.pack("<H", 8192) + bytes([4, 50])
seq += pkt(1, 0x11, 1) + bytes([4, 200]) + bytes([5]) + pkt(1, 0x04, 1, two=True)
write("corpus/verbs/rc-send-every-lid", seq)

seq = qp(0, 0, b1=2) + qp(1, 0, b1=2) + qp(0, 1, b2=1) + qp(1, 1, b2=1)
seq += pkt(0, 0x64, 3, bytes(64)) + bytes([3 | 1 << 3]) + struct.pack("<H", 100)
seq += bytes([6, 1]) + pkt(0, 0x64, 3) + bytes([6, 3]) + qp(0, 3, b2=0) + qp(1, 2)
seq += bytes([1]) + struct.pack("<H", 40) + struct.pack("<II", 0x49420001, 40) + bytes(32)
write("corpus/verbs/ud-cable-raw", seq)

# fuzz_mux: byte 0 (bit 0: the owner's side), then the stream.
def frame(kind, chan=0, data=b"", aux=0, fd=0, extra=b""):
    return struct.pack("<IIIBBH", chan, len(data), aux, kind, fd, 0) + data + extra

HELLO_F, MSG_F, CLOSE_F, ACK_F = 1, 2, 3, 4
hello = frame(HELLO_F, chan=0x01020304, aux=1)
seq = bytes([0]) + hello + frame(MSG_F, 0, req(PING, 0)) + frame(ACK_F, 0, aux=40)
seq += frame(MSG_F, 0, req(ADOPT), aux=5, fd=2)            # a new channel 5 (the owner's: odd)
seq += frame(MSG_F, 5, req(OPEN, 2, b"umad0")) + frame(MSG_F, 5, b"x" * 10, aux=3, fd=1, extra=b"abc")
seq += frame(MSG_F, 0, req(ATTACH), aux=5, fd=3) + frame(CLOSE_F, 5) + frame(CLOSE_F, 0)
write("corpus/mux/hello-new-memfd-close", seq)
seq = bytes([1]) + hello + frame(MSG_F, 0, bytes(100), aux=4, fd=2) + frame(MSG_F, 4, bytes(70000))
seq += frame(ACK_F, 4, aux=1 << 30) + frame(MSG_F, 9, b"?") + frame(7, 0)
write("corpus/mux/owner-side-odd-frames", seq)

# fuzz_ucma: op byte (low 3 bits the operation, bit 3 the file).
def ucmd(f, cmd, body, pick2=0, pick3=0, out=0xff):
    body = body.ljust(8, b"\0")
    return (bytes([1 | f << 3, cmd, out, pick2, pick3]) + struct.pack("<H", len(body) - 8) +
            body)

def create_id(f, ps=0x106, qpt=2):
    return ucmd(f, 0, struct.pack("<QQHB5x", 1, 1, ps, qpt))

# File 0 binds 10.1.0.3:7174 and listens; file 1 resolves it and routes.
bind = struct.pack("<IHH", 0, 16, 0) + bytes(128)            # BIND: id, size
seq = create_id(0) + ucmd(0, 20, bind, pick2=1, pick3=1 | 2 | (0 << 3))
seq += ucmd(0, 7, struct.pack("<II", 0, 4), pick2=1)           # LISTEN
res = struct.pack("<IIHHI", 0, 2000, 0, 16, 0) + bytes(256)   # RESOLVE_ADDR
seq += create_id(1) + ucmd(1, 21, res, pick2=1, pick3=1 | 2 | 4 | (0 << 3))
seq += bytes([2 | 1 << 3]) + struct.pack("<H", 400)            # ADDR_RESOLVED
seq += ucmd(1, 4, struct.pack("<II", 0, 1000), pick2=1)       # RESOLVE_ROUTE
seq += bytes([2 | 1 << 3]) + struct.pack("<H", 400) + bytes([4, 20, 6, 1, 5])
write("corpus/ucma/listen-resolve-route", seq)
