import re


def slugify(text: str, sep: str = "-") -> str:
    """Lowercase `text`, replace every run of non-alphanumeric characters with a single `sep`,
    and trim `sep` from both ends."""
    text = text.lower()
    text = re.sub(r"[^a-z0-9]", sep, text)
    return text.strip(sep)
