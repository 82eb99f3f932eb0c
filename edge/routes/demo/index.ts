import { createRouter } from "../../app.ts";
import { createDemoHandler, getDemoHandler } from "./handlers.ts";
import { createDemoRoute, getDemoRoute } from "./routes.ts";

export const demoRouter = createRouter()
  .openapi(createDemoRoute, createDemoHandler)
  .openapi(getDemoRoute, getDemoHandler);
