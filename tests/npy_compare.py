#!/usr/bin/env python3
"""tests/npy_compare.py A B TOL - whether two float32 .npy files (nnlab's
--save-params, format 1.0, little-endian '<f4') hold the same shape and
values within TOL, relative to the largest magnitude in A: exit 0 when they
do, 1 (with the largest difference) when not, 2 on a bad file. No numpy:
CI's Debian has python3 without it."""
import array
import ast
import sys


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY" or data[6] != 1:
        raise ValueError(f"{path}: not a version 1 .npy file")
    hlen = data[8] | (data[9] << 8)
    header = ast.literal_eval(data[10:10 + hlen].decode("ascii"))
    if header["descr"] != "<f4" or header["fortran_order"]:
        raise ValueError(f"{path}: not C-order little-endian float32")
    values = array.array("f")
    values.frombytes(data[10 + hlen:])
    if sys.byteorder != "little":
        values.byteswap()
    return header["shape"], values


def main():
    if len(sys.argv) != 4:
        print("usage: npy_compare.py A B TOL", file=sys.stderr)
        return 2
    try:
        (sa, a), (sb, b) = load(sys.argv[1]), load(sys.argv[2])
    except (OSError, ValueError, KeyError, SyntaxError) as e:
        print(e, file=sys.stderr)
        return 2
    tol = float(sys.argv[3])
    if sa != sb:
        print(f"shapes differ: {sa} against {sb}")
        return 1
    scale = max((abs(x) for x in a), default=0.0) or 1.0
    diff = max((abs(x - y) for x, y in zip(a, b)), default=0.0)
    print(f"{len(a)} values, largest difference {diff:.3g} ({diff / scale:.3g} of the largest "
          f"value {scale:.3g}), tolerance {tol:g}")
    return 0 if diff / scale <= tol else 1


if __name__ == "__main__":
    sys.exit(main())
