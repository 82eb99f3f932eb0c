// Reads CSV as RFC 4180 writes it (quoted fields, doubled quotes, CRLF between records), strictly:
// the ledger downloads' tests parse what a spreadsheet would, and a stray quote fails them.

export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = "";
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      record.push(field);
      field = "";
    } else if (ch === "\r" && text[i + 1] === "\n") {
      record.push(field);
      records.push(record);
      record = [];
      field = "";
      i++;
    } else field += ch;
  }
  if (field !== "" || record.length > 0 || quoted) throw new Error("the CSV does not end a record");
  return records;
}

/** Records after the header as objects keyed by the header's names; every record as wide. */
export function csvObjects(text: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text);
  for (const row of rows) {
    if (row.length !== header.length) throw new Error(`a record of ${row.length} fields`);
  }
  return rows.map((row) => Object.fromEntries(header.map((name, i) => [name, row[i]])));
}

export function columnSum(rows: Record<string, string>[], column: string): number {
  return rows.reduce((total, row) => total + Number(row[column]), 0);
}
