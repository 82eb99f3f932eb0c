// The pricing table of the landing page, rendered from CATALOG, the very object GET /v1/pricing
// answers with, so the page and the API cannot disagree.
import { CATALOG } from "../../../schema/plans.ts";

type CatalogPlan = (typeof CATALOG.plans)[number];

const count = new Intl.NumberFormat("en-US");

function plural(n: number, one: string, many: string): string {
  return `${count.format(n)} ${n === 1 ? one : many}`;
}

function price(plan: CatalogPlan): string {
  return plan.price_usd === 0 ? "$0" : `$${count.format(plan.price_usd)} / ${plan.interval}`;
}

/** One row per fact; every cell shows one number of the catalog (the test reads them back). */
const ROWS: { field: string; label: string; cell: (plan: CatalogPlan) => string }[] = [
  { field: "price_usd", label: "Price", cell: price },
  {
    field: "credits_per_month",
    label: "Credits each month",
    cell: (p) => count.format(p.credits_per_month),
  },
  {
    field: "limits.max_video_minutes",
    label: "Longest video",
    cell: (p) => `${count.format(p.limits.max_video_minutes)} min`,
  },
  {
    field: "limits.max_frames_per_job",
    label: "Frames per job",
    cell: (p) => count.format(p.limits.max_frames_per_job),
  },
  {
    field: "limits.max_resolution",
    label: "Highest resolution",
    cell: (p) => `${p.limits.max_resolution}p`,
  },
  {
    field: "limits.max_width",
    label: "Widest frame",
    cell: (p) => `${count.format(p.limits.max_width)} px`,
  },
  {
    field: "limits.retention_days",
    label: "Files kept",
    cell: (p) => plural(p.limits.retention_days, "day", "days"),
  },
  {
    field: "limits.max_active_jobs",
    label: "Jobs at once",
    cell: (p) => count.format(p.limits.max_active_jobs),
  },
  {
    field: "limits.max_batch_items",
    label: "Links per batch",
    cell: (p) => count.format(p.limits.max_batch_items),
  },
  {
    field: "limits.max_active_batches",
    label: "Batches at once",
    cell: (p) => count.format(p.limits.max_active_batches),
  },
  {
    field: "limits.requests_per_minute",
    label: "Requests per minute",
    cell: (p) => count.format(p.limits.requests_per_minute),
  },
];

function planTitle(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

export function PricingTable() {
  const rules = CATALOG.credit_rules;
  return (
    <>
      <div class="table-scroll">
        <table class="pricing-table">
          <caption class="sr-only">Plans, their monthly credits and their limits</caption>
          <thead>
            <tr>
              <td />
              {CATALOG.plans.map((plan) => (
                <th scope="col" data-plan={plan.name}>
                  {planTitle(plan.name)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {ROWS.map((row) => (
              <tr data-field={row.field}>
                <th scope="row">{row.label}</th>
                {CATALOG.plans.map((plan) => (
                  <td class="num" data-plan={plan.name}>
                    {row.cell(plan)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ul class="packs">
        {CATALOG.packs.map((pack) => (
          <li data-pack={pack.name}>
            <strong>Credit pack:</strong>{" "}
            <span data-field="credits">{count.format(pack.credits)}</span> credits for{" "}
            <span data-field="price_usd">${count.format(pack.price_usd)}</span>, bought once, on top
            of any plan. {pack.expires ? "" : "Pack credits never expire."}
          </li>
        ))}
      </ul>
      <h3>How credits are counted</h3>
      <ul class="credit-rules">
        <li>Frames every N seconds or N evenly spaced: {rules.interval_and_count}.</li>
        <li>Frames at exact timestamps: {rules.timestamps}.</li>
        <li>Frames from a live stream: {rules.live}.</li>
        <li>One frame per shot, or the stream's keyframes: {rules.scenes_and_keyframes}.</li>
        <li>The best-looking frames: {rules.best}.</li>
        <li>One frame per slide: {rules.slides}.</li>
        <li>Reading the text on screen: {rules.text}.</li>
        <li>A moving preview: {rules.animated}.</li>
        <li>A storyboard (contact sheet and thumbnail track) {rules.storyboard}.</li>
        <li>
          Skipping black, blurred or repeated frames: {rules.skip}. Captions: {rules.captions}. The
          video's details: {rules.video}.
        </li>
        <li>
          Charged {rules.charged}; {rules.order}.
        </li>
        <li>Batches: {rules.batches}.</li>
        <li>Repeats: {rules.repeats}.</li>
        <li>
          Jobs over {count.format(CATALOG.zip_always_above_frames)} frames also come as one ZIP.
        </li>
      </ul>
    </>
  );
}
