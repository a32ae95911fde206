def invoice_line(name: str, qty: int, unit_cents: int) -> str:
    """One invoice line, e.g. `invoice_line("pen", 3, 150)` -> "pen x3: $4.50"."""
    total = qty * unit_cents
    return f"{name} x{qty}: ${total // 100}.{total % 100:02d}"
