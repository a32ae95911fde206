"""A tiny shop: invoice lines and sales reports. Amounts are integer cents."""
