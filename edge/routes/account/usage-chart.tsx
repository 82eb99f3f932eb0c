// The Usage page's daily chart (decision 0251): one bar chart per figure (credits, frames), drawn
// here as SVG so it needs no script and no outside library, each with its title and a summary
// for screen readers, and the table of the same numbers beside it. Colours are the page's own
// (classes in dashboard.css), so dark mode and the phone layout follow the stylesheet.
import type { UsageDay } from "../../storage/usage.ts";
import { count } from "./ui.tsx";

const DAY_FORMAT = new Intl.DateTimeFormat("en-GB", {
  timeZone: "UTC",
  day: "numeric",
  month: "short",
});

/** "28 Nov" for "2026-11-28". */
export function dayLabel(day: string): string {
  return DAY_FORMAT.format(new Date(`${day}T00:00:00Z`));
}

/** The most days a chart draws: a month's period fits twice over. */
const MAX_DAYS = 62;

/**
 * Every UTC day from `from` to `to` (ISO moments), each with its jobs or zeros; the last
 * MAX_DAYS of them when the span is longer (an account whose period never started).
 */
export function periodDays(from: string, to: string, days: UsageDay[]): UsageDay[] {
  const known = new Map(days.map((d) => [d.day, d]));
  const out: UsageDay[] = [];
  const first = new Date(`${from.slice(0, 10)}T00:00:00Z`);
  const at = new Date(`${to.slice(0, 10)}T00:00:00Z`);
  for (; at >= first && out.length < MAX_DAYS; at.setUTCDate(at.getUTCDate() - 1)) {
    const day = at.toISOString().slice(0, 10);
    out.push(known.get(day) ?? { day, jobs: 0, credits: 0, frames: 0 });
  }
  return out.reverse();
}

/** A round top for the scale (1, 2, 5 × 10ⁿ), so the gridline's label reads well. */
function niceCeiling(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

const BAR_SLOT = 20;
const HEIGHT = 120;

function BarChart(props: {
  id: string;
  title: string;
  unit: string;
  days: UsageDay[];
  value: (day: UsageDay) => number;
}) {
  const values = props.days.map(props.value);
  const total = values.reduce((a, b) => a + b, 0);
  const top = niceCeiling(Math.max(0, ...values));
  const peak = values.indexOf(Math.max(...values));
  const first = props.days[0];
  const last = props.days.at(-1);
  const summary =
    total === 0
      ? `No ${props.unit} yet from ${dayLabel(first.day)} to ${dayLabel(last?.day ?? first.day)}.`
      : `${count(total)} ${props.unit} in ${props.days.length} days from ${dayLabel(first.day)} to ${dayLabel(last?.day ?? first.day)}; the most on ${dayLabel(props.days[peak].day)} (${count(values[peak])}).`;
  const width = props.days.length * BAR_SLOT;
  return (
    <figure class="usage-chart" aria-labelledby={`${props.id}-caption`}>
      <figcaption id={`${props.id}-caption`}>
        {props.title}
        <span class="hint">
          {" "}
          {count(total)} {props.unit} this period
        </span>
      </figcaption>
      <div class="chart-frame">
        <span class="chart-scale" aria-hidden="true">
          {count(top)}
        </span>
        <svg
          id={props.id}
          class="chart"
          viewBox={`0 0 ${width} ${HEIGHT}`}
          preserveAspectRatio="none"
          role="img"
          aria-labelledby={`${props.id}-title ${props.id}-desc`}
          data-unit={props.unit}
        >
          <title id={`${props.id}-title`}>{props.title}</title>
          <desc id={`${props.id}-desc`}>{summary}</desc>
          <line class="chart-grid" x1="0" x2={width} y1="0.5" y2="0.5" />
          <line class="chart-grid" x1="0" x2={width} y1={HEIGHT / 2} y2={HEIGHT / 2} />
          <line class="chart-axis" x1="0" x2={width} y1={HEIGHT - 0.5} y2={HEIGHT - 0.5} />
          {props.days.map((day, i) => {
            const value = values[i];
            const height = value === 0 ? 0 : Math.max(2, (value / top) * HEIGHT);
            return (
              <rect
                class="chart-bar"
                x={i * BAR_SLOT + 3}
                y={HEIGHT - height}
                width={BAR_SLOT - 6}
                height={height}
                data-day={day.day}
                data-value={value}
              >
                <title>
                  {dayLabel(day.day)}: {count(value)} {props.unit}
                </title>
              </rect>
            );
          })}
        </svg>
        <span class="chart-days" aria-hidden="true">
          <span>{dayLabel(first.day)}</span>
          <span>{dayLabel(last?.day ?? first.day)}</span>
        </span>
      </div>
    </figure>
  );
}

/** The two charts and the table of the same numbers, for the days of the period so far. */
export function UsageCharts(props: { days: UsageDay[] }) {
  return (
    <>
      <div class="usage-charts">
        <BarChart
          id="credits-chart"
          title="Credits charged per day"
          unit="credits"
          days={props.days}
          value={(d) => d.credits}
        />
        <BarChart
          id="frames-chart"
          title="Frames delivered per day"
          unit="frames"
          days={props.days}
          value={(d) => d.frames}
        />
      </div>
      <details class="usage-table">
        <summary>The same numbers as a table</summary>
        <div class="table-scroll">
          <table class="usage-days">
            <caption class="sr-only">Jobs, credits and frames per day (UTC)</caption>
            <thead>
              <tr>
                <th scope="col">Day (UTC)</th>
                <th scope="col" class="num">
                  Jobs
                </th>
                <th scope="col" class="num">
                  Credits
                </th>
                <th scope="col" class="num">
                  Frames
                </th>
              </tr>
            </thead>
            <tbody>
              {props.days.map((day) => (
                <tr data-day={day.day}>
                  <th scope="row">{dayLabel(day.day)}</th>
                  <td class="num">{count(day.jobs)}</td>
                  <td class="num">{count(day.credits)}</td>
                  <td class="num">{count(day.frames)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </>
  );
}
