import { badRequest } from "@agentplane/problem-details";
import { FetchRefusedError } from "@agentplane/service-kit/outbound";
import type { AnswerShape } from "../far-answer.ts";
import { connectRemote, listRemoteTools } from "../mcp-client/remote.ts";
import type { OperationFilter } from "../openapi/filter.ts";
import type { ConnectorTool, SkippedOperation } from "../openapi/tools.ts";
import type { ConnectorRuntime } from "./runtime.ts";
import { upstreamProblem } from "./upstream-problem.ts";
import { credentialsOfUrls, withoutUrlCredentials } from "./url-credentials.ts";

export type DiscoverySource =
  | {
      kind: "http";
      specUrl?: string | undefined;
      spec?: string | Record<string, unknown> | undefined;
      baseUrl?: string | undefined;
      include?: OperationFilter | undefined;
      exclude?: OperationFilter | undefined;
    }
  | { kind: "mcp"; url: string; headers: Record<string, string> };

export interface Discovered {
  tools: ConnectorTool[];
  warnings: SkippedOperation[];
  title?: string;
  baseUrl?: string;
}

/**
 * Reads a connector's source: an OpenAPI description (fetched SSRF-safely, or inline) turned into
 * tools, or a remote MCP server's tool list. A source that gives no usable answer is the problem a
 * tool call would get (`upstreamProblem`: 504 on a timeout, 502 on any other failure of the far
 * side, 422 for an address the policy refuses); invalid descriptions are 400 problems. None repeats
 * a credential the source's URLs carry.
 */
export async function discoverSource(runtime: ConnectorRuntime, source: DiscoverySource): Promise<Discovered> {
  try {
    if (source.kind === "mcp") {
      const client = await connectRemote({ url: source.url, headers: source.headers }, runtime.fetcher);
      try {
        const tools = await listRemoteTools(client, runtime.fetcher.timeoutMs);
        const info = client.getServerVersion();
        return { tools, warnings: [], ...(info?.name ? { title: info.name } : {}) };
      } finally {
        await client.close().catch(() => {});
      }
    }
    let text: string | Record<string, unknown>;
    let pointer = "/body/spec";
    let answer: AnswerShape | undefined;
    if (source.specUrl) {
      pointer = "/body/specUrl";
      const fetched = await runtime.fetcher.fetchBody(source.specUrl, {
        headers: { accept: "application/json, application/yaml, text/yaml, */*" },
      });
      text = fetched.body.toString("utf8");
      answer = { contentType: fetched.headers.get("content-type"), bytes: fetched.body.byteLength };
    } else if (source.spec !== undefined) {
      text = source.spec;
    } else {
      throw badRequest("A description is needed", [{ pointer: "/body/specUrl", message: "give specUrl or spec" }]);
    }
    // Validation, dereferencing and tool building take up to about a second of a core: off the event loop.
    const parsed = await runtime.descriptions.parse({
      input: text,
      pointer,
      fetched: answer,
      documentUrl: source.specUrl,
      include: source.include,
      exclude: source.exclude,
    });
    const baseUrl = source.baseUrl ?? parsed.defaultBaseUrl;
    if (baseUrl) {
      checkBaseUrl(
        runtime,
        baseUrl,
        source.baseUrl ? "/body/baseUrl" : pointer,
        source.baseUrl ? undefined : SERVER_URL,
      );
    }
    return {
      tools: parsed.tools,
      warnings: parsed.warnings,
      ...(parsed.title ? { title: parsed.title } : {}),
      ...(baseUrl ? { baseUrl } : {}),
    };
  } catch (error) {
    const known =
      source.kind === "mcp" ? credentialsOfUrls(source.url) : credentialsOfUrls(source.specUrl, source.baseUrl);
    if (error instanceof FetchRefusedError) {
      const what = source.kind === "mcp" ? "The MCP server" : "The description's server";
      throw withoutUrlCredentials(upstreamProblem(error, what), known);
    }
    throw withoutUrlCredentials(error, known);
  }
}

/** What a base URL taken from the description is called in a refusal. */
const SERVER_URL = "The description's server URL (servers[0].url)";

/**
 * A base URL the address policy can never let a tool call reach (loopback, private, metadata
 * literals) or that is no absolute URL is refused when it is given, as AWS endpoint overrides are,
 * not at each call. `what` names it (default: the base URL).
 */
export function checkBaseUrl(runtime: ConnectorRuntime, baseUrl: string, pointer: string, what = "The base URL"): void {
  try {
    runtime.fetcher.checkUrl(baseUrl);
  } catch (error) {
    if (!(error instanceof FetchRefusedError)) throw error;
    throw badRequest(`${what} must be reachable under the outbound address policy: ${error.message}`, [
      { pointer, message: error.message },
    ]);
  }
}
