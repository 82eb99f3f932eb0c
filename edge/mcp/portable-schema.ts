// Tool schemas in the JSON Schema spelling every MCP client reads. Some clients map tool
// schemas onto a dialect with one `type` per schema (Gemini's function declarations, for one)
// and would drop a nullable field written `type: ["string", "null"]`; free-form values are
// spelled out as `true` rather than an empty schema. Same meaning, read by all.

type Json = unknown;

export function portableSchema<T extends Json>(schema: T): T {
  return rewrite(schema) as T;
}

function rewrite(node: Json): Json {
  if (Array.isArray(node)) return node.map(rewrite);
  if (node === null || typeof node !== "object") return node;
  const entries = Object.entries(node as Record<string, Json>);
  // An empty schema accepts anything: say so plainly.
  if (entries.length === 0) return true;
  const out: Record<string, Json> = {};
  for (const [key, value] of entries) {
    if (SCHEMA_MAPS.has(key) && value !== null && typeof value === "object") {
      out[key] = Object.fromEntries(
        Object.entries(value as Record<string, Json>).map(([name, sub]) => [name, rewrite(sub)]),
      );
    } else {
      out[key] = SCHEMAS.has(key) ? rewrite(value) : value;
    }
  }
  if (Array.isArray(out.type)) return splitTypes(out);
  return out;
}

/** Keywords whose value is a schema or a list of schemas. */
const SCHEMAS = new Set([
  "additionalProperties",
  "propertyNames",
  "items",
  "anyOf",
  "oneOf",
  "allOf",
  "not",
]);
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "definitions", "$defs"]);

/** `{type: [A, B], …rest}` → `{anyOf: [{type: A, …rest}, {type: B}]}`, null kept bare. */
function splitTypes(schema: Record<string, Json>): Json {
  const { type, description, default: fallback, ...rest } = schema;
  const branches = (type as string[]).map((one) =>
    one === "null" ? { type: "null" } : { ...rest, type: one },
  );
  return {
    ...(description !== undefined ? { description } : {}),
    ...(fallback !== undefined ? { default: fallback } : {}),
    anyOf: branches,
  };
}
