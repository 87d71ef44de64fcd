# The fast path's channel as a raw client sees it (abi/fast_wire.h), for
# the tests that speak the protocol itself (fast-path.sh, fast-slot.sh):
# they run `python3` with this folder on PYTHONPATH.
import array, os, re, socket, struct

REQ = "=IIIIQ"          # struct fast_req

# The ops, from abi/fast_wire.h's enum fast_op itself: FAST_OPEN = 1 is
# OPEN here, and so on (a renumbering there cannot leave the tests behind).
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "abi",
                       "fast_wire.h")) as _h:
    _text = _h.read()
    for _name, _value in re.findall(r"^\s*FAST_([A-Z_]+)\s*=\s*(\d+),", _text, re.M):
        globals()[_name] = int(_value)
    VERSION = int(re.search(r"^#define FAST_VERSION\s+(\d+)", _text, re.M).group(1))
# FAST_VRING's arg: the ring's version (abi/verbs_ring.h) and bit 0 (the
# direct path's packets too).
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "abi",
                       "verbs_ring.h")) as _h:
    RING_ASK = int(re.search(r"^#define VERBS_RING_VERSION\s+(\d+)", _h.read(), re.M).group(1)) << 8
for _need in ("OPEN", "WRITE", "IOCTL", "SYNC", "ATTACH", "HOST", "ADOPT", "SLOT", "RING", "PUSH"):
    assert _need in globals(), "abi/fast_wire.h has no FAST_" + _need


def chan():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(os.environ["IBEMU_FAST"])
    return s


def call(s, op, arg=0, payload=b"", version=VERSION):
    """One request and its answer: (ret, its out bytes, the fd passed back
    or None)."""
    s.send(struct.pack(REQ, version, op, 0, 0, arg) + payload)
    msg, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(4))
    ret, out_len, _ = struct.unpack("=qII", msg[:16])
    fds = array.array("i")
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[:4])
    return ret, msg[16:16 + out_len], (fds[0] if fds else None)


def ask(s, op, arg=0, payload=b"", version=VERSION):
    """One request and its answer: (ret, the fd passed back or None)."""
    ret, _, fd = call(s, op, arg, payload, version)
    return ret, fd


def attach(fd):
    """FAST_ATTACH of @fd on a new channel: (channel, ret, device name)."""
    s = chan()
    anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))]
    s.sendmsg([struct.pack(REQ, 1, ATTACH, 0, 0, 0)], anc)
    msg = s.recv(4096)
    ret, out_len, _ = struct.unpack("=qII", msg[:16])
    return s, ret, msg[16:16 + out_len].decode()
