#!/usr/bin/python3
"""Resolvable private addresses made by Python's `cryptography` (OpenSSL's AES), independent of
beaconwatch's swift-crypto: ah(k, r) is the low 24 bits of AES-128 of r padded with zeros
(Bluetooth Core Specification, Vol 3, Part H, 2.2.2). Prints one address a line for the IRK and
the prands given: `rpa.py <32 hex digits> <prand hex>...`."""
import sys

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

key = bytes.fromhex(sys.argv[1])
for text in sys.argv[2:]:
    prand = (int(text, 16) & 0x3FFFFF) | 0x400000
    encryptor = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    block = encryptor.update(bytes(13) + prand.to_bytes(3, "big")) + encryptor.finalize()
    address = prand.to_bytes(3, "big") + block[13:]
    print(":".join(f"{byte:02X}" for byte in address))
