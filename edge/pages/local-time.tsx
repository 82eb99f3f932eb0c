// A moment on a page. The server writes it in UTC (and says so), which is right for every
// visitor; site.client.js then rewrites it in the visitor's own zone, keeping the UTC wording
// in the title for hovering. Machine-readable in `datetime` either way.

const UTC_TIME = new Intl.DateTimeFormat("en-GB", {
  timeZone: "UTC",
  day: "numeric",
  month: "short",
  year: "numeric",
  hour: "2-digit",
  minute: "2-digit",
});

const UTC_DATE = new Intl.DateTimeFormat("en-GB", {
  timeZone: "UTC",
  day: "numeric",
  month: "short",
  year: "numeric",
});

/** "27 Nov 2026, 14:05 UTC": the wording before the script runs and on hover after it. */
export function utcWording(date: Date, dateOnly = false): string {
  return dateOnly ? `${UTC_DATE.format(date)} (UTC)` : `${UTC_TIME.format(date)} UTC`;
}

export function LocalTime(props: {
  iso: string | null | undefined;
  /** What to show when there is no moment. */
  empty?: string;
  /** Only the day, e.g. when a period ends. */
  dateOnly?: boolean;
}) {
  if (!props.iso) return <span class="muted">{props.empty ?? "—"}</span>;
  const date = new Date(props.iso);
  if (Number.isNaN(date.getTime())) return <span>{props.iso}</span>;
  const utc = utcWording(date, props.dateOnly);
  return (
    <time datetime={date.toISOString()} title={utc} data-local={props.dateOnly ? "date" : "time"}>
      {utc}
    </time>
  );
}
