// The subscription of an account in words (Stripe's statuses, as the billing webhook stores them).
import type { AccountRow } from "../../../schema/db.ts";
import { When } from "./ui.tsx";

const STATUS_WORDS: Record<string, string> = {
  active: "Active",
  trialing: "Trial",
  past_due: "Payment failed: Stripe is retrying. Update the card in the billing portal.",
  unpaid: "Unpaid: update the card in the billing portal.",
  canceled: "Ended",
  incomplete: "Waiting for the first payment",
  incomplete_expired: "First payment never completed",
  paused: "Paused",
};

export function SubscriptionState(props: { account: AccountRow }) {
  const { account } = props;
  if (!account.subscriptionStatus) return <span>None (plans are monthly; packs are one-off)</span>;
  const words = STATUS_WORDS[account.subscriptionStatus] ?? account.subscriptionStatus;
  if (account.cancelAtPeriodEnd && account.subscriptionStatus !== "canceled") {
    return (
      <span>
        {words}; cancelled, ends <When iso={account.periodEnd} /> (then the free plan)
      </span>
    );
  }
  return <span>{words}</span>;
}
