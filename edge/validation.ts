// A request that fails its schema, as the API answers it: every problem at once, each naming
// its parameter, in plain words. Zod's own wording ("Invalid input: expected number, received
// string", raw patterns) never reaches a client; messages a schema wrote itself (its `error`
// options and the rules between fields) are kept as they are. REST's validation hook and MCP's
// argument checks both answer through validationError.
import type { ZodError } from "zod";
import { listOfChoices } from "../schema/api.ts";
import { detectSource } from "../schema/platform.ts";
import { isServiceSample } from "../schema/samples.ts";
import { checkUrl } from "../schema/url-safety.ts";
import { ApiError, type Problem } from "./errors.ts";

type Issue = ZodError["issues"][number];
type PathKey = PropertyKey;

/** `timestamps[2]`, `skip[0]`, `every`; the whole body is `body`. */
export function paramOf(path: readonly PathKey[]): string {
  let param = "";
  for (const key of path) {
    param += typeof key === "number" ? `[${key}]` : param ? `.${String(key)}` : String(key);
  }
  return param || "body";
}

function valueAt(input: unknown, path: readonly PathKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** How a received value reads in a message: `"gif"`, `2.5`, `a list`, `null`. */
function shown(value: unknown): string {
  if (typeof value === "string") {
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  }
  if (typeof value === "number" || typeof value === "boolean" || value === null) {
    return String(value);
  }
  if (Array.isArray(value)) return "a list";
  return "an object";
}

const EXPECTED: Record<string, string> = {
  string: "text",
  number: "a number",
  int: "a whole number",
  boolean: "true or false",
  object: "an object",
  array: "a list",
};

/** Zod's default messages start like this; anything else was written by our schemas. */
const ZOD_WORDING = /^(Invalid|Too (small|big)|Unrecognized key)/;

function bound(issue: { origin?: string }, limit: unknown, unit: string): string {
  switch (issue.origin) {
    case "array":
    case "set":
      return `${limit} item${limit === 1 ? "" : "s"}`;
    case "string":
      return `${limit} character${limit === 1 ? "" : "s"}`;
    default:
      return `${String(limit)}${unit}`;
  }
}

/** Seconds are the unit of every time field; naming it keeps `every: 0.05` unambiguous. */
function unitOf(param: string): string {
  return /^(every|start|end|timestamps\[\d+\])$/.test(param) ? " (seconds)" : "";
}

function plainWords(issue: Issue, input: unknown): Problem[] {
  const param = paramOf(issue.path);
  const value = valueAt(input, issue.path);
  const got = value === undefined ? "" : `; got ${shown(value)}`;
  const say = (message: string): Problem[] => [{ param, message: `${param} ${message}` }];
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => {
      const name = issue.path.length > 0 ? `${param}.${key}` : key;
      return { param: name, message: `${name} is not a field of this request` };
    });
  }
  if (issue.code === "custom" || !ZOD_WORDING.test(issue.message)) {
    // Our own words: the rules between fields already name what they are about.
    const words = issue.message;
    if (words.startsWith(param)) return [{ param, message: words }];
    // A schema's own `error` option ("must be a language tag …") reads after the name.
    if (/^(must|is) /.test(words)) return say(`${words}${got}`);
    return [{ param, message: `${param}: ${words}` }];
  }
  switch (issue.code) {
    case "invalid_type":
      if (value === undefined) return say("is required");
      if (param === "body") {
        return [{ param, message: `The body must be a JSON object${got}` }];
      }
      return say(`must be ${EXPECTED[issue.expected] ?? issue.expected}${got}`);
    case "too_small": {
      if (issue.origin === "array") {
        return say(
          issue.minimum === 1
            ? "must not be empty"
            : `must have at least ${bound(issue, issue.minimum, "")}`,
        );
      }
      if (issue.origin === "string")
        return say(`must be at least ${bound(issue, issue.minimum, "")} long`);
      const limit = bound(issue, issue.minimum, unitOf(param));
      return say(`must be ${issue.inclusive ? "at least" : "greater than"} ${limit}${got}`);
    }
    case "too_big": {
      const limit = bound(issue, issue.maximum, unitOf(param));
      if (issue.origin === "array") {
        return say(`must have at most ${limit}; got ${Array.isArray(value) ? value.length : 0}`);
      }
      if (issue.origin === "string") return say(`must be at most ${limit} long`);
      return say(`must be ${issue.inclusive ? "at most" : "less than"} ${limit}${got}`);
    }
    case "invalid_value":
      return say(`must be one of ${listOfChoices(issue.values.map(String))}${got}`);
    case "invalid_format":
      return say(`is not in the expected format${got}`);
    case "not_multiple_of":
      return say(`must be a multiple of ${String(issue.divisor)}${got}`);
    case "invalid_union":
      return say(`must be ${unionChoices(issue) ?? "a different kind of value"}${got}`);
    default:
      return say(`is not valid${got}`);
  }
}

/** What each branch of a union wanted, e.g. `true or false` for the query flags. */
function unionChoices(issue: Extract<Issue, { code: "invalid_union" }>): string | null {
  const wanted = new Set<string>();
  for (const branch of issue.errors) {
    const first = branch[0];
    if (!first) continue;
    if (first.code === "invalid_type") wanted.add(EXPECTED[first.expected] ?? first.expected);
    else if (first.code === "invalid_value") for (const v of first.values) wanted.add(String(v));
    else return null;
  }
  // The string spellings of a flag ("true", "1") say nothing the first branch does not.
  if (wanted.has("true or false")) return "true or false";
  return wanted.size > 0 ? listOfChoices([...wanted]) : null;
}

/** Every problem of a failed parse, in plain words. */
export function describeProblems(error: ZodError, input: unknown): Problem[] {
  return error.issues.flatMap((issue) => plainWords(issue, input));
}

/**
 * Links the schema lets through as text are checked here too when the body failed anyway, so
 * a body with a bad link and a bad `every` names both (a body that passes its schema has its
 * links checked by the route: edge/sources.ts, which also asks a link's server when needed).
 */
function linkProblems(
  input: unknown,
  already: Problem[],
  allowPrivate: boolean | undefined,
  serviceOrigin: string | undefined,
): Problem[] {
  if (allowPrivate === undefined || input === null || typeof input !== "object") return [];
  const body = input as Record<string, unknown>;
  const named = new Set(already.map((problem) => problem.param));
  const problems: Problem[] = [];
  if (typeof body.url === "string" && !named.has("url")) {
    const detected = detectSource(body.url);
    // The service's own sample passes the address rules, as edge/sources.ts lets it.
    const sample = detected.ok && serviceOrigin && isServiceSample(detected.url, serviceOrigin);
    const safe = !detected.ok
      ? detected
      : sample
        ? detected
        : checkUrl(detected.url, { allowPrivate });
    if (!safe.ok) problems.push({ param: "url", message: `url: ${safe.reason}` });
  }
  if (typeof body.webhook_url === "string" && !named.has("webhook_url")) {
    const safe = checkUrl(body.webhook_url, { allowPrivate, requireHttps: true });
    if (!safe.ok) problems.push({ param: "webhook_url", message: `webhook_url: ${safe.reason}` });
  }
  return problems;
}

/**
 * The API's answer to a body, query or argument set that failed its schema: InvalidUrl when
 * the first problem is the link, else InvalidRequest; `message` is the first problem and
 * data.errors lists them all. `allowPrivate` (the deployment's setting) turns on the link
 * checks, with the service's own samples (at `serviceOrigin`) let through; without it only the
 * schema's problems are named.
 */
export function validationError(
  error: ZodError,
  input: unknown,
  allowPrivate?: boolean,
  serviceOrigin?: string,
) {
  const found = describeProblems(error, input);
  const problems = [...linkProblems(input, found, allowPrivate, serviceOrigin), ...found];
  // The link first: it is what the caller most needs to fix, and it names the error.
  problems.sort((a, b) => Number(b.param === "url") - Number(a.param === "url"));
  const first = problems[0] ?? { param: null, message: "The request is not valid" };
  const name = first.param === "url" ? "InvalidUrl" : "InvalidRequest";
  const more = problems.length - 1;
  const userMessage =
    name === "InvalidUrl"
      ? "That link doesn't look like a video URL we support."
      : `The request is not valid: ${first.message}${more > 0 ? ` (and ${more} more problem${more === 1 ? "" : "s"})` : ""}.`;
  return new ApiError(name, first.message, { userMessage, problems });
}
