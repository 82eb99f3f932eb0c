// The worker's cron on the local stack. `wrangler dev` never fires cron triggers by itself, and a
// restart of it drops the queue messages that keep jobs going (they live in its memory), so a job
// in flight at a restart waited for the cron's backstop (edge/maintenance.ts: attempts whose lease
// ran out go back to the queue), which never came. `npm start` fires it through wrangler's local
// trigger (GET /cdn-cgi/local/scheduled, which `wrangler dev` serves on its own port): once at
// start, once more when every lease the previous run's attempts held has run out (those attempts
// died with it), then on wrangler.toml's schedule.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseEnv } from "node:util";

/** The edge's own default (edge/config.ts, JOB_LEASE_SECONDS). */
const DEFAULT_LEASE_SECONDS = 30;

/**
 * The lines of one top-level table of a TOML file (`[triggers]`, `[vars]`): from its header to
 * the next header. Enough for our own wrangler.toml, whose top-level tables hold plain strings
 * and arrays of strings.
 */
function tableLines(toml, name) {
  const lines = toml.split("\n");
  const start = lines.findIndex((line) => line.trim() === `[${name}]`);
  if (start < 0) return [];
  const rest = lines.slice(start + 1);
  const end = rest.findIndex((line) => /^\s*\[/.test(line));
  return (end < 0 ? rest : rest.slice(0, end)).filter((line) => !/^\s*(#|$)/.test(line));
}

function tableValue(toml, table, key) {
  for (const line of tableLines(toml, table)) {
    const match = new RegExp(`^\\s*${key}\\s*=\\s*(.+?)\\s*(#.*)?$`).exec(line);
    if (match) return JSON.parse(match[1]);
  }
  return undefined;
}

/**
 * What the schedule needs, read as the edge gets it: the crons of wrangler.toml's top-level
 * [triggers], and JOB_LEASE_SECONDS from `npm start`'s environment (startStack hands it to the
 * edge as a `--var`, which wins), else the developer's .dev.vars, else wrangler.toml's [vars],
 * else the edge's default.
 */
export function readMaintenanceSchedule({ root, devVars, env = process.env }) {
  const toml = readFileSync(join(root, "wrangler.toml"), "utf8");
  const crons = tableValue(toml, "triggers", "crons") ?? [];
  let lease = tableValue(toml, "vars", "JOB_LEASE_SECONDS");
  try {
    lease = parseEnv(readFileSync(devVars, "utf8")).JOB_LEASE_SECONDS ?? lease;
  } catch {}
  if (env.JOB_LEASE_SECONDS) lease = env.JOB_LEASE_SECONDS;
  const leaseSeconds = Number(lease ?? DEFAULT_LEASE_SECONDS);
  return {
    crons,
    leaseSeconds: Number.isInteger(leaseSeconds) && leaseSeconds > 0 ? leaseSeconds : 30,
  };
}

const FIELDS = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  {
    name: "month",
    min: 1,
    max: 12,
    names: ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"],
  },
  // Numbers are left out on purpose: Cloudflare counts days of the week 1–7 from Sunday,
  // classic cron 0–6; names mean the same to both.
  { name: "day of week", min: 0, max: 6, names: ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"] },
];

function fieldValue(text, field) {
  const upper = text.toUpperCase();
  if (field.names?.includes(upper)) return field.names.indexOf(upper) + field.min;
  if (field.name !== "day of week" && /^\d+$/.test(text)) return Number(text);
  return Number.NaN;
}

function rangeOf(field) {
  if (field.name === "day of week") return "SUN–SAT, by name";
  const numbers = `${field.min}–${field.max}`;
  return field.names ? `${numbers}, or ${field.names[0]}–${field.names.at(-1)}` : numbers;
}

/** The values one field of a cron expression allows, as a set; throws on what it cannot read. */
function parseField(text, field) {
  const allowed = new Set();
  for (const part of text.split(",")) {
    const match = /^(\*|[^-/]+(?:-[^-/]+)?)(?:\/(\d+))?$/.exec(part);
    if (!match) throw new Error(`cannot read the ${field.name} "${part}"`);
    const step = match[2] ? Number(match[2]) : 1;
    let [from, to] = [field.min, field.max];
    if (match[1] !== "*") {
      const [a, b] = match[1].split("-");
      from = fieldValue(a, field);
      to = b === undefined ? (match[2] ? field.max : from) : fieldValue(b, field);
    }
    if (!(from >= field.min && to <= field.max && from <= to && step > 0)) {
      throw new Error(`cannot read the ${field.name} "${part}" (${rangeOf(field)})`);
    }
    for (let v = from; v <= to; v += step) allowed.add(v);
  }
  return allowed;
}

/** A five-field cron expression (UTC) as a test of a minute. */
export function parseCron(expression) {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) throw new Error(`cron "${expression}": five fields expected`);
  let sets;
  try {
    sets = parts.map((part, i) => parseField(part, FIELDS[i]));
  } catch (err) {
    throw new Error(`cron "${expression}": ${err.message}`);
  }
  const [minutes, hours, days, months, weekdays] = sets;
  const dayRestricted = parts[2] !== "*";
  const weekdayRestricted = parts[4] !== "*";
  return (date) => {
    const day = days.has(date.getUTCDate());
    const weekday = weekdays.has(date.getUTCDay());
    // As cron does: with both day fields restricted, either one matching is enough.
    const dayMatches = dayRestricted && weekdayRestricted ? day || weekday : day && weekday;
    return (
      minutes.has(date.getUTCMinutes()) &&
      hours.has(date.getUTCHours()) &&
      months.has(date.getUTCMonth() + 1) &&
      dayMatches
    );
  };
}

/** The first whole minute after `after` that `expression` fires at. */
export function nextCronTime(expression, after) {
  const matches = parseCron(expression);
  const at = new Date(after);
  at.setUTCSeconds(0, 0);
  for (let i = 0; i < 366 * 24 * 60; i++) {
    at.setUTCMinutes(at.getUTCMinutes() + 1);
    if (matches(at)) return at;
  }
  throw new Error(`cron "${expression}" never fires within a year`);
}

/** Runs the worker's scheduled handler once, as its cron would at `time`. */
export async function runMaintenance(baseUrl, cron, time = Date.now()) {
  const url = new URL("/cdn-cgi/local/scheduled", baseUrl);
  url.searchParams.set("cron", cron);
  url.searchParams.set("time", String(time));
  url.searchParams.set("format", "json");
  const response = await fetch(url, { signal: AbortSignal.timeout(120_000) });
  const result = await response.json().catch(() => ({}));
  if (response.status !== 200 || result.outcome !== "ok") {
    throw new Error(`the scheduled handler answered ${response.status} (${result.outcome ?? "?"})`);
  }
}

/**
 * Fires the worker's cron against a running local stack: now, again once `leaseSeconds` (and
 * two more) have passed, then at every time each of `crons` names. Runs never overlap; a failed
 * run is one line in `log`, and the next one tries again. `stop()` ends the schedule.
 */
export function scheduleMaintenance({ baseUrl, crons, leaseSeconds, log = console.error }) {
  for (const cron of crons) parseCron(cron);
  const cron = crons[0] ?? "";
  const timers = new Set();
  let stopped = false;
  let running = Promise.resolve();

  const fire = (why, expression = cron) => {
    running = running.then(async () => {
      if (stopped) return;
      try {
        await runMaintenance(baseUrl, expression);
      } catch (err) {
        log(`maintenance (${why}) failed: ${err.message}; the next run tries again`);
      }
    });
    return running;
  };
  const after = (ms, action) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!stopped) action();
    }, ms);
    timer.unref?.();
    timers.add(timer);
  };
  const onSchedule = (expression) => {
    const next = nextCronTime(expression, Date.now());
    after(next.getTime() - Date.now(), () => {
      fire(`cron ${expression}`, expression);
      onSchedule(expression);
    });
  };

  const first = fire("start");
  after((leaseSeconds + 2) * 1000, () => fire("leases of the last run ran out"));
  for (const expression of crons) onSchedule(expression);
  return {
    /** Settles when the run at start has. */
    first,
    stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}
