import { createRouter } from "../../app.ts";
import { getFileHandler } from "./handlers.ts";
import { FILE_PATH } from "./routes.ts";

export const filesRouter = createRouter().get(FILE_PATH, getFileHandler);
