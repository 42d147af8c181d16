import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** The SDK's MCP client against an app in process (its `fetch`), with the internal identity header set. */
export async function inProcessMcpClient(
  url: string,
  identity: () => Promise<string>,
  fetchApp: (request: Request) => Promise<Response> | Response,
): Promise<Client> {
  const client = new Client({ name: "in-process-client", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      fetch: async (input, init) => {
        const request = new Request(input, init);
        request.headers.set("x-agentplane-identity", await identity());
        return fetchApp(request);
      },
    }),
  );
  return client;
}
