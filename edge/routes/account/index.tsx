// Sign-in by e-mail code and the developer dashboard (issue 8). Being built.
import { createRouter } from "../../app.ts";

export const accountRouter = createRouter();
