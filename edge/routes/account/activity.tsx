// The account's activity: its event log (edge/auth/account-events.ts), newest first, with the
// network and browser of each event, so the owner can see a sign-in or a key that was not theirs.
import {
  ACCOUNT_EVENT_KINDS,
  ACCOUNT_EVENT_LABELS,
  ACCOUNT_EVENTS_KEPT,
  type AccountEventKind,
} from "../../../schema/account-events.ts";
import { type AccountEvent, recentAccountEvents } from "../../storage/accounts.ts";
import type { PageContext } from "./ui.tsx";
import { DashboardPage, renderPage, When } from "./ui.tsx";

function labelOf(kind: string): string {
  return (ACCOUNT_EVENT_KINDS as readonly string[]).includes(kind)
    ? ACCOUNT_EVENT_LABELS[kind as AccountEventKind]
    : kind;
}

function EventTable(props: { events: AccountEvent[] }) {
  if (props.events.length === 0) return <p class="muted">Nothing has happened yet.</p>;
  return (
    <div class="table-scroll">
      <table class="stack-table">
        <caption class="sr-only">Account activity, newest first</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">What</th>
            <th scope="col">Network</th>
            <th scope="col">Browser or client</th>
          </tr>
        </thead>
        <tbody>
          {props.events.map((event) => (
            <tr>
              <td data-label="When">
                <When iso={event.createdAt} />
              </td>
              <td data-label="What">
                {labelOf(event.kind)}
                {event.detail && <span class="hint"> {event.detail}</span>}
              </td>
              <td data-label="Network">{event.network}</td>
              <td data-label="Client" class="muted">
                {event.userAgent ?? "—"}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export async function activityPage(c: PageContext) {
  const account = c.get("account");
  const events = await recentAccountEvents(c.env.DB, account.id);
  const page = (
    <DashboardPage title="Activity" section="/dashboard/activity" email={account.email}>
      <section aria-labelledby="activity-title" class="dashboard-section">
        <h2 id="activity-title">Sign-ins and changes</h2>
        <p class="hint">
          The latest {ACCOUNT_EVENTS_KEPT} sign-ins, sign-outs, key and webhook-secret changes of
          this account, newest first. Something you did not do? Revoke the keys it names and sign in
          again.
        </p>
        <EventTable events={events} />
      </section>
    </DashboardPage>
  );
  return renderPage(c, page);
}
