import { z } from "@hono/zod-openapi";
import { PRINCIPAL_TYPES } from "../common/identity.ts";

export const AUDIT_RECORDED = "audit.recorded";

export const AuditOutcomeSchema = z.enum(["success", "denied", "error"]);
export type AuditOutcome = z.infer<typeof AuditOutcomeSchema>;

/** One audit record as producers publish it (gateway request records and service domain records). */
export const AuditRecordedSchema = z.object({
  /** Unique per event; consumers store each id once. */
  id: z.string(),
  orgId: z.string().optional(),
  projectId: z.string().optional(),
  principal: z.object({
    type: z.enum([...PRINCIPAL_TYPES, "anonymous"]),
    id: z.string().optional(),
    displayName: z.string().optional(),
  }),
  /** The operation id for request records (`createProject`), a dotted name for domain records (`member.role_changed`). */
  action: z.string(),
  /** `request` from the gateway, `domain` from a service. */
  source: z.enum(["request", "domain"]).default("request"),
  targetType: z.string().optional(),
  targetId: z.string().optional(),
  /** Every id taken from the request path. */
  targets: z.record(z.string(), z.string()).default({}),
  outcome: AuditOutcomeSchema,
  status: z.number().int().optional(),
  requestId: z.string().optional(),
  ip: z.string().optional(),
  userAgent: z.string().optional(),
  method: z.string().optional(),
  path: z.string().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
  time: z.string(),
});
export type AuditRecorded = z.infer<typeof AuditRecordedSchema>;

/** The actor of an audit record; without a principal the request was anonymous. */
export function auditPrincipal(
  principal: { type: AuditRecorded["principal"]["type"]; id: string; displayName?: string | undefined } | undefined,
): AuditRecorded["principal"] {
  if (!principal) return { type: "anonymous" };
  return {
    type: principal.type,
    id: principal.id,
    ...(principal.displayName ? { displayName: principal.displayName } : {}),
  };
}
