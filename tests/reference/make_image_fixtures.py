"""Writes the image files the header reader is tested on (canonical/__fixtures__/images/) with
Pillow, the encoder the Hugging Face processors decode with, and `sizes.json`: the size Pillow
reports when it opens each file. Run once in the engine venv (Pillow 13.0.0), the files are
committed:

    .venv-engine/bin/python tests/reference/make_image_fixtures.py canonical/__fixtures__/images
"""

import io
import json
import struct
import sys
from pathlib import Path

from PIL import Image, ImageDraw


def picture(width, height, mode="RGB"):
    """A few shapes on a plain ground: small files that are real encoder output."""
    image = Image.new("RGB", (width, height), (40, 90, 160))
    draw = ImageDraw.Draw(image)
    draw.rectangle([width // 5, height // 5, width // 2, height // 2], fill=(230, 200, 40))
    draw.ellipse([width // 2, height // 3, width - 2, height - 2], fill=(200, 30, 60))
    image = image.convert(mode)
    if mode == "RGBA":  # a transparent corner: the alpha is kept (WebP writes a VP8X canvas)
        ImageDraw.Draw(image).rectangle([0, 0, width // 8, height // 8], fill=(0, 0, 0, 0))
    return image


def exif_rotated():
    """EXIF orientation 6 (rotate 90°): the stored size stays the header's."""
    exif = Image.Exif()
    exif[0x0112] = 6
    exif[0x010E] = "x" * 3000  # a long description: the frame header comes after a big APP1
    return exif


def gif_grown_by_first_frame():
    """A GIF whose first frame reaches past its logical screen (Pillow grows the size)."""
    out = io.BytesIO()
    out.write(b"GIF89a" + struct.pack("<HH", 10, 8) + bytes([0x80, 0, 0]))
    out.write(bytes([0, 0, 0, 255, 255, 255]))  # global color table: 2 colors
    out.write(b"\x21\xf9\x04\x00\x00\x00\x00\x00")  # graphic control extension
    out.write(b"\x21\xfe\x03abc\x00")  # comment extension
    out.write(b"\x2c" + struct.pack("<HHHH", 4, 3, 12, 9) + b"\x00")  # descriptor: 4+12 × 3+9
    pixels = bytes(12 * 9)
    # LZW with 2-bit codes: a clear code before every 2 pixels keeps the code size at 3 bits.
    bits, nbits, data = 0, 0, bytearray()
    for k in range(0, len(pixels), 2):
        for code in (4, pixels[k], pixels[k + 1]):
            bits |= code << nbits
            nbits += 3
            while nbits >= 8:
                data.append(bits & 0xFF)
                bits >>= 8
                nbits -= 8
    bits |= 5 << nbits
    nbits += 3
    while nbits > 0:
        data.append(bits & 0xFF)
        bits >>= 8
        nbits -= 8
    out.write(bytes([2]))
    for k in range(0, len(data), 255):
        chunk = data[k : k + 255]
        out.write(bytes([len(chunk)]) + chunk)
    out.write(b"\x00\x3b")
    return out.getvalue()


def main(folder):
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    files = {
        "rgb-333x127.png": lambda f: picture(333, 127).save(f, "PNG"),
        "interlaced-16bit-300x200.png": lambda f: picture(300, 200, "I;16").save(
            f, "PNG", interlace=1
        ),
        "palette-alpha-64x48.png": lambda f: picture(64, 48, "RGBA")
        .convert("P", palette=Image.ADAPTIVE)
        .save(f, "PNG", transparency=0),
        "screen-1920x1080.png": lambda f: picture(1920, 1080).save(f, "PNG", optimize=True),
        "baseline-640x480.jpg": lambda f: picture(640, 480).save(f, "JPEG", quality=60),
        "progressive-1001x333.jpg": lambda f: picture(1001, 333).save(
            f, "JPEG", quality=50, progressive=True
        ),
        "gray-250x4000.jpg": lambda f: picture(250, 4000, "L").save(f, "JPEG", quality=40),
        "cmyk-120x90.jpg": lambda f: picture(120, 90, "CMYK").save(f, "JPEG", quality=60),
        "exif-rotated-400x300.jpg": lambda f: picture(400, 300).save(
            f, "JPEG", quality=60, exif=exif_rotated()
        ),
        "still-200x150.gif": lambda f: picture(200, 150).save(f, "GIF"),
        "animated-97x61.gif": lambda f: picture(97, 61).save(
            f, "GIF", save_all=True, append_images=[picture(97, 61, "L")], duration=100
        ),
        "lossy-512x288.webp": lambda f: picture(512, 288).save(f, "WEBP", quality=50),
        "lossless-300x7.webp": lambda f: picture(300, 7).save(f, "WEBP", lossless=True),
        "alpha-4100x4100.webp": lambda f: picture(4100, 4100, "RGBA").save(
            f, "WEBP", quality=5, method=6
        ),
        "animated-80x60.webp": lambda f: picture(80, 60).save(
            f, "WEBP", save_all=True, append_images=[picture(80, 60, "L").convert("RGB")]
        ),
    }
    sizes = {}
    for name, write in files.items():
        path = root / name
        with open(path, "wb") as f:
            write(f)
    (root / "grown-by-frame-16x12.gif").write_bytes(gif_grown_by_first_frame())
    for path in sorted(root.iterdir()):
        if path.suffix == ".json":
            continue
        with Image.open(path) as image:
            sizes[path.name] = {"format": image.format, "width": image.width, "height": image.height}
    (root / "sizes.json").write_text(json.dumps(sizes, indent=2) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
