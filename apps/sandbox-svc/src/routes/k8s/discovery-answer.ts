import type { ServiceContext } from "@agentplane/service-kit";
import {
  aggregatedContentType,
  aggregatedDiscovery,
  aggregatedDiscoveryVersion,
} from "../../services/k8s-discovery.ts";

/**
 * The aggregated discovery document when the Accept header asks for it, with the media type kubectl
 * checks (a plain `application/json` answer makes it fall back to the other discovery documents).
 * Either way the answer varies by Accept.
 */
export function aggregatedDiscoveryAnswer(
  c: ServiceContext,
  which: "api" | "apis",
): { body: ReturnType<typeof aggregatedDiscovery>; headers: Record<string, string> } | undefined {
  c.header("vary", "Accept");
  const version = aggregatedDiscoveryVersion(c.req.header("accept"));
  if (!version) return undefined;
  return { body: aggregatedDiscovery(version, which), headers: { "content-type": aggregatedContentType(version) } };
}
