# A hostile sender of the direct path (tests/e2e/verbs-direct.sh): it
# takes a grant, then writes what it likes over the words the daemon
# writes in its sub-ring (abi/verbs_ring.h: grant at 136, closed at 140,
# limit at 144 of the header of a memfd of its own, which the grant's
# answer passes), as one stopped in the middle of a write would leave
# them or worse. The daemon waits for no sender: control commands go on,
# and the sender is given a grant again (once the receiver has read its
# ring, as a receiver does).
# Run inside `ibemu run -c -a host1 -a host3` with this folder on
# PYTHONPATH.
import mmap, os, struct, subprocess
from fast_proto import IOCTL, OPEN, RING_ASK, VDIRECT, VRING, ask, call, chan

QP_CREATE = (3 << 30) | (16 << 16) | (0xeb << 8) | 1
a, b = chan(), chan()
ask(a, OPEN, 2, b"infiniband_verbs/uverbs0/ibemu_cmd")
ask(b, OPEN, 2, b"infiniband_verbs/uverbs1/ibemu_cmd")
ret, rfd = ask(b, VRING, RING_ASK | 1)   # b takes the direct path's packets
ring = mmap.mmap(rfd, os.fstat(rfd).st_size)
ret, out, _ = call(a, IOCTL, QP_CREATE, struct.pack("=IIII", 0, 2, 0, 0))
sqpn = struct.unpack("=I", out[:4])[0]
ret, out, _ = call(b, IOCTL, QP_CREATE, struct.pack("=IIII", 0, 2, 0, 0))
dqpn = struct.unpack("=I", out[:4])[0]
dlid = int(open("/sys/class/infiniband/ibemu1/ports/1/lid").read(), 16)
pkt = bytearray(128)
struct.pack_into("=BBBB", pkt, 8, 1, 0, 4, 0)      # port 1, SL 0, SEND ONLY
struct.pack_into("=HH", pkt, 12, 0, dlid)
struct.pack_into("=II", pkt, 20, sqpn, dqpn)
ret, g, memfd = call(a, VDIRECT, 0, bytes(pkt))
print("stuck: grant %d" % ret)
try:
    os.ftruncate(memfd, 0)
    print("stuck: sub-ring shrink: done")
except OSError as e:
    print("stuck: sub-ring shrink: %s" % os.strerror(e.errno))
m = mmap.mmap(memfd, os.fstat(memfd).st_size)
struct.pack_into("=IIIIQ", m, 128, 1, 0, 0x5eed, 0, 0)  # sleeping, want_room, grant, closed, limit
for i in range(3):
    subprocess.run(["ibemu", "ctl", "status"], capture_output=True)
struct.pack_into("=Q", ring, 64, struct.unpack_from("=Q", ring, 0)[0])  # b read its ring
print("stuck: again %d" % call(a, VDIRECT, 0, bytes(pkt))[0])
print("stuck: ctl rc %d" % subprocess.run(["ibemu", "ctl", "status"], capture_output=True).returncode)
