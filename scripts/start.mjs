// `npm start`: the whole stack in one command. Ctrl-C stops it; its state (D1, R2, queues)
// stays in .wrangler/state for the next start.
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
  for (const [name, child] of Object.entries(stack.children)) {
    child.on("exit", async (code) => {
      console.error(`${name} exited (code ${code}); stopping the stack`);
      await stack.stop();
      process.exit(1);
    });
  }
} catch (err) {
  console.error(err.message);
  process.exit(1);
}
