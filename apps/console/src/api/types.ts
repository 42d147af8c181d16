import type { components } from "@agentplane/sdk";

// The shapes of the /v1 operations the console shows, from the SDK's generated types.
type Schemas = components["schemas"];
export type ApiToken = Schemas["ApiToken"];
export type AuditRecord = Schemas["AuditRecord"];
export type BrowserSession = Schemas["BrowserSession"];
export type Credential = Schemas["Credential"];
export type Me = Schemas["Me"];
export type Member = Schemas["Member"];
export type OpenedSession = Schemas["OpenedSession"];
export type Organization = Schemas["Organization"];
export type Project = Schemas["Project"];
export type Sandbox = Schemas["Sandbox"];

export interface Page<T> {
  items: T[];
  nextCursor?: string;
}
