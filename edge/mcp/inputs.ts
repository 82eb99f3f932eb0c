// Tool inputs as the REST API has them. What an agent is shown is what the REST API's OpenAPI
// document says of the same schema/ zod schemas (their descriptions and formats), written by
// the same generator (@hono/zod-openapi's, which writes /v1/openapi.json); what a call is
// checked with is those zod schemas. No constraint is written twice, and MCP needs nothing of
// the route tree (test/edge/mcp.test.ts checks the two documents agree).
import { OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import { type ZodObject, type ZodType, z } from "zod";
import { IdempotencyHeadersSchema } from "../../schema/api.ts";
import { validationError } from "../validation.ts";

export type JsonSchema = Record<string, unknown>;

export interface ToolInput<T> {
  json: JsonSchema & { type: "object" };
  parse(args: Record<string, unknown>): T;
}

type RequestParts = NonNullable<RouteConfig["request"]>;
type Parameter = { name: string; in: string; description?: string; schema?: JsonSchema };

/** The document of one operation that takes these request parts, as the REST document writes it. */
function documentOf(request: RequestParts) {
  const router = new OpenAPIHono();
  router.openAPIRegistry.registerPath({ method: "post", path: "/", request, responses: {} });
  const document = router.getOpenAPI31Document({
    openapi: "3.1.0",
    info: { title: "Stills API", version: "1.0.0" },
  });
  return { operation: document.paths?.["/"]?.post, schemas: document.components?.schemas ?? {} };
}

/** A request body schema of the REST API (e.g. CreateJobRequestSchema), as its document has it. */
export function restBody(body: ZodType): JsonSchema {
  const { operation, schemas } = documentOf({
    body: { content: { "application/json": { schema: body } } },
  });
  const content = (operation?.requestBody as { content?: Record<string, { schema?: JsonSchema }> })
    ?.content?.["application/json"]?.schema;
  const ref = typeof content?.$ref === "string" ? content.$ref.split("/").pop() : undefined;
  const schema = ref ? schemas[ref] : content;
  if (!schema) throw new Error("the REST API documents no such body");
  return structuredClone(schema) as JsonSchema;
}

/**
 * One parameter of a REST operation (a query, path or header field of schema/'s zod object), as
 * a JSON Schema property with its description.
 */
export function restParameter(
  part: "query" | "params" | "headers",
  fields: ZodObject,
  name: string,
): JsonSchema {
  const { operation } = documentOf({ [part]: fields });
  const parameter = (operation?.parameters as Parameter[] | undefined)?.find(
    (candidate) => candidate.name === name,
  );
  if (!parameter?.schema) throw new Error(`the REST API documents no ${part} parameter ${name}`);
  const schema = structuredClone(parameter.schema);
  return parameter.description ? { ...schema, description: parameter.description } : schema;
}

/** Checks arguments with a REST schema: a failure names every problem, as REST's answer does. */
export function parseArguments<S extends ZodType>(schema: S, args: unknown): z.output<S> {
  const parsed = schema.safeParse(args);
  if (parsed.success) return parsed.data;
  throw validationError(parsed.error, args);
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

/** Query parameters of a REST operation as a tool's whole input, checked by that query schema. */
export function restQueryInput<S extends ZodObject>(
  query: S,
  names: string[],
): ToolInput<z.output<S>> {
  return {
    json: objectSchema(
      Object.fromEntries(names.map((name) => [name, restParameter("query", query, name)])),
    ),
    parse: (args) => parseArguments(query.strict(), asQueryValues(args)) as z.output<S>,
  };
}

/** The Idempotency-Key header as a tool argument: the REST document's field, said for the tool. */
export function idempotencyKeyArgument(makes: "job" | "batch"): JsonSchema {
  return {
    ...restParameter("headers", IdempotencyHeadersSchema, "idempotency-key"),
    description: `Retrying with the same key and arguments returns the first ${makes} instead of creating (and charging for) another.`,
  };
}
