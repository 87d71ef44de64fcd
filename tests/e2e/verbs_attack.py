# A hostile sender of the direct path (tests/e2e/verbs-hostile.sh), as a
# program could be: it speaks the fast path's protocol itself
# (abi/fast_wire.h), takes a grant to send to the victim's UD QP, maps
# every piece of memory it is given, and writes records into all of it:
#
# phase 1: packets with another source QP, a wrong Q_Key, a forged SLID;
#          CREDIT and INBOX records; counters raised by 2^40 where they
#          once were; "MARK1", then an UPCALL record pointing at address
#          0x10; packets and an UPCALL in every other sub-ring it can
#          reach.
# phase 2 (once $W/go2 exists: the test took the link down): a packet
#          of its own, "AFTER-DOWN", where its grant was.
# phase 3 (once $W/go3 exists: the link is back): "SYNC" and "STOP"
#          through the daemon, which the victim takes after everything
#          it was going to take from memory (verbs/fastchan.c's order).
#
# Run inside `ibemu run -c -a host1 -a host3` with this folder on
# PYTHONPATH: verbs_attack.py VICTIM_LID VICTIM_QPN GRANT_SECONDS (how
# long it asks for a grant; without one it sends "STOP" and ends).
# Layouts: struct verbs_wire_pkt is 128 bytes (abi/verbs_wire.h: sl at 9,
# slid 12, dlid 14, sqpn 20, dqpn 24, qkey 32, len 124); a sub-ring's head
# is at 0, its data at 4096 (abi/verbs_ring.h). Before the sub-rings had
# memfds of their own, one memfd held 8 of them after a 4096-byte header,
# each with its packets and dwords counts at 136 and 144: both are tried.
import mmap, os, struct, sys, time
from fast_proto import IOCTL, OPEN, VDIRECT, VINBOX, WRITE, ask, call, chan

MAGIC = 0x49420000
PKT, UPCALL, CREDIT, PAD, INBOX = (MAGIC | n for n in (1, 2, 4, 5, 6))
QKEY = 0x11111111
QP_CREATE = (3 << 30) | (16 << 16) | (0xeb << 8) | 1
QP_SET = (1 << 30) | (16 << 16) | (0xeb << 8) | 2
SUB_DATA = 1 << 18

vlid, vqpn, grant_seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
W = os.environ["W"]



def say(text):
    print("attack: " + text, flush=True)


def wait_file(name, seconds=60):
    until = time.monotonic() + seconds
    while not os.path.exists(os.path.join(W, name)):
        if time.monotonic() > until:
            say("no " + name)
            sys.exit(1)
        time.sleep(0.01)


a = chan()
ask(a, OPEN, 2, b"infiniband_verbs/uverbs0/ibemu_cmd")
ret, out, _ = call(a, IOCTL, QP_CREATE, struct.pack("=IIII", 0, 4, 0, 0))
sqpn = struct.unpack("=I", out[:4])[0]
call(a, IOCTL, QP_SET, struct.pack("=IIII", sqpn, 0, QKEY, 1))


def pkt(text, qpn=sqpn, slid=0, qkey=QKEY):
    b = bytearray(128 + len(text))
    struct.pack_into("=II", b, 0, PKT, len(b))
    struct.pack_into("=BBBB", b, 8, 1, 0, 0x64, 0)     # port 1, SL 0, UD SEND ONLY
    struct.pack_into("=HH", b, 12, slid, vlid)
    struct.pack_into("=II", b, 20, qpn, vqpn)
    struct.pack_into("=I", b, 32, qkey)
    struct.pack_into("=I", b, 124, len(text))
    b[128:] = text
    return bytes(b)


hdr = pkt(b"")
until = time.monotonic() + grant_seconds
while True:
    ret, g, fd = call(a, VDIRECT, 0, hdr)
    if ret == 0:
        break
    if fd is not None:
        os.close(fd)
    if time.monotonic() > until:
        say("no grant (%d)" % ret)
        r = pkt(b"STOP")
        say("STOP through the daemon: %d" % ask(a, WRITE, len(r), r)[0])
        sys.exit(0)
    time.sleep(0.005)
peer = struct.unpack("=Q", g[:8])[0]
say("grant")

subs = []           # (mapping, offset of a sub-ring, ours)
if fd is not None:
    m = mmap.mmap(fd, os.fstat(fd).st_size)
    subs.append((m, 0, True))
ret, whole = ask(a, VINBOX, 0, struct.pack("=Q", peer))
if ret == 0 and whole is not None:
    m = mmap.mmap(whole, os.fstat(whole).st_size)
    struct.pack_into("=I", m, 4, 0xff)                 # every sub-ring "active"
    our = g[12] if len(g) > 12 else 0
    for i in range(8):
        subs.append((m, 4096 + i * (4096 + SUB_DATA), i == our))
say("mapped %d sub-rings" % len(subs))


def write(m, base, records):
    head = struct.unpack_from("=Q", m, base)[0]
    for r in records:
        at = head % SUB_DATA
        if at + len(r) > SUB_DATA:
            return
        m[base + 4096 + at:base + 4096 + at + len(r)] = r
        head += len(r)
    struct.pack_into("=Q", m, base, head)


upcall = struct.pack("=IIIIQ", UPCALL, 24, 1, 17, 0x10)
credit = struct.pack("=II", CREDIT, 8)
inbox = struct.pack("=II", INBOX, 8)
for m, base, ours in subs:
    for off in (136, 144):                             # counts, where they were
        struct.pack_into("=Q", m, base + off, struct.unpack_from("=Q", m, base + off)[0] + (1 << 40))
    if ours:
        write(m, base, [pkt(b"FORGED-QP", qpn=0xabcde), pkt(b"FORGED-QKEY", qkey=0x2222),
                        pkt(b"OWN-SLID", slid=0x999), credit, inbox, pkt(b"MARK1"), upcall])
    else:
        write(m, base, [pkt(b"OTHER-SUB", qpn=0x54321), upcall])
ret, bell = ask(a, VINBOX, 1, struct.pack("=QIB3x", peer, 0, 0))
if bell is not None:
    os.write(bell, struct.pack("=Q", 1))
say("phase 1 written")

wait_file("go2")
for m, base, ours in subs:
    if ours:
        write(m, base, [pkt(b"AFTER-DOWN")])
if bell is not None:
    os.write(bell, struct.pack("=Q", 1))
say("phase 2 written")

wait_file("go3")
for text in (b"SYNC", b"STOP"):
    r = pkt(text)
    say("%s through the daemon: %d" % (text.decode(), ask(a, WRITE, len(r), r)[0]))
