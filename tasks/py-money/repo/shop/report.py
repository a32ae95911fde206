def report_total(amounts_cents: list[int]) -> str:
    """The report's last line: the sum of all amounts, e.g. "Total: $12.00"."""
    total = sum(amounts_cents)
    dollars, cents = divmod(total, 100)
    return f"Total: ${dollars}.{cents:02d}"
