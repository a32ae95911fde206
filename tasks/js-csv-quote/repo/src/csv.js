/** Serializes rows (arrays of strings or numbers) as CSV text, one line per row. */
export function toCsv(rows) {
  return rows.map((row) => row.map((field) => String(field)).join(",")).join("\n") + "\n";
}
