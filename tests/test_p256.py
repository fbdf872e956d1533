"""The board's own ECDSA P-256 signer (firmware/scoreboard/p256.py) against the standard's test
vectors: RFC 6979 A.2.5 (P-256, SHA-256: the key pair, the deterministic nonces k, the
signatures r, s), on CPython and on the MicroPython unix port (and its 32-bit build when there
is one); key pairs checked (the public key on the curve, what `cryptography` derives); random
keys and messages signed by the board's code and verified by `cryptography`."""

import hashlib
import json
import os
import random
import subprocess
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from scoreboard import p256
from tests.conftest import report_micropython
from tests.mpy import FIRMWARE, run_mp

# RFC 6979, A.2.5: ECDSA, 256 bits (prime field), the key pair and SHA-256 signatures.
X = 0xC9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721
UX = 0x60FED4BA255A9D31C961EB74C6356D68C049B8923B61FA6CE669622E60F29FB6
UY = 0x7903FE1008B8BC99A41AE9E95628BC64F2F1B20C2D7E9F5177A3C294D4462299
VECTORS = {
    "sample": (0xA6E3C57DD01ABE90086538398355DD4C3B17AA873382B0F24D6129493D8AAD60,
               0xEFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716,
               0xF7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8),
    "test": (0xD16B6AE827F17175E040871A1C7EC3500192C4C92677336EC2537ACAEE0008E0,
             0xF1ABB023518351CD71D881567B1EA663ED3EFCF6C5132B354F28D3B0B7D38367,
             0x019F4113742A2B14BD25926B49C649155F267E60D3814B4C0CC84250E46F0083),
}
B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B  # FIPS 186-4 D.1.2.3
MP32 = Path("/work/mp32/micropython")


def run(gen):
    """Drive a stepped computation to its end (the board's main loop does it a step a scan)."""
    steps = 0
    try:
        while True:
            next(gen)
            steps += 1
    except StopIteration as e:
        return e.value, steps


def on_curve(x, y):
    return 0 <= x < p256.P and 0 <= y < p256.P and (y * y - (x ** 3 - 3 * x + B)) % p256.P == 0


def test_rfc6979_a25_key_pair_nonces_and_signatures():
    (ux, uy), _ = run(p256.mul(X))
    assert (ux, uy) == (UX, UY) and on_curve(ux, uy)
    for msg, (k, r, s) in VECTORS.items():
        h = hashlib.sha256(msg.encode()).digest()
        assert next(p256.nonces(X, h)) == k, msg
        assert run(p256.sign(X, h))[0] == (r, s), msg


def test_the_generator_and_key_pairs_are_on_the_curve_and_match_cryptography():
    assert on_curve(p256.GX, p256.GY)
    assert run(p256.mul(p256.N - 1))[0] == (p256.GX, p256.P - p256.GY)  # -G
    assert run(p256.mul(1))[0] == (p256.GX, p256.GY)
    rng = random.Random(17)
    for _ in range(6):
        d = p256.private(lambda n: bytes(rng.randrange(256) for _ in range(n)))
        (x, y), steps = run(p256.mul(d))
        assert on_curve(x, y) and steps == 2 * 256 + 64  # every scalar the same steps
        n = ec.derive_private_key(d, ec.SECP256R1()).public_key().public_numbers()
        assert (n.x, n.y) == (x, y)


def test_signatures_of_the_boards_code_verify_with_cryptography():
    rng = random.Random(3)
    for _ in range(8):
        d = p256.private(os.urandom)
        (x, y), _ = run(p256.mul(d))
        pub = ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()
        msg = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 200)))
        (r, s), _ = run(p256.sign(d, hashlib.sha256(msg).digest()))
        pub.verify(encode_dss_signature(r, s), msg, ec.ECDSA(hashes.SHA256()))  # raises if not
        with pytest.raises(InvalidSignature):
            pub.verify(encode_dss_signature(r, s), msg + b"x", ec.ECDSA(hashes.SHA256()))


def test_private_keys_are_drawn_again_outside_the_range():
    draws = iter([b"\x00" * 32, b"\xff" * 32, (p256.N).to_bytes(32, "big"), b"\x00" * 31 + b"\x05"])
    assert p256.private(lambda n: next(draws)) == 5


MP_VECTORS = """
import hashlib, sys, json
from scoreboard import p256
def run(g):
    n = 0
    try:
        while True:
            next(g)
            n += 1
    except StopIteration as e:
        return e.value, n
x = %d
(ux, uy), steps = run(p256.mul(x))
out = {"pub": ["%%064x" %% ux, "%%064x" %% uy], "steps": steps, "sigs": {}}
for msg in ("sample", "test"):
    h = hashlib.sha256(msg.encode()).digest()
    k = next(p256.nonces(x, h))
    (r, s), n = run(p256.sign(x, h))
    out["sigs"][msg] = ["%%064x" %% k, "%%064x" %% r, "%%064x" %% s, n]
print(json.dumps(out))
""" % X


def check_mp(out):
    assert out["pub"] == ["%064x" % UX, "%064x" % UY]
    for msg, (k, r, s) in VECTORS.items():
        got = out["sigs"][msg]
        assert got[:3] == ["%064x" % k, "%064x" % r, "%064x" % s], msg


def test_rfc6979_vectors_on_the_micropython_unix_port():
    check_mp(json.loads(run_mp(code=MP_VECTORS).stdout))
    report_micropython("RFC 6979 A.2.5 vectors (key pair, k, r, s) on the unix port", 3)


@pytest.mark.skipif(not MP32.exists(), reason="no 32-bit MicroPython build at /work/mp32")
def test_rfc6979_vectors_on_the_32_bit_build():
    env = dict(os.environ, MICROPYPATH=str(FIRMWARE))
    proc = subprocess.run([str(MP32), "-X", "heapsize=96k", "-c", MP_VECTORS],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    check_mp(json.loads(proc.stdout))
    report_micropython("RFC 6979 A.2.5 vectors on the 32-bit unix build", 3)
