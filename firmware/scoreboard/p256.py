# ECDSA over NIST P-256 (secp256r1, FIPS 186-4) with SHA-256 and deterministic nonces (RFC 6979),
# in small steps: the board signs between scans (docs/league.md).
#
# Why this curve: MicroPython's hashlib has SHA-256 on every port (in hardware on the ESP32) but
# may lack SHA-512, which Ed25519 needs; P-256 with SHA-256 needs nothing else, and RFC 6979
# makes the nonce from the key and the message (HMAC-SHA256), so no random number is needed
# at signing time and a weak one can never leak the key. Written here because MicroPython has
# no library for it; checked against RFC 6979 A.2.5 on CPython and on the unix port
# (tests/test_p256.py). The host verifies with `cryptography`, never with this code.
#
# Every long computation is a generator: it yields after a bounded piece of work (one point
# doubling, one addition, or four bits of an exponent), and its result comes back as the
# generator's return value (`r = yield from f()`). The main loop steps it between scans
# (scoreboard.sign.Signer), so a signature never holds up a scan. The public key of d is
# mul(d).
#
# Scalar multiplication is a regular double-and-always-add over a scalar lifted to 257 bits
# (k + n or k + 2n), so every signature costs the same steps whatever its nonce. MicroPython's
# big integers are not constant-time; docs/league.md says what that leaves.

import hashlib

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

# The curve y^2 = x^3 - 3x + b over the field of P; N points; G = (GX, GY) generates them.
P = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
GX = 0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296
GY = 0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5

_BLOCK = const(64)  # SHA-256's block size


def hmac_sha256(key, msg):
    """HMAC-SHA256 (RFC 2104): MicroPython has no hmac module."""
    if len(key) > _BLOCK:
        key = hashlib.sha256(key).digest()
    key = key + b"\x00" * (_BLOCK - len(key))
    inner = hashlib.sha256(bytes([b ^ 0x36 for b in key]))
    inner.update(msg)
    outer = hashlib.sha256(bytes([b ^ 0x5C for b in key]))
    outer.update(inner.digest())
    return outer.digest()


def inverse(a, m):
    """a^-1 mod a prime m (Fermat: a^(m-2)), four exponent bits a step."""
    e = m - 2
    a %= m
    r = 1
    i = 255
    while i >= 0:
        r = r * r % m
        if e >> i & 1:
            r = r * a % m
        if not i & 3:
            yield
        i -= 1
    return r


def _double(X, Y, Z):
    # Jacobian doubling for a = -3 (dbl-2001-b); infinity (Z = 0) stays infinity.
    p = P
    delta = Z * Z % p
    gamma = Y * Y % p
    beta = X * gamma % p
    alpha = 3 * (X - delta) * (X + delta) % p
    X3 = (alpha * alpha - 8 * beta) % p
    Z3 = ((Y + Z) * (Y + Z) - gamma - delta) % p
    Y3 = (alpha * (4 * beta - X3) - 8 * gamma * gamma) % p
    return X3, Y3, Z3


def _add(X1, Y1, Z1, x2, y2):
    # Jacobian + affine (madd-2007-bl), with the exceptional cases handled.
    p = P
    if not Z1:
        return x2, y2, 1
    z1z1 = Z1 * Z1 % p
    u2 = x2 * z1z1 % p
    s2 = y2 * Z1 * z1z1 % p
    h = (u2 - X1) % p
    r = 2 * (s2 - Y1) % p
    if not h:
        if not r:
            return _double(X1, Y1, Z1)
        return 1, 1, 0  # P + (-P): infinity
    hh = h * h % p
    i = 4 * hh % p
    j = h * i % p
    v = X1 * i % p
    X3 = (r * r - j - 2 * v) % p
    Y3 = (r * (v - X3) - 2 * Y1 * j) % p
    Z3 = ((Z1 + h) * (Z1 + h) - z1z1 - hh) % p
    return X3, Y3, Z3


def mul(k, x=GX, y=GY):
    """k * (x, y) for 1 <= k < N, as affine (x, y); None for the point at infinity. One
    doubling or one addition a step, 512 steps whatever k is, then the inversion."""
    k = k + N
    if not k >> 256:
        k += N  # now exactly 257 bits: the top bit starts at (x, y), no leading zeros
    X, Y, Z = x, y, 1
    i = 255
    while i >= 0:
        X, Y, Z = _double(X, Y, Z)
        yield
        A = _add(X, Y, Z, x, y)
        if k >> i & 1:
            X, Y, Z = A
        i -= 1
        yield
    if not Z:
        return None
    zi = yield from inverse(Z, P)
    zi2 = zi * zi % P
    return X * zi2 % P, Y * zi2 * zi % P


def _octets(v):
    return v.to_bytes(32, "big")


def nonces(d, h1):
    """RFC 6979 3.2 candidates k for private key d and message hash h1 (32 bytes), in order
    (for P-256 with SHA-256, qlen = hlen = 256: each candidate is one HMAC block)."""
    x = _octets(d)
    h = _octets(int.from_bytes(h1, "big") % N)  # bits2octets
    V = b"\x01" * 32
    K = b"\x00" * 32
    K = hmac_sha256(K, V + b"\x00" + x + h)
    V = hmac_sha256(K, V)
    K = hmac_sha256(K, V + b"\x01" + x + h)
    V = hmac_sha256(K, V)
    while True:
        V = hmac_sha256(K, V)
        k = int.from_bytes(V, "big")
        if 1 <= k < N:
            yield k
        K = hmac_sha256(K, V + b"\x00")
        V = hmac_sha256(K, V)


def sign(d, h1):
    """ECDSA signature (r, s) of the SHA-256 hash h1 (32 bytes) under private key d, stepped."""
    e = int.from_bytes(h1, "big")
    for k in nonces(d, h1):
        R = yield from mul(k)
        if R is None:
            continue
        r = R[0] % N
        if not r:
            continue
        ki = yield from inverse(k, N)
        s = ki * (e + r * d) % N
        if s:
            return r, s


def private(random):
    """A private key from `random(32)` (32 random bytes a call): candidates outside [1, N-1]
    are drawn again (FIPS 186-4 B.4.2)."""
    while True:
        d = int.from_bytes(random(32), "big")
        if 1 <= d < N:
            return d
