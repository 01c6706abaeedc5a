"""Pictures of what rearrange, reduce and repeat do, written as PNG files.

A batch of synthetic images (colored gradients with a disc and a square) is made
with NumPy; every layout below is one tensorops call. The PNG files are written
by a tiny pure-NumPy + zlib encoder, so nothing beyond NumPy is needed.

Usage: python examples/image_grid.py [--out docs/images]
"""

from __future__ import annotations

import argparse
import struct
import sys
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a source checkout

import tensorops as tops


def write_png(path: Path, image: np.ndarray) -> None:
    """Write an (h, w, 3) uint8 array as an 8-bit RGB PNG."""
    height, width, channels = image.shape
    assert channels == 3
    assert image.dtype == np.uint8
    rows = np.concatenate([np.zeros((height, 1), np.uint8), image.reshape(height, -1)], axis=1)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
    png += chunk(b"IDAT", zlib.compress(rows.tobytes(), 9)) + chunk(b"IEND", b"")
    path.write_bytes(png)


def make_images(n: int = 16, size: int = 32, seed: int = 0) -> np.ndarray:
    """(n, size, size, 3) float images in [0, 1]: a gradient, a disc and a square each."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:size, 0:size] / (size - 1)
    images = np.empty((n, size, size, 3))
    for i in range(n):
        start, end = rng.random(3), rng.random(3)
        t = (xx + yy)[..., None] / 2
        image = (1 - t) * start + t * end
        cy, cx, r = [*rng.uniform(0.3, 0.7, 2).tolist(), rng.uniform(0.12, 0.25)]
        image[(yy - cy) ** 2 + (xx - cx) ** 2 < r**2] = rng.random(3)
        y0, x0 = rng.integers(0, size - 8, 2)
        image[y0 : y0 + 7, x0 : x0 + 7] = rng.random(3)
        images[i] = image
    return images


def to_uint8(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray((np.clip(x, 0, 1) * 255).round().astype(np.uint8))


def with_border(x: np.ndarray, width: int = 1) -> np.ndarray:
    """Pad every image of a (..., h, w, c) batch with a white border."""
    pad = [(0, 0)] * (x.ndim - 3) + [(width, width), (width, width), (0, 0)]
    return np.pad(x, pad, constant_values=1.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(__file__).resolve().parent.parent / "docs" / "images"
    parser.add_argument("--out", type=Path, default=default, help="output directory")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    images = make_images()  # b h w c

    # The batch as a 4 x 4 grid: split the batch axis, merge it into height and width.
    grid = tops.rearrange(with_border(images), "(gh gw) h w c -> (gh h) (gw w) c", gh=4)
    grid = tops.repeat(grid, "h w c -> (h 2) (w 2) c")  # enlarged for viewing

    # One image cut into 4 x 4 patches of 16 x 16, as a vision transformer sees it.
    one = tops.repeat(images[3], "h w c -> (h 2) (w 2) c")  # 64 x 64
    patches = tops.rearrange(one, "(ph p1) (pw p2) c -> (ph pw) p1 p2 c", p1=16, p2=16)
    patch_grid = tops.rearrange(with_border(patches, 2), "(ph pw) h w c -> (ph h) (pw w) c", ph=4)
    patch_grid = tops.repeat(patch_grid, "h w c -> (h 2) (w 2) c")

    # Max-pool 4 x 4: each output pixel is the brightest of its block (per channel).
    pooled = tops.reduce(images[:4], "b (h 4) (w 4) c -> b h w c", "max")
    shown = tops.repeat(pooled, "b h w c -> b (h 4) (w 4) c")  # back to 32 x 32 to compare
    pairs = np.stack([images[:4], shown])  # before, after
    maxpool = tops.rearrange(with_border(pairs), "two b h w c -> (two h) (b w) c")
    maxpool = tops.repeat(maxpool, "h w c -> (h 2) (w 2) c")

    # Upsample: a tiny 8 x 8 image, each pixel repeated into a 4 x 4 block.
    tiny = tops.reduce(images[:4], "b (h 4) (w 4) c -> b h w c", "mean")
    big = tops.repeat(tiny, "b h w c -> b (h 4) (w 4) c")
    upsample = tops.rearrange(with_border(big), "b h w c -> h (b w) c")
    upsample = tops.repeat(upsample, "h w c -> (h 2) (w 2) c")

    for name, picture in [
        ("grid", grid),
        ("patches", patch_grid),
        ("maxpool", maxpool),
        ("upsample", upsample),
    ]:
        path = args.out / f"{name}.png"
        write_png(path, to_uint8(picture))
        print(f"wrote {path}  {picture.shape[1]}x{picture.shape[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
