import { newId } from "@agentplane/contracts";

/**
 * A time-sortable id with a prefix of this service's own kinds (tunnel tokens, AWS connections),
 * built on the shared generator so it sorts and reads like every other id.
 */
export function prefixedId(prefix: string): string {
  const id = newId("cluster");
  return `${prefix}_${id.slice(id.indexOf("_") + 1)}`;
}
