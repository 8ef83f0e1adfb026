"""One PadLock instruction on your buffers, without an ELF: xcrypt, xsha, montmul, xstore.

Each function lays out the guide's memory formats in a :class:`Model`, sets the
registers, executes the instruction with the C++ model and returns what it produced.
A fault raises a :class:`PadlockFault`. Pass ``machine=`` to reuse a model across calls
(the ACE key cache, the RNG's accumulated bits and the clock persist in it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Union

from . import _core
from .cpus import CpuLike
from .errors import PadlockFault, raise_for_fault
from .model import Model

__all__ = [
    "XCRYPT_MODES",
    "XSHA_ALGORITHMS",
    "XcryptResult",
    "XshaResult",
    "MontmulResult",
    "XstoreResult",
    "xcrypt",
    "xsha",
    "montmul",
    "xstore",
]

# Names from the instruction table: "xcryptcbc" -> "cbc", "xsha256" -> "sha256".
XCRYPT_MODES: Dict[str, "_core.InsnId"] = {
    i.mnemonic[len("xcrypt"):]: i.id for i in _core.instructions() if i.unit == _core.Unit.Ace
}
XSHA_ALGORITHMS: Dict[str, "_core.InsnId"] = {
    i.mnemonic[len("x"):]: i.id for i in _core.instructions() if i.unit == _core.Unit.Phe
}

ControlWordLike = Union[int, bytes, "_core.ControlWord"]


@dataclass
class _Common:
    """Fields every result has."""

    cycles: int
    int_cycles: int
    status: "_core.Status"
    diagnostics: List[str]
    execution: "_core.Execution" = field(repr=False)
    machine: Model = field(repr=False)

    @property
    def completed(self) -> bool:
        """False when an interrupt stopped the instruction at an interruptible point (§1.7)."""
        return self.status == _core.Status.Completed


@dataclass
class XcryptResult(_Common):
    """Result of :func:`xcrypt`.

    ``output`` is the destination buffer (``len(data)`` bytes); ``iv`` the 16 bytes at the
    final EAX (the IV to continue with, §3.1 "Initialization vector pointer"), None for ECB;
    ``eax``..``edi`` the registers afterwards; ``layout`` the buffer addresses.
    """

    output: bytes = b""
    iv: Optional[bytes] = None
    eax: int = 0
    ecx: int = 0
    esi: int = 0
    edi: int = 0
    eflags30: bool = False
    key_reloaded: bool = False
    blocks: int = 0
    layout: Dict[str, int] = field(default_factory=dict)


@dataclass
class XshaResult(_Common):
    """Result of :func:`xsha`.

    ``state`` is the hash at ES:[EDI] as the little-endian 32-bit words the instruction
    stored; ``digest`` the FIPS 180-2 byte string (each word byte-swapped, §4.1).
    """

    digest: bytes = b""
    state: Sequence[int] = ()
    eax: int = 0
    ecx: int = 0
    esi: int = 0
    edi: int = 0
    eflags30: bool = False
    layout: Dict[str, int] = field(default_factory=dict)


@dataclass
class MontmulResult(_Common):
    """Result of :func:`montmul`.

    ``t`` is the T buffer as stored by REP MONTMUL: congruent to a*b*2^-bits mod m and
    not reduced below m (§5.1 notes: software does the final T - M).
    """

    t: int = 0
    eax: int = 0
    ecx: int = 0
    edx: int = 0
    layout: Dict[str, int] = field(default_factory=dict)


@dataclass
class XstoreResult(_Common):
    """Result of :func:`xstore`.

    ``data`` is the random bytes (EAX[4:0] of them for XSTORE, ``count`` for REP XSTORE);
    ``stored`` the whole buffer afterwards (untouched bytes keep ``fill``); ``eax`` the
    RNG status word; ``edi_advance`` how far EDI moved.
    """

    data: bytes = b""
    stored: bytes = b""
    eax: int = 0
    ecx: int = 0
    edi_advance: int = 0
    layout: Dict[str, int] = field(default_factory=dict)


def _machine(machine: Optional[Model], cpu: CpuLike, **kw: object) -> Model:
    return machine if machine is not None else Model(cpu, **kw)  # type: ignore[arg-type]


def _common(x: "_core.Execution", m: Model) -> Dict[str, object]:
    return dict(
        cycles=x.cycles,
        int_cycles=x.int_cycles,
        status=x.status,
        diagnostics=[d.name for d in x.diagnostics],
        execution=x,
        machine=m,
    )


def _control_word_bytes(cw: ControlWordLike) -> bytes:
    if isinstance(cw, _core.ControlWord):
        return cw.to_bytes()
    if isinstance(cw, (bytes, bytearray)):
        if len(cw) != 16:
            raise ValueError("a control word is 16 bytes (§3.2)")
        return bytes(cw)
    return _core.ControlWord(int(cw)).to_bytes()


def _execute(
    m: Model, insn: "_core.InsnId", addr_size: int, interrupt_at: Optional[int], layout: Dict[str, int]
) -> "_core.Execution":
    """Execute; a fault raises a PadlockFault carrying ``layout`` (the buffer addresses)."""
    if interrupt_at is not None:
        m.interrupt_at = m.now + interrupt_at
    try:
        x = m.execute(insn, addr_size)
    finally:
        if interrupt_at is not None:
            m.interrupt_at = None
    try:
        raise_for_fault(x, m.cpu.name)
    except PadlockFault as e:
        e.layout = layout
        raise
    return x


def xcrypt(
    mode: Union[str, "_core.InsnId"],
    control_word: ControlWordLike,
    key: bytes,
    iv: Optional[bytes],
    data: bytes,
    *,
    cpu: CpuLike = "esther",
    eflags30: bool = False,
    machine: Optional[Model] = None,
    blocks: Optional[int] = None,
    src_misalign: int = 0,
    dst_misalign: int = 0,
    in_place: bool = False,
    src_perm: int = _core.Perm.RW,
    dst_perm: int = _core.Perm.RW,
    addr_size: int = 0,
    interrupt_at: Optional[int] = None,
) -> XcryptResult:
    """Run one REP XCRYPT{ECB,CBC,CTR,CFB,OFB} on ``data`` (§3.1).

    Args:
        mode: "ecb", "cbc", "ctr", "cfb", "ofb" or an :class:`InsnId`.
        control_word: raw CW bits (int), a :class:`ControlWord`, or the 16 bytes at ES:[EDX].
            128 bytes are allocated there (the 112-byte scratch area of §3.2 ALIGN).
        key: the bytes at ES:[EBX]: a 16-byte key (KEYGN = 0) or the key followed by the
            expanded schedule (KEYGN = 1); the buffer is zero-padded to 256 bytes (§3.2).
        iv: the 16 bytes at ES:[EAX]; None for ECB (EAX = 0).
        data: the input at ES:[ESI]; ECX = ``len(data) // 16`` unless ``blocks`` is given.
        eflags30: EFLAGS[30] before the instruction (True: use the key already loaded in
            ``machine``, §1.8 - a stale key if it differs).
        machine: reuse this :class:`Model` (keeps the ACE key registers and EFLAGS state).
        src_misalign, dst_misalign: byte offsets from 16-byte alignment (§3.1 ALIGN tests).
        in_place: ESI == EDI.
        src_perm, dst_perm: page permissions of the input/output buffers (fault tests).
        addr_size: 16/32/64 effective address size (0: the mode's default).
        interrupt_at: an interrupt becomes pending this many cycles after the start (§1.7).

    Raises:
        PadlockFault: the instruction faulted (InvalidOpcode, GeneralProtection, PageFault).
    """
    insn = XCRYPT_MODES[mode.lower()] if isinstance(mode, str) else mode
    if _core.info(insn).unit != _core.Unit.Ace:
        raise ValueError(f"{mode!r} is not an XCRYPT mode; use one of {sorted(XCRYPT_MODES)}")
    m = _machine(machine, cpu)
    n = len(data) // 16 if blocks is None else blocks
    cw_addr = m.alloc(128, data=_control_word_bytes(control_word))
    key_addr = m.alloc(max(256, len(key)), data=bytes(key))
    iv_addr = m.alloc(16, data=bytes(iv)) if iv is not None else 0
    src = m.alloc(len(data), data=bytes(data), misalign=src_misalign, perm=src_perm)
    dst = src if in_place else m.alloc(len(data), misalign=dst_misalign, perm=dst_perm)
    m["rax" if m.bits == 64 else "eax"] = iv_addr
    m["ebx"], m["ecx"], m["edx"], m["esi"], m["edi"] = key_addr, n, cw_addr, src, dst
    m.eflags30 = eflags30
    layout = dict(control_word=cw_addr, key=key_addr, iv=iv_addr, src=src, dst=dst)
    x = _execute(m, insn, addr_size, interrupt_at, layout)
    eax = m["rax" if m.bits == 64 else "eax"]
    return XcryptResult(
        **_common(x, m),  # type: ignore[arg-type]
        output=m.read(dst, len(data)),
        iv=m.read(eax, 16) if iv is not None else None,
        eax=eax,
        ecx=m["ecx"],
        esi=m["rsi" if m.bits == 64 else "esi"],
        edi=m["rdi" if m.bits == 64 else "edi"],
        eflags30=m.eflags30,
        key_reloaded=x.key_reloaded,
        blocks=x.blocks,
        layout=layout,
    )


def xsha(
    algorithm: Union[str, "_core.InsnId"],
    data: bytes,
    *,
    cpu: CpuLike = "esther",
    machine: Optional[Model] = None,
    state: Optional[Sequence[int]] = None,
    eax: int = 0,
    count: Optional[int] = None,
    eflags30: bool = False,
    dst_misalign: int = 0,
    src_perm: int = _core.Perm.RW,
    addr_size: int = 0,
    interrupt_at: Optional[int] = None,
) -> XshaResult:
    """Run one REP XSHA1 or REP XSHA256 on ``data`` (§4.1).

    Args:
        algorithm: "sha1", "sha256" or an :class:`InsnId`.
        data: the bytes at ES:[ESI]; ECX = ``len(data)`` unless ``count`` is given (with
            ``eax=-1`` on Nano, ECX counts 64-byte blocks: pass ``count=len(data) // 64``).
        state: the words stored at ES:[EDI] before the instruction; default the FIPS 180-2
            initial hash values (``SHA_INITIAL_STATE``). 128 bytes are allocated (§4.1).
        eax: EAX (RAX in 64-bit mode) at the start: 0 per §4.1, or the restart state after
            an interrupt; -1 selects Nano's whole-blocks-without-padding form.
        eflags30: EFLAGS[30] before the instruction (REP XSHA clears it, §1.8).
        dst_misalign: offset of EDI from 16-byte alignment (§4.1 requires alignment: #GP).

    Raises:
        PadlockFault: the instruction faulted.
    """
    insn = XSHA_ALGORITHMS[algorithm.lower()] if isinstance(algorithm, str) else algorithm
    if _core.info(insn).unit != _core.Unit.Phe:
        raise ValueError(f"{algorithm!r} is not an XSHA algorithm; use one of {sorted(XSHA_ALGORITHMS)}")
    m = _machine(machine, cpu)
    words = list(_core.SHA_INITIAL_STATE[insn] if state is None else state)
    init = b"".join(w.to_bytes(4, "little") for w in words)
    hash_addr = m.alloc(128, data=init, misalign=dst_misalign)
    src = m.alloc(len(data), data=bytes(data), perm=src_perm)
    m["rax" if m.bits == 64 else "eax"] = eax & ((1 << m.bits) - 1)
    m["ecx"] = len(data) if count is None else count
    m["rsi" if m.bits == 64 else "esi"] = src
    m["rdi" if m.bits == 64 else "edi"] = hash_addr
    m.eflags30 = eflags30
    layout = dict(hash=hash_addr, src=src)
    x = _execute(m, insn, addr_size, interrupt_at, layout)
    raw = m.read(hash_addr, 4 * len(words))
    out = [int.from_bytes(raw[i : i + 4], "little") for i in range(0, len(raw), 4)]
    return XshaResult(
        **_common(x, m),  # type: ignore[arg-type]
        digest=b"".join(w.to_bytes(4, "big") for w in out),
        state=tuple(out),
        eax=m["rax" if m.bits == 64 else "eax"],
        ecx=m["ecx"],
        esi=m["rsi" if m.bits == 64 else "esi"],
        edi=m["rdi" if m.bits == 64 else "edi"],
        eflags30=m.eflags30,
        layout=layout,
    )


def montmul(
    a: int,
    b: int,
    m: int,
    bits: Optional[int] = None,
    *,
    cpu: CpuLike = "esther",
    machine: Optional[Model] = None,
    m_zero_prime: Optional[int] = None,
    eax: int = 0,
    addr_size: int = 0,
    interrupt_at: Optional[int] = None,
) -> MontmulResult:
    """Run one REP MONTMUL: T = a * b * 2^-bits (mod m), unreduced (§5.1).

    The Montgomery context (mZeroPrime, A, B, T, M, Scratch as 32-bit fields, §5.1) and the
    16-byte-aligned big integers are laid out in a 32-bit :class:`Model`; T gets the extra
    128 zero bits the guide requires.

    Args:
        a, b, m: the operands and the odd modulus, non-negative and below 2^bits.
        bits: ECX, the size of the big integers in bits; default: m's bit length rounded
            up to a multiple of 128, at least 256 (§5.1 valid range). Other values are
            passed through so the model's #GP rule can be tested.
        m_zero_prime: the context's mZeroPrime; default -m^-1 mod 2^32 (§6.4).
        eax: EAX at the start (0 per §5.1).

    Raises:
        PadlockFault: the instruction faulted.
    """
    if bits is None:
        bits = max(256, (m.bit_length() + 127) // 128 * 128)
    for name, v in (("a", a), ("b", b), ("m", m)):
        if v < 0 or v >> max(bits, 0):
            raise ValueError(f"{name} must be in [0, 2^{bits})")
    if m_zero_prime is None:
        if m % 2 == 0:
            raise ValueError("the modulus must be odd (mZeroPrime = -m^-1 mod 2^32, §6.4)")
        m_zero_prime = -pow(m, -1, 1 << 32) % (1 << 32)
    mm = _machine(machine, cpu)
    if mm.bits != 32:
        raise NotImplementedError("montmul() lays out the 32-bit Montgomery context; use a 32-bit Model")
    nbytes = max(bits, 0) // 8
    big = lambda v, extra=0: v.to_bytes(nbytes + extra, "little")  # noqa: E731
    a_addr = mm.alloc(nbytes, data=big(a))
    b_addr = mm.alloc(nbytes, data=big(b))
    t_addr = mm.alloc(nbytes + 16)  # §5.1: T needs 128 extra bits of zeroes
    m_addr = mm.alloc(nbytes, data=big(m))
    scratch = mm.alloc(32)
    ctx = b"".join(v.to_bytes(4, "little") for v in (m_zero_prime, a_addr, b_addr, t_addr, m_addr, scratch))
    ctx_addr = mm.alloc(len(ctx), data=ctx, align=4)
    mm["eax"], mm["ecx"], mm["esi"] = eax, bits, ctx_addr
    layout = dict(context=ctx_addr, a=a_addr, b=b_addr, t=t_addr, m=m_addr, scratch=scratch)
    x = _execute(mm, _core.InsnId.Montmul, addr_size, interrupt_at, layout)
    return MontmulResult(
        **_common(x, mm),  # type: ignore[arg-type]
        t=int.from_bytes(mm.read(t_addr, nbytes + 16), "little"),
        eax=mm["eax"],
        ecx=mm["ecx"],
        edx=mm["edx"],
        layout=layout,
    )


def xstore(
    edx: int = 0,
    *,
    count: Optional[int] = None,
    cpu: CpuLike = "esther",
    machine: Optional[Model] = None,
    seed: int = 0,
    wait_cycles: int = 1_000_000,
    msr: Optional[int] = None,
    fill: int = 0xCC,
    addr_size: int = 0,
    interrupt_at: Optional[int] = None,
) -> XstoreResult:
    """Run XSTORE (``count`` None) or REP XSTORE with ECX = ``count`` (§2.1).

    Args:
        edx: the quality factor; only EDX[1:0] are meaningful (§2.1).
        count: ECX for REP XSTORE; None runs plain XSTORE.
        seed: RNG seed of a new model (ignored with ``machine``).
        wait_cycles: advance the virtual clock by this much first so the RNG has accumulated
            bits (0: run at the current clock; a fresh model starts with empty buffers).
        msr: write this value to MSR 0x110B first (§2.2).
        fill: byte the buffer holds before the instruction, to see which bytes were stored.
            The buffer has ``count + 8`` bytes (REP XSTORE may store up to 7 beyond, §2.1).

    Raises:
        PadlockFault: the instruction faulted.
    """
    m = _machine(machine, cpu, seed=seed)
    if msr is not None and not m.wrmsr(_core.MSR_RNG, msr):
        raise ValueError(f"{m.cpu.name} has no MSR 0x{_core.MSR_RNG:x}")
    m.advance(wait_cycles)
    size = (count or 0) + 8
    buf = m.alloc(size, fill=fill, align=4)
    insn = _core.InsnId.Xstore if count is None else _core.InsnId.RepXstore
    m["edx"] = edx
    m["rdi" if m.bits == 64 else "edi"] = buf
    if count is not None:
        m["ecx"] = count
    x = _execute(m, insn, addr_size, interrupt_at, dict(buffer=buf))
    advance = m["rdi" if m.bits == 64 else "edi"] - buf
    stored = m.read(buf, size)
    return XstoreResult(
        **_common(x, m),  # type: ignore[arg-type]
        data=stored[:advance],
        stored=stored,
        eax=m["eax"],
        ecx=m["ecx"],
        edi_advance=advance,
        layout=dict(buffer=buf),
    )
