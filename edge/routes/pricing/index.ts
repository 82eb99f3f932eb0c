import { createRouter } from "../../app.ts";
import { getPricingHandler } from "./handlers.ts";
import { getPricingRoute } from "./routes.ts";

// edge/mcp/tools/account.ts imports the catalog from here.
export { CATALOG } from "./handlers.ts";

export const pricingRouter = createRouter().openapi(getPricingRoute, getPricingHandler);
