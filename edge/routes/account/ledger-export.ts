// The credit ledger as a CSV download (issue 36, decision 0251): one row per job as the Usage
// page shows it, or every entry. Streamed a page at a time from one bound of the ledger, so a
// long ledger is never held whole and rows arriving meanwhile cannot shift a page.
import {
  type FoldedLedgerRow,
  foldedLedgerPage,
  type LedgerEntryRow,
  ledgerBound,
  ledgerEntriesBefore,
} from "../../storage/usage.ts";
import type { PageContext } from "./ui.tsx";

const PAGE_ROWS = 500;

/**
 * One CSV field (RFC 4180): numbers as they are; text always quoted, quotes doubled. Text that
 * a spreadsheet would read as a formula (it starts with = + - @, a tab or a carriage return)
 * gets a leading apostrophe first, as OWASP's CSV-injection advice says: a job's link or a note
 * is the customer's own text, and must open as text.
 */
export function csvField(value: string | number | null): string {
  if (value === null) return "";
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : "";
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return `"${text.replaceAll('"', '""')}"`;
}

export function csvLine(fields: (string | number | null)[]): string {
  return `${fields.map(csvField).join(",")}\r\n`;
}

export const FOLDED_HEADER = [
  "last_at",
  "first_at",
  "job_id",
  "job_url",
  "entry",
  "note",
  "held",
  "plan_delta",
  "pack_delta",
  "reserved_delta",
  "entries",
];

function foldedLine(row: FoldedLedgerRow): string {
  return csvLine([
    row.last_at,
    row.first_at,
    row.job_id,
    row.job_url,
    row.kind,
    row.note,
    row.held,
    row.plan_delta,
    row.pack_delta,
    row.reserved_delta,
    row.entries,
  ]);
}

export const ENTRY_HEADER = [
  "created_at",
  "entry_id",
  "job_id",
  "job_url",
  "kind",
  "note",
  "plan_delta",
  "pack_delta",
  "reserved_delta",
];

function entryLine(row: LedgerEntryRow): string {
  return csvLine([
    row.created_at,
    row.id,
    row.job_id,
    row.job_url,
    row.kind,
    row.note,
    row.plan_delta,
    row.pack_delta,
    row.reserved_delta,
  ]);
}

/** Pages of lines, newest first, of the ledger as it stood at the first read. */
async function* ledgerLines(db: D1Database, accountId: string, byJob: boolean) {
  const bound = await ledgerBound(db, accountId);
  if (byJob) {
    yield csvLine(FOLDED_HEADER);
    for (let offset = 0; ; offset += PAGE_ROWS) {
      const rows = await foldedLedgerPage(db, accountId, { bound, limit: PAGE_ROWS, offset });
      yield rows.map(foldedLine).join("");
      if (rows.length < PAGE_ROWS) return;
    }
  }
  yield csvLine(ENTRY_HEADER);
  for (let before = bound + 1; ; ) {
    const rows = await ledgerEntriesBefore(db, accountId, before, PAGE_ROWS);
    yield rows.map(entryLine).join("");
    if (rows.length < PAGE_ROWS) return;
    before = rows[rows.length - 1].row;
  }
}

/** GET /dashboard/usage/ledger.csv[?rows=entries]: the download. */
export function downloadLedger(c: PageContext) {
  const byJob = c.req.query("rows") !== "entries";
  const account = c.get("account");
  const lines = ledgerLines(c.env.DB, account.id, byJob);
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      // A pull must enqueue or close, or the stream waits for ever: skip empty pages.
      for (;;) {
        const next = await lines.next();
        if (next.done) return controller.close();
        if (next.value) return controller.enqueue(encoder.encode(next.value));
      }
    },
    async cancel() {
      await lines.return(undefined);
    },
  });
  const day = new Date().toISOString().slice(0, 10);
  const name = `stills-ledger-${byJob ? "by-job" : "entries"}-${day}.csv`;
  return c.body(body, 200, {
    "Content-Type": "text/csv; charset=utf-8",
    "Content-Disposition": `attachment; filename="${name}"`,
    "Cache-Control": "no-store",
  });
}
