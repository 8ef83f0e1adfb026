"""guest_segv_xcrypt: a page fault in the middle of REP XCRYPTCBC, observed by a SIGSEGV
handler (SA_SIGINFO) and then resumed (§1.7, §3.1).

§1.7: the registers are not changed until the store that completes a step, so at the
fault they describe exactly the blocks stored: ECX = blocks left, ESI and EDI advanced
by 16 per stored block, and EAX / the IV memory set up "so that it is the right IV for
the following iteration" (§3.1 EAX table: CBC encryption changes EAX itself, CBC
decryption changes the value EAX points to). The fault stores EFLAGS, which clears bit
30 (§1.8). The handler maps the page back and returns; the re-issued instruction must
finish the job with the correct ciphertext. The expected data comes from aes_ref."""

from __future__ import annotations

import signal

import pytest

import aes_ref
from guestrun import kv

SEGV_MAPERR, SEGV_ACCERR = 1, 2
REP_XCRYPTCBC = "f30fa7d0"
# Blocks of input REP XCRYPTCBC fetches at once. Nano reads 64 bytes ahead (OpenSSL
# e_padlock-x86_64.pl PADLOCK_PREFETCH{cbc} = 64; Linux padlock-aes.c cbc_fetch_blocks = 4
# on Nano), so a missing input page faults while the blocks before it are still unstored.
CBC_FETCH_BLOCKS = {"nano": 4}


@pytest.mark.parametrize("direction", ["enc", "dec"])
@pytest.mark.parametrize("how", ["unmap", "prot"])
@pytest.mark.parametrize("where", ["in", "out"])
def test_fault_inside_rep_xcrypt(runner, target, where, how, direction):
    out = kv(runner.run("segv_xcrypt", target, [where, how, direction]).stdout)
    key, iv, data = (bytes.fromhex(out[k]) for k in ("key", "iv", "in"))
    blocks, mapped = int(out["blocks"]), int(out["mapped_blocks"])
    decrypt = direction == "dec"
    expected = aes_ref.cbc(key, iv, data, decrypt=decrypt)

    # The fault: one SIGSEGV at the first byte of the missing page.
    assert out["faults"] == "1"
    assert int(out["fault_signo"]) == signal.SIGSEGV
    assert int(out["fault_code"]) == (SEGV_MAPERR if how == "unmap" else SEGV_ACCERR)
    assert int(out["fault_addr_off"]) == 0
    assert out["fault_insn"] == REP_XCRYPTCBC  # the PC stays on the instruction
    assert out["fault_eflags30"] == "0"        # §1.8: saving EFLAGS clears bit 30

    # §1.7: registers reflect the completed stores: every block before the page (for a
    # missing input page: every block whose input fetch stayed before the page).
    done = blocks - int(out["fault_ecx"])
    fetch = CBC_FETCH_BLOCKS.get(target.cpu, 1) if where == "in" else 1
    assert done == max(0, mapped - (fetch - 1))
    assert int(out["fault_esi_adv"]) == 16 * done
    assert int(out["fault_edi_adv"]) == 16 * done
    assert bytes.fromhex(out["fault_out"]) == expected[:16 * done]

    # §3.1: the IV for the next block: C[done-1] (the previous ciphertext block), or the
    # original IV when nothing was stored.
    chain = (data if decrypt else expected)[16 * done - 16:16 * done] if done else iv
    if decrypt or not done:
        assert out["fault_eax"] == "iv+0"                  # EAX unchanged
        assert bytes.fromhex(out["fault_ivmem"]) == chain  # the IV memory (changed)
    else:
        assert out["fault_eax"] != "iv+0"                  # EAX itself changed
        assert bytes.fromhex(out["fault_eaxmem"]) == chain
        assert bytes.fromhex(out["fault_ivmem"]) == iv     # the IV memory did not

    # Resumed after the handler: the whole result, registers at the end.
    assert bytes.fromhex(out["out"]) == expected
    assert out["ecx"] == "0"
    assert int(out["esi_adv"]) == int(out["edi_adv"]) == 16 * blocks
