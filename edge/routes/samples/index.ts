import { createRouter } from "../../app.ts";
import { getSampleHandler } from "./handlers.ts";
import { SAMPLE_PATH } from "./routes.ts";

export const samplesRouter = createRouter().get(SAMPLE_PATH, getSampleHandler);
