# The owner's side of verbs on an attached host, as a raw client of the
# fast path sees it (abi/fast_wire.h, socket/fastpath_verbs.h; run by
# many-hosts-verbs.sh with IBEMU_FAST set and this folder on PYTHONPATH).
# Attaches NODE, then prints "name: value" lines the test checks.
import os, socket, struct, sys
from fast_proto import REQ, OPEN, WRITE, IOCTL, ask, chan

HOST, ADOPT, SYSFS_LIST = 6, 9, 7
LIST_VERBS = 1


def ioc(direction, nr, size):   # the kernel's _IOC(): read 2, write 1
    return direction << 30 | size << 16 | 0xeb << 8 | nr


QP_CREATE = ioc(3, 1, 16)       # _IOWR, struct verbs_ioc_qp
UPCALL_DONE = ioc(1, 4, 8)      # _IOW, struct verbs_ioc_upcall_done
CMD = "infiniband_verbs/uverbs0/ibemu_cmd"


def ask_out(s, op, arg=0, payload=b""):
    s.send(struct.pack(REQ, 1, op, 0, 0, arg) + payload)
    msg = s.recv(65536 + 16)
    ret, out_len, _ = struct.unpack("=qII", msg[:16])
    return ret, msg[16:16 + out_len]


host = chan()
ret, out = ask_out(host, HOST, 0, b"proto\0" + sys.argv[1].encode() + b"\0")
print("attach:", ret, out.decode())


def adopted():
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    host.sendmsg([struct.pack(REQ, 1, ADOPT, 0, 0, 0)],
                 [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", theirs.fileno()))])
    theirs.close()
    ret = struct.unpack("=qII", host.recv(64)[:16])[0]
    assert ret == 0, ret
    return mine


ch = adopted()
for arg, name in ((0, "old"), (LIST_VERBS, "verbs")):
    ret, out = ask_out(ch, SYSFS_LIST, arg)
    lines = out.decode().splitlines()
    kinds = sorted(l for l in lines if l[0] in "ce")
    print(f"list {name}: ret {ret}, verbs class {'d infiniband_verbs' in lines}, files {kinds}")

v = adopted()
ret, data = ask(v, OPEN, os.O_RDWR, CMD.encode())
print("open cmd:", ret, "data socket" if data is not None else "no data socket")
ret, out = ask_out(v, IOCTL, QP_CREATE, struct.pack("=IIII", 0, 4, 0, 0))
qpn = struct.unpack("=IIII", out)[0] if len(out) == 16 else -1
print("qp create:", ret, "qpn >= 0x40" if qpn >= 0x40 else f"qpn {qpn}")
ret, _ = ask_out(v, WRITE, 16, struct.pack("=IIII", 17, 2, 0, 0))
print("comp channel command:", os.strerror(-ret) if ret < 0 else ret)
ret, _ = ask_out(v, IOCTL, UPCALL_DONE, bytes(8))   # the host's own
print("upcall done:", os.strerror(-ret) if ret < 0 else ret)
a = adopted()
ret, _ = ask(a, OPEN, os.O_RDONLY, b"infiniband_verbs/uverbs0/ibemu_device")
print("open attribute:", os.strerror(-ret) if ret < 0 else ret)
