// Tool inputs as the REST API has them. What an agent is shown comes from the REST API's own
// OpenAPI document (generated from schema/'s zod schemas, with their descriptions and
// formats); what a call is checked with is those zod schemas. No constraint is written twice.
import { type ZodType, z } from "zod";
import { v1Router } from "../routes/v1.ts";
import { parseArguments } from "./tool.ts";

export type JsonSchema = Record<string, unknown>;

export interface ToolInput<T> {
  json: JsonSchema & { type: "object" };
  parse(args: Record<string, unknown>): T;
}

type OpenApiDocument = ReturnType<typeof v1Router.getOpenAPI31Document>;
type Parameter = { name: string; in: string; description?: string; schema?: JsonSchema };

let document: OpenApiDocument | undefined;

function restDocument(): OpenApiDocument {
  document ??= v1Router.getOpenAPI31Document({
    openapi: "3.1.0",
    info: { title: "Stills API", version: "1.0.0" },
  });
  return document;
}

/** A named request body schema of the REST API (e.g. "CreateJobRequest"). */
export function restBody(name: string): JsonSchema {
  const schema = restDocument().components?.schemas?.[name];
  if (!schema) throw new Error(`the REST API documents no schema ${name}`);
  return structuredClone(schema) as JsonSchema;
}

/** One parameter of a REST operation, as a JSON Schema property with its description. */
export function restParameter(path: string, method: "get" | "post", name: string): JsonSchema {
  const operation = restDocument().paths?.[path]?.[method];
  const parameter = (operation?.parameters as Parameter[] | undefined)?.find(
    (candidate) => candidate.name === name,
  );
  if (!parameter?.schema) throw new Error(`${method} ${path} documents no parameter ${name}`);
  const schema = structuredClone(parameter.schema);
  return parameter.description ? { ...schema, description: parameter.description } : schema;
}

/** An input object of the given properties; unknown arguments are refused, as REST does. */
export function objectSchema(
  properties: Record<string, JsonSchema>,
  required: string[] = [],
): ToolInput<unknown>["json"] {
  return {
    type: "object",
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

/** An input shown and checked by one zod schema (tool-only inputs such as view_frames'). */
export function zodInput<S extends ZodType>(schema: S): ToolInput<z.output<S>> {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, {
    io: "input",
    target: "draft-7",
  }) as JsonSchema;
  return {
    json: { ...json, type: "object" },
    parse: (args) => parseArguments(schema, args),
  };
}

/**
 * Query parameters arrive as JSON values from an agent but as text over HTTP: numbers are
 * turned into the text REST would receive, so the REST query schema judges them alike.
 */
export function asQueryValues(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(args).map(([name, value]) => [
      name,
      typeof value === "number" ? String(value) : value,
    ]),
  );
}
