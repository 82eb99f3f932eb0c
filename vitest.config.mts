import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Two projects: the edge runs inside workerd with real D1/R2/Queues/Durable Objects;
// the extractor, the sources and the end-to-end suite run on Node with real ffmpeg.
export default defineConfig(async () => {
  const migrations = await readD1Migrations("schema/migrations");
  return {
    test: {
      projects: [
        {
          plugins: [
            cloudflareTest({
              wrangler: { configPath: "./wrangler.toml" },
              miniflare: {
                bindings: {
                  TEST_MIGRATIONS: migrations,
                  INTERNAL_TOKEN: "test-internal-token",
                  FILE_URL_SECRET: "test-file-url-secret",
                  // Answered by test/edge/support/fake-extractor.ts, never by the network.
                  EXTRACTOR_URL: "http://extractor.test",
                  PUBLIC_BASE_URL: "https://stills.test",
                },
              },
            }),
          ],
          test: {
            name: "edge",
            include: ["test/edge/**/*.test.ts"],
            setupFiles: [
              "test/edge/support/apply-migrations.ts",
              "test/edge/support/fake-extractor.ts",
            ],
          },
        },
        {
          test: {
            name: "node",
            environment: "node",
            include: [
              "test/extractor/**/*.test.ts",
              "test/sources/**/*.test.ts",
              "test/e2e/**/*.test.ts",
              "test/browser/**/*.test.ts",
            ],
            testTimeout: 120_000,
            hookTimeout: 180_000,
            // Two cores: ffmpeg-heavy files one at a time keeps timings sane.
            fileParallelism: false,
          },
        },
      ],
    },
  };
});
