// How to connect an AI agent to Stills over MCP, shown on the landing page and beside the API
// reference. Written from the MCP server's contract (issue 10): Streamable HTTP at /mcp, the
// same API key headers as REST, OAuth for clients that only speak OAuth.
import { API_KEY_NAME } from "./code-samples.tsx";
import { CopyableCode } from "./copyable-code.tsx";

export function mcpClientConfig(origin: string): string {
  const config = {
    mcpServers: {
      stills: {
        type: "http",
        url: `${origin}/mcp`,
        // Claude Code (and other clients that expand variables) reads the key from the
        // environment; elsewhere, write the key in its place.
        headers: { Authorization: `Bearer \${${API_KEY_NAME}}` },
      },
    },
  };
  return JSON.stringify(config, null, 2);
}

export function McpSetup(props: { origin: string; headingLevel?: 2 | 3; id?: string }) {
  const Heading = props.headingLevel === 3 ? "h3" : "h2";
  const SubHeading = props.headingLevel === 3 ? "h4" : "h3";
  const endpoint = `${props.origin}/mcp`;
  const headingId = `${props.id ?? "mcp"}-heading`;
  return (
    <section class="mcp-setup" id={props.id ?? "mcp"} aria-labelledby={headingId}>
      <Heading id={headingId}>Use Stills from an AI agent (MCP)</Heading>
      <p>
        Stills is a remote MCP server, so an agent can extract frames, follow its jobs, check usage
        and pricing, and look at the frames themselves as images. It spends the same credits and
        follows the same limits as the REST API. To skim a video, an agent calls{" "}
        <code>overview</code> (one contact sheet, times burned in, with the captions and text on
        screen in each tile's span) and then <code>zoom</code> on the parts that matter; every
        answer of both stays under <code>max_tokens</code> (default 15,000) and names what it left
        out with a cursor. See the <a href="/docs/mcp">MCP guide</a>.
      </p>
      <dl class="facts">
        <dt>Endpoint</dt>
        <dd>
          <code>{endpoint}</code>
        </dd>
        <dt>Transport</dt>
        <dd>Streamable HTTP</dd>
        <dt>Authentication</dt>
        <dd>
          Your API key, as <code>Authorization: Bearer …</code> or <code>X-API-Key: …</code>, or
          OAuth for clients that only speak OAuth.
        </dd>
      </dl>
      <SubHeading>Clients that accept a URL and headers</SubHeading>
      <p>
        Add the server to the client's configuration. Put a key from your{" "}
        <a href="/dashboard">dashboard</a> in the environment variable <code>{API_KEY_NAME}</code>{" "}
        (clients that expand variables, such as Claude Code, read it from there), or write the key
        in place of <code>{`\${${API_KEY_NAME}}`}</code>:
      </p>
      <CopyableCode id={`${props.id ?? "mcp"}-config`} label="MCP client configuration">
        {mcpClientConfig(props.origin)}
      </CopyableCode>
      <p>From a terminal, for Claude Code:</p>
      <CopyableCode id={`${props.id ?? "mcp"}-cli`} label="Claude Code command">
        {`claude mcp add --transport http stills ${endpoint} \\\n  --header "Authorization: Bearer $${API_KEY_NAME}"`}
      </CopyableCode>
      <SubHeading>Clients that only speak OAuth</SubHeading>
      <p>
        Custom connectors in chat apps: add <code>{endpoint}</code> with no key. The client finds
        our authorization server on its own and opens Stills in your browser: sign in with the
        one-time code we e-mail you, then approve the connection. The access it gets is bound to
        your account and spends its credits.
      </p>
    </section>
  );
}
