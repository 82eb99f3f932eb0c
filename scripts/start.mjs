// `npm start`: the whole stack in one command. Ctrl-C stops it; its state (D1, R2, queues)
// stays in .wrangler/state for the next start. An extractor that dies is started again by
// the stack itself (scripts/lib/stack.mjs), as the container platform does in production;
// only the edge ending stops everything.
import { startStack } from "./lib/stack.mjs";

try {
  const stack = await startStack();
  console.log(
    `\nStills API listening on ${stack.apiUrl}  (docs: ${stack.baseUrl}/docs, extractor: ${stack.extractorUrl})`,
  );
  const shutdown = async () => {
    await stack.stop();
    process.exit(0);
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
  stack.children.edge.on("exit", async (code, signal) => {
    console.error(
      `the edge (wrangler dev) exited (${signal ?? `code ${code}`}); stopping the stack`,
    );
    await stack.stop();
    process.exit(1);
  });
} catch (err) {
  console.error(err.message);
  process.exit(1);
}
