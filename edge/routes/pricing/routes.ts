// GET /v1/pricing: the public catalog of plans, packs and credit rules.
import { createRoute } from "@hono/zod-openapi";
import { PricingSchema } from "../../../schema/api.ts";
import { publicRate } from "../../middleware/auth.ts";
import { errorResponses, jsonResponse, PUBLIC_SECURITY } from "../responses.ts";

export const getPricingRoute = createRoute({
  method: "get",
  path: "/pricing",
  tags: ["Public"],
  operationId: "getPricing",
  summary: "Public plans and credit pricing",
  security: PUBLIC_SECURITY,
  middleware: [publicRate] as const,
  responses: {
    200: jsonResponse(PricingSchema, "The pricing catalog"),
    ...errorResponses(429),
  },
});
