import { newId } from "@agentplane/contracts";

/** A time-sortable id with a connector-area prefix (`mcp_`, `pspec_`), built on the shared generator. */
export function prefixedConnectorId(prefix: string): string {
  const id = newId("cluster");
  return `${prefix}_${id.slice(id.indexOf("_") + 1)}`;
}
