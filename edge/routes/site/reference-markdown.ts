// The API reference as Markdown (/docs.md), written from the served OpenAPI document, the same
// source /docs renders: every path and method with its parameters, body, responses and
// security, then every named schema with its fields. For models and for reading in a terminal
// (decision 0312); nothing here knows a route by name.

interface Schema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  required?: string[];
  description?: string;
  nullable?: boolean;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Schema;
}

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  responses?: Record<
    string,
    { description?: string; content?: Record<string, { schema?: Schema }> }
  >;
}

export interface OpenApiDocumentLike {
  info: { title: string; version: string; description?: string };
  servers?: { url: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  components?: {
    schemas?: Record<string, Schema>;
    securitySchemes?: Record<
      string,
      { type: string; scheme?: string; name?: string; in?: string; description?: string }
    >;
  };
}

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

/** The document as one Markdown page. */
export function referenceMarkdown(doc: OpenApiDocumentLike, documentUrl: string): string {
  const base = doc.servers?.[0]?.url ?? "";
  const lines: string[] = [
    `# ${doc.info.title} reference`,
    "",
    `${doc.info.description ?? ""} Version ${doc.info.version}. Base URL: \`${base}\` (every path below is relative to it). The same content as OpenAPI 3.1: ${documentUrl}.`,
    "",
  ];
  const schemes = Object.entries(doc.components?.securitySchemes ?? {});
  if (schemes.length > 0) {
    lines.push("## Authentication", "");
    for (const [name, scheme] of schemes) {
      const how =
        scheme.type === "http"
          ? `HTTP ${scheme.scheme ?? ""} authentication`
          : `API key in the ${scheme.in ?? "header"} \`${scheme.name ?? name}\``;
      lines.push(
        `- \`${name}\`: ${how}.${scheme.description ? ` ${cell(scheme.description)}` : ""}`,
      );
    }
    lines.push("");
  }
  lines.push("## Endpoints", "");
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const operation = operations[method];
      if (operation) lines.push(...operationLines(method, path, operation));
    }
  }
  const schemas = Object.entries(doc.components?.schemas ?? {});
  if (schemas.length > 0) {
    lines.push("## Schemas", "");
    for (const [name, schema] of schemas) lines.push(...schemaLines(name, schema));
  }
  return `${lines
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trimEnd()}\n`;
}

function operationLines(method: string, path: string, op: Operation): string[] {
  const lines = [`### ${method.toUpperCase()} ${path}`, ""];
  if (op.summary) lines.push(`${op.summary}${op.summary.endsWith(".") ? "" : "."}`, "");
  const facts = [
    op.operationId ? `operationId \`${op.operationId}\`` : null,
    op.tags?.length ? `tags ${op.tags.join(", ")}` : null,
    op.security === undefined || op.security.length === 0
      ? "no authentication"
      : `authentication: ${op.security.map((s) => Object.keys(s).join(" + ")).join(" or ")}`,
  ].filter((fact): fact is string => fact !== null);
  lines.push(`${facts.join("; ")}.`, "");
  if (op.description && op.description !== op.summary) lines.push(op.description, "");
  const parameters = op.parameters ?? [];
  if (parameters.length > 0) {
    lines.push(
      "Parameters:",
      "",
      "| name | in | type | required | description |",
      "|---|---|---|---|---|",
    );
    for (const p of parameters) {
      lines.push(
        `| \`${p.name}\` | ${p.in} | ${cell(typeOf(p.schema))} | ${p.required ? "yes" : "no"} | ${cell(describe({ ...p.schema, description: p.description ?? p.schema?.description }))} |`,
      );
    }
    lines.push("");
  }
  for (const [type, content] of Object.entries(op.requestBody?.content ?? {})) {
    lines.push(
      `Request body (${type}${op.requestBody?.required ? ", required" : ""}): ${typeOf(content.schema)}.`,
      "",
    );
    if (content.schema && !content.schema.$ref) lines.push(...fieldTable(content.schema));
  }
  const responses = Object.entries(op.responses ?? {});
  if (responses.length > 0) {
    lines.push("Responses:", "");
    for (const [status, response] of responses) {
      const bodies = Object.entries(response.content ?? {}).map(
        ([type, content]) => `${typeOf(content.schema)} (${type})`,
      );
      lines.push(
        `- \`${status}\`: ${cell(response.description ?? "")}${bodies.length ? ` — ${bodies.join(", ")}` : ""}`,
      );
    }
    lines.push("");
  }
  return lines;
}

function schemaLines(name: string, schema: Schema): string[] {
  const lines = [`### ${name}`, ""];
  if (schema.description) lines.push(schema.description, "");
  if (schema.properties) lines.push(...fieldTable(schema));
  else lines.push(`Type: ${typeOf(schema)}.`, "");
  return lines;
}

function fieldTable(schema: Schema): string[] {
  const properties = Object.entries(schema.properties ?? {});
  if (properties.length === 0) return [];
  const required = new Set(schema.required ?? []);
  const lines = ["| field | type | required | description |", "|---|---|---|---|"];
  for (const [field, property] of properties) {
    lines.push(
      `| \`${field}\` | ${cell(typeOf(property))} | ${required.has(field) ? "yes" : "no"} | ${cell(describe(property))} |`,
    );
  }
  lines.push("");
  return lines;
}

/** A field's description with its bounds and default, as the document states them. */
function describe(schema: Schema): string {
  const bounds = [
    schema.minimum !== undefined ? `≥ ${schema.minimum}` : null,
    schema.exclusiveMinimum !== undefined ? `> ${schema.exclusiveMinimum}` : null,
    schema.maximum !== undefined ? `≤ ${schema.maximum}` : null,
    schema.minItems !== undefined ? `at least ${schema.minItems} items` : null,
    schema.maxItems !== undefined ? `at most ${schema.maxItems} items` : null,
    schema.maxLength !== undefined ? `at most ${schema.maxLength} characters` : null,
    schema.default !== undefined ? `default ${JSON.stringify(schema.default)}` : null,
  ].filter((bound): bound is string => bound !== null);
  const text = schema.description ?? nestedDescription(schema) ?? "";
  return [text, bounds.length ? `(${bounds.join(", ")})` : ""].filter(Boolean).join(" ");
}

function nestedDescription(schema: Schema): string | undefined {
  for (const part of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) {
    if (part.description) return part.description;
  }
  return undefined;
}

/** A schema's type in one line: `Job`, `string`, `"jpg" | "png"`, `Frame[]`, `… | null`. */
export function typeOf(schema: Schema | undefined): string {
  if (!schema) return "any";
  if (schema.$ref) return schema.$ref.split("/").pop() ?? "object";
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(" | ");
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return [...new Set(union.map(typeOf))].join(" | ");
  if (schema.allOf) return schema.allOf.map(typeOf).join(" & ");
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const named = types.map((type) => {
    if (type === "array") return `${typeOf(schema.items)}[]`;
    if (type === "string" && schema.format) return `string (${schema.format})`;
    return type;
  });
  if (named.length === 0) return schema.properties ? "object" : "any";
  return `${named.join(" | ")}${schema.nullable ? " | null" : ""}`;
}

/** Text safe inside a table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").replace(/\|/g, "\\|");
}
