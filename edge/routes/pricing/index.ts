import { createRouter } from "../../app.ts";
import { getPricingHandler } from "./handlers.ts";
import { getPricingRoute } from "./routes.ts";

export const pricingRouter = createRouter().openapi(getPricingRoute, getPricingHandler);
