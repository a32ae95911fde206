from .core import slugify

__all__ = ["slugify"]
