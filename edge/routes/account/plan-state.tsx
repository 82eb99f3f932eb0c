// The subscription of an account in words (Stripe's statuses, as the billing webhook stores them).
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

/** The subscription as /v1/usage reports it (null: never subscribed). */
export function SubscriptionState(props: {
  subscription: { status: string; cancel_at_period_end: boolean } | null;
  periodEnd: string | null;
}) {
  const { subscription } = props;
  if (!subscription) return <span>None (plans are monthly; packs are one-off)</span>;
  const words = STATUS_WORDS[subscription.status] ?? subscription.status;
  if (subscription.cancel_at_period_end && subscription.status !== "canceled") {
    return (
      <span>
        {words}; cancelled, ends <When iso={props.periodEnd} /> (then the free plan)
      </span>
    );
  }
  return <span>{words}</span>;
}
