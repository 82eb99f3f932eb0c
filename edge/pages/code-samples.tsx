// Code samples of an API call in curl, Node (fetch) and Python (the standard library), shown as
// language tabs with a copy button on every block. Every sample names the key STILLS_API_KEY
// (an environment variable, or the key itself right after it is created) and, unless told
// otherwise, asks for frames of the service's own sample video, so the first copied command
// works, with nothing to install; a line under them points to the SDKs guide (/docs/sdks) for
// those who want a client. Pages using it need nothing else: the tabs and copy buttons come from site.client.js,
// which every page loads.
import { sampleUrl } from "../../schema/samples.ts";
import { CopyableCode } from "./copyable-code.tsx";

/** The placeholder every example uses for an API key: an environment variable's name. */
export const API_KEY_NAME = "STILLS_API_KEY";

export type SampleLanguage = "curl" | "node" | "python";

export interface CodeSample {
  language: SampleLanguage;
  /** The tab's name. */
  label: string;
  code: string;
}

export interface JobSampleOptions {
  /** The public origin, e.g. "https://api.stills.dev". */
  origin: string;
  /** A key to fill in (right after it is created); otherwise read from STILLS_API_KEY. */
  apiKey?: string;
  /** The job to create; the default is six frames of the sample video. */
  body?: Record<string, unknown>;
}

/** The body of the default example: six evenly spaced frames of the sample video. */
export function sampleJobBody(origin: string): Record<string, unknown> {
  return { url: sampleUrl(origin), count: 6 };
}

/**
 * `POST /v1/jobs?wait=true` in each language. Each prints the job as JSON: its frames, each
 * with a timestamp and a signed URL.
 */
export function jobSamples(options: JobSampleOptions): CodeSample[] {
  const endpoint = `${options.origin}/v1/jobs?wait=true`;
  const body = options.body ?? sampleJobBody(options.origin);
  const json = JSON.stringify(body);
  const key = options.apiKey;
  const shellBody = json.replaceAll("'", `'"'"'`);
  const curl = [
    ...(key ? [`export ${API_KEY_NAME}="${key}"`] : []),
    `curl -s -X POST "${endpoint}" \\`,
    `  -H "Authorization: Bearer $${API_KEY_NAME}" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d '${shellBody}'`,
  ].join("\n");
  const node = [
    "// Node 18 or later, as an ES module (e.g. saved as stills.mjs): fetch and top-level await.",
    key
      ? `const ${API_KEY_NAME} = "${key}"; // in your code, read it from the environment`
      : `const ${API_KEY_NAME} = process.env.${API_KEY_NAME};`,
    "",
    `const response = await fetch("${endpoint}", {`,
    `  method: "POST",`,
    "  headers: {",
    `    Authorization: \`Bearer \${${API_KEY_NAME}}\`,`,
    `    "Content-Type": "application/json",`,
    "  },",
    `  body: JSON.stringify(${JSON.stringify(body, null, 2).replaceAll("\n", "\n  ")}),`,
    "});",
    "const job = await response.json();",
    "console.log(JSON.stringify(job, null, 2));",
  ].join("\n");
  const python = [
    "# Python 3, standard library only.",
    "import json",
    ...(key ? [] : ["import os"]),
    "import urllib.request",
    "",
    key
      ? `${API_KEY_NAME} = "${key}"  # in your code, read it from the environment`
      : `${API_KEY_NAME} = os.environ["${API_KEY_NAME}"]`,
    "",
    "request = urllib.request.Request(",
    `    "${endpoint}",`,
    `    data=json.dumps(${pythonLiteral(body)}).encode(),`,
    "    headers={",
    `        "Authorization": f"Bearer {${API_KEY_NAME}}",`,
    `        "Content-Type": "application/json",`,
    "    },",
    `    method="POST",`,
    ")",
    "with urllib.request.urlopen(request) as response:",
    "    job = json.load(response)",
    "print(json.dumps(job, indent=2))",
  ].join("\n");
  return [
    { language: "curl", label: "curl", code: curl },
    { language: "node", label: "Node", code: node },
    { language: "python", label: "Python", code: python },
  ];
}

/** A JSON value as a Python literal (true → True, null → None). */
function pythonLiteral(value: unknown): string {
  if (value === null) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (Array.isArray(value)) return `[${value.map(pythonLiteral).join(", ")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>);
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}: ${pythonLiteral(v)}`).join(", ")}}`;
  }
  return JSON.stringify(value);
}

/**
 * The samples as tabs. Without scripts every block shows, each under its language's name; with
 * them, one tab at a time (the reader's last choice). `id` must be unique on the page.
 */
export function CodeSamples(props: { id: string; samples: CodeSample[]; label?: string }) {
  const what = props.label ?? "Code sample";
  return (
    <div class="code-tabs" data-code-tabs>
      <div class="code-tablist" role="tablist" aria-label={`${what}: language`} hidden>
        {props.samples.map((sample, i) => (
          <button
            type="button"
            role="tab"
            id={`${props.id}-tab-${sample.language}`}
            aria-controls={`${props.id}-${sample.language}`}
            aria-selected={i === 0 ? "true" : "false"}
            tabindex={i === 0 ? 0 : -1}
            data-language={sample.language}
          >
            {sample.label}
          </button>
        ))}
      </div>
      {props.samples.map((sample) => (
        <div class="code-panel" id={`${props.id}-${sample.language}`}>
          <p class="code-panel-name">{sample.label}</p>
          <CopyableCode
            id={`${props.id}-${sample.language}-code`}
            label={`${sample.label} ${what}`}
          >
            {sample.code}
          </CopyableCode>
        </div>
      ))}
      <p class="code-tabs-more">
        With a client library or from a terminal:{" "}
        <a href="/docs/sdks">the SDKs and the stills command</a>.
      </p>
    </div>
  );
}
