// Production only: the extractor image (extractor/Dockerfile) as a Cloudflare Container.
// edge/dispatch.ts sends jobs to a small pool of these by name; locally the same requests go
// to the Node process at EXTRACTOR_URL instead.

import type { DurableObject } from "cloudflare:workers";
import { Container } from "@cloudflare/containers";

export const EXTRACTOR_PORT = 8788;

export class ExtractorContainer extends Container<Env> {
  override defaultPort = EXTRACTOR_PORT;
  // Long enough to keep a warm instance between jobs of a busy minute.
  override sleepAfter = "10m";

  constructor(ctx: DurableObject["ctx"], env: Env) {
    super(ctx, env);
    this.envVars = {
      EXTRACTOR_HOST: "0.0.0.0",
      EXTRACTOR_PORT: String(EXTRACTOR_PORT),
      INTERNAL_TOKEN: env.INTERNAL_TOKEN,
      STILLS_ALLOW_PRIVATE_NETWORK: "0",
    };
  }
}
