import { createRouter } from "../../app.ts";
import { getUsageHandler } from "./handlers.ts";
import { getUsageRoute } from "./routes.ts";

export const usageRouter = createRouter().openapi(getUsageRoute, getUsageHandler);
