// The shapes of the /v1 operations the console calls, from the contracts the OpenAPI document is
// generated from (type-only: nothing of the server code reaches the bundle).
export type {
  ApiToken,
  AuditRecord,
  BrowserSession,
  Invitation,
  Me,
  Member,
  OpenedSession,
  Organization,
  Project,
} from "@agentplane/contracts";

export interface Page<T> {
  items: T[];
  nextCursor?: string;
}
